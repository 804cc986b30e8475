// Package reproscript writes a standalone reproducer for a failing scenario: a POSIX shell script
// a maintainer runs without sandcheck. It needs root, iproute2, python3 and the sandbox under
// test, and nothing of sandcheck's: it stands up the fixture hosts itself (two network namespaces
// of its own, one for the sandbox's host, one for the fixture), gives the sandbox the exact
// settings and command line the trial used, sends the same request byte for byte, prints what
// the fixture logged, and exits 1 when the bug shows, 0 when it does not, 2 when it cannot tell.
//
// What it covers so far: the bypass family's requests through a proxy (HTTP, CONNECT, SOCKS5) on
// srt, whose command line is its settings file and the command, on Codex, whose command line
// carries its policy (codex.go), and on Claude Code (claude.go); the git, fs-interplay and
// privilege classes on srt, and the hook a new repository gets, whose scripts show the impact
// itself (git.go, fs.go, fswrite); Claude Code's configurations and its start-up race, a rate
// over many runs (claudescript); and, on sandboxes whose command line carries the command,
// writes outside the writable paths (fswrite) and host unix sockets (unixscript). Everything
// else says why it has no reproducer yet.
package reproscript

import (
	"cmp"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/fswrite"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
	"github.com/sandcheck/sandcheck/reports/reproscript/unixscript"
	"github.com/sandcheck/sandcheck/wire/journal"
)

//go:embed request.py
var requestPy string

// FileName is the script's name for a scenario: its id with slashes as dashes.
func FileName(scenario string) string { return strings.ReplaceAll(scenario, "/", "-") + ".sh" }

// evidence is what a reproducer needs of a bypass trial's evidence.
type evidence struct {
	Target        string          `json:"target"`
	TargetVersion string          `json:"target_version"`
	Fault         string          `json:"fault"`
	Settings      json.RawMessage `json:"settings"`
	Names         []struct {
		Name, Role string
	} `json:"names"`
	Cases []struct {
		Name      string  `json:"name"`
		AllowedOK bool    `json:"allowed_ok"`
		Control   bool    `json:"control"`
		Raw       request `json:"raw"`
	} `json:"cases"`
	Run struct {
		Argv []string `json:"argv"`
	} `json:"run"`
	Dir string          `json:"dir"` // the run's working directory
	raw json.RawMessage // the whole, for a sandbox's own reader (Claude Code's)
}

// proxyRun is how a script starts the sandbox of a proxy request's trial (srt's, Codex's).
type proxyRun interface {
	Check() error
	Open(b *strings.Builder, scenario, why, header, prelude string) error
}

// request is a crafted request as the trial recorded it (the fields a script reads), and the
// name of every field it set.
type request struct {
	Via, Host, Method, Tamper, Addr string
	Port                            int
	ATYP                            byte `json:"atyp"`
	NoAuth                          bool `json:"no_auth"`
	Pipelined                       bool
	fields                          []string
}

func (r *request) UnmarshalJSON(b []byte) error {
	type plain request
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	r.fields = slices.Sorted(maps.Keys(m))
	return nil
}

// spoken are the request fields a script sends as the trial did: a request that sets any other
// is one the script would send differently, so it gets none.
var spoken = map[string]bool{"id": true, "via": true, "host": true, "port": true, "method": true, "no_auth": true}

// unspoken names the fields of r a script cannot send as the trial did.
func (r request) unspoken() []string {
	var out []string
	for _, f := range r.fields {
		if !spoken[f] {
			out = append(out, f)
		}
	}
	return out
}

// find is the evidence, of a record's, that holds scenario: the record's own, or one of those
// keyed by scenario when the trial ran several sessions.
func find(rec model.Record, scenario string) (*evidence, error) {
	if len(rec.Evidence) == 0 {
		return nil, fmt.Errorf("the trial kept no evidence")
	}
	var one evidence
	if err := json.Unmarshal(rec.Evidence, &one); err == nil && len(one.Cases) > 0 {
		if one.has(scenario) {
			one.raw = rec.Evidence
			return &one, nil
		}
		return nil, fmt.Errorf("the trial's evidence has no case %s", scenario)
	}
	var many map[string]json.RawMessage
	if err := json.Unmarshal(rec.Evidence, &many); err != nil {
		return nil, fmt.Errorf("read the trial's evidence: %w", err)
	}
	for _, raw := range many {
		var e evidence
		if json.Unmarshal(raw, &e) == nil && e.has(scenario) {
			e.raw = raw
			return &e, nil
		}
	}
	return nil, fmt.Errorf("no case %s in the trial's evidence", scenario)
}

func (e *evidence) has(scenario string) bool {
	for _, c := range e.Cases {
		if c.Name == scenario {
			return true
		}
	}
	return false
}

// Script is the reproducer of scenario as the trial rec ran it; the error says why there is none.
func Script(rec model.Record, scenario, why string) (string, error) {
	if strings.HasPrefix(scenario, "claude-settings/") {
		return claudescript.Script(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "network/channel/") {
		return claudescript.RaceScript(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "filesystem/") {
		return fswrite.Script(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "bypass/git/") {
		return gitScript(rec, scenario, why)
	}
	if strings.HasPrefix(scenario, "bypass/fs-interplay/") || strings.HasPrefix(scenario, "bypass/privilege/") || strings.HasPrefix(scenario, "bypass/globs/") {
		return fsScript(rec, scenario, why)
	}
	if !strings.HasPrefix(scenario, "bypass/") {
		return "", fmt.Errorf("standalone reproducers cover the bypass family's proxy requests and Claude Code's configurations so far, not %s", scenario)
	}
	e, err := find(rec, scenario)
	if err != nil {
		return "", err
	}
	for _, c := range e.Cases {
		if c.Name == scenario && c.Raw.Via == "unix" {
			return unixscript.Script(unixscript.Trial{Target: e.Target, Version: e.TargetVersion, Fault: e.Fault,
				Argv: e.Run.Argv, Dir: e.Dir, Socket: c.Raw.Addr}, scenario, why)
		}
	}
	var run proxyRun = srtrun.Run{Target: e.Target, Version: e.TargetVersion, Fault: e.Fault, Settings: e.Settings, Argv: e.Run.Argv}
	send := sendSRT
	switch e.Target {
	case "codex":
		run, send = codexRun{e.TargetVersion, e.Fault, e.Run.Argv, e.Dir}, sendCodex
	case "claude-code":
		run, send = &claudeRun{raw: e.raw, dir: e.Dir}, "" // its open writes send()
	}
	if err := run.Check(); err != nil {
		return "", err
	}
	var control, kase *caseOf
	for i := range e.Cases {
		c := &e.Cases[i]
		if c.Name == scenario {
			kase = &caseOf{via: c.Raw.Via, host: c.Raw.Host, port: c.Raw.Port, method: c.Raw.Method, allowedOK: c.AllowedOK, noAuth: c.Raw.NoAuth}
			switch {
			case c.Raw.Tamper != "" || c.Raw.Pipelined || c.Raw.ATYP != 0 && c.Raw.ATYP != 3:
				return "", fmt.Errorf("%s sends a request the reproducer does not speak yet (tampering, pipelining or an address type)", scenario)
			case c.Raw.Via != "http" && c.Raw.Via != "connect" && c.Raw.Via != "socks":
				return "", fmt.Errorf("%s goes %s, not through the proxy: the reproducer sends proxy requests only so far", scenario, c.Raw.Via)
			case len(c.Raw.unspoken()) > 0:
				return "", fmt.Errorf("%s sends a request the reproducer does not speak yet (%s)", scenario, strings.Join(c.Raw.unspoken(), ", "))
			}
		}
	}
	for i := range e.Cases {
		if c := &e.Cases[i]; c.Name == "" && c.Raw.Via == kase.via {
			control = &caseOf{via: c.Raw.Via, host: c.Raw.Host, port: c.Raw.Port}
		}
	}
	if control == nil {
		control = &caseOf{via: kase.via, host: "allowed." + parts.Domain, port: 80}
	}
	var b strings.Builder
	if err := run.Open(&b, scenario, why, parts.Header, parts.Prelude); err != nil {
		return "", err
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("cat > \"$w/serve.py\" <<'PY'\n%sPY\n", parts.ServePy)
	w("cat > \"$w/request.py\" <<'PY'\n%sPY\n", requestPy)
	w("{\n  echo '127.0.0.1 localhost'\n  echo '::1 localhost'\n")
	for _, n := range hostNames(e) {
		w("  echo \"%s %s\"\n", addrOf(n.role), n.name)
	}
	w("} > \"$w/hosts\"\n")
	b.WriteString(parts.Fixture + send)
	w("echo \"== control: the allowed host, the same way (%s)\"\n", control.via)
	w("send %s %s %d GET /repro/control auth\n", control.via, hex.EncodeToString([]byte(control.host)), control.port)
	w("if ! grep -q '^allowed@' \"$w/log\"; then echo 'could not tell: the allowed host was not reached either (the sandbox or the fixture did not work)'; exit 2; fi\n")
	w(": > \"$w/log\"\n")
	w("echo \"== the case: %s\"\n", parts.ShellSafe(scenario))
	w("send %s %s %d %s /repro/case %s\n", kase.via, hex.EncodeToString([]byte(kase.host)), kase.port, cmp.Or(kase.method, "GET"), kase.auth())
	pattern := "."
	if kase.allowedOK {
		pattern = "^[^a]\\|^allowed@[^8]"
	}
	w("sleep 0.2\necho '-- the fixture logged:'; cat \"$w/log\"\n")
	w("if grep -q '%s' \"$w/log\"; then echo 'BUG: the request reached a fixture host the policy forbids'; exit 1; fi\n", pattern)
	w("echo 'no bug: refused, and the allowed host was reached the same way'\nexit 0\n")
	return b.String(), nil
}

type caseOf struct {
	via, host, method string
	port              int
	allowedOK, noAuth bool
}

// auth is the request's credentials argument (request.py's AUTH).
func (c *caseOf) auth() string {
	if c.noAuth {
		return "noauth"
	}
	return "auth"
}

type hostName struct{ name, role string }

// hostNames are the names the fixture answers: the allowed and denied hosts and the session's
// own, each by its role.
func hostNames(e *evidence) []hostName {
	seen := map[string]bool{}
	out := []hostName{{"allowed." + parts.Domain, model.RoleAllowed}, {"denied." + parts.Domain, model.RoleDenied}}
	for _, n := range e.Names {
		if !seen[n.Name] && validName.MatchString(n.Name) {
			seen[n.Name] = true
			out = append(out, hostName{n.Name, n.Role})
		}
	}
	sort.SliceStable(out[2:], func(i, j int) bool { return out[2+i].name < out[2+j].name })
	return out
}

var validName = regexp.MustCompile(`^[A-Za-z0-9.-]+$`)

// addrOf is where a role's host listens in the script's fixture ($b is its /24).
func addrOf(role string) string {
	switch role {
	case model.RoleAllowed:
		return "$b.2"
	case model.RoleLoopback:
		return "127.0.0.1"
	case model.RoleMetadata:
		return "169.254.169.254"
	case model.RoleSelf:
		return "$b.1"
	}
	return "$b.3" // denied, and any name the policy must refuse
}

// Sandbox is the command a scenario's reproducer runs as SANDBOX: claude for Claude Code's own
// configurations, else the target's own (srt, bwrap, firejail, codex; srt when unknown).
func Sandbox(scenario, target string) string {
	switch {
	case strings.HasPrefix(scenario, "claude-settings/"):
		return "claude"
	case target == "":
		return "srt"
	}
	return target
}

// Written is what WriteAll did for one failing scenario: the script's path, or why none.
type Written struct {
	Scenario, Path, Why string
	Target              string // the target of the trial the script came from
}

// WriteAll writes, into dir, a reproducer for every scenario that failed in the journal at path
// (known findings included: a maintainer needs those most), from the first trial that showed it
// with its evidence kept; each scenario's entry says where, or why it has none.
func WriteAll(path, dir string) ([]Written, error) {
	done := map[string]*Written{}
	var order []string
	_, err := journal.Scan(path, func(rec model.Record) error {
		for _, s := range rec.Scenarios {
			if !s.Failed() {
				continue
			}
			w := done[s.Name]
			if w == nil {
				w = &Written{Scenario: s.Name}
				done[s.Name] = w
				order = append(order, s.Name)
			}
			if w.Path != "" {
				continue
			}
			text, err := Script(rec, s.Name, s.Hint)
			if err != nil {
				w.Why = err.Error()
				continue
			}
			w.Path, w.Why, w.Target = filepath.Join(dir, FileName(s.Name)), "", rec.Cell.Target
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(w.Path, []byte(text), 0o755); err != nil {
				return fmt.Errorf("write %s: %w", w.Path, err)
			}
		}
		return nil
	})
	out := make([]Written, len(order))
	for i, name := range order {
		out[i] = *done[name]
	}
	return out, err
}

// Report writes the reproducers of a run's failing scenarios into dir (WriteAll) and lists them
// on stdout, each with how to run it or why it has none; nothing when dir is "".
func Report(stdout, stderr io.Writer, journal, dir string) {
	if dir == "" {
		return
	}
	done, err := WriteAll(journal, dir)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck: standalone reproducers: %v\n", err)
	}
	if len(done) == 0 {
		return
	}
	fmt.Fprintf(stdout, "\n## Standalone reproducers\n\nEach needs root and the sandbox (SANDBOX=/path/to/it), and says what else in its header (iproute2 and python3 for a request, git for a repository); exit 1: the bug shows, 0: it does not, 2: cannot tell.\n\n")
	for _, w := range done {
		if w.Path != "" {
			fmt.Fprintf(stdout, "- `%s`: `sudo SANDBOX=$(command -v %s) sh %s`\n", w.Scenario, Sandbox(w.Scenario, w.Target), w.Path)
		} else {
			fmt.Fprintf(stdout, "- `%s`: none: %s\n", w.Scenario, w.Why)
		}
	}
}
