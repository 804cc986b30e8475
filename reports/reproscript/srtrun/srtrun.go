// Package srtrun is how a standalone reproducer runs srt again as a trial ran it: the trial's
// settings in a file of the script's own (its directory in the trial's), and the account.
package srtrun

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// Run is what a reproducer reads of an srt trial: the target, its release, the fault, the
// settings and the command line.
type Run struct {
	Target, Version string
	parts.Broken
	Settings json.RawMessage
	Argv     []string
	// OwnsPorts: the script points the settings' proxy ports (httpProxyPort, socksProxyPort) at a
	// listener of its own, so they are kept; otherwise they are a proxy of sandcheck's, refused.
	OwnsPorts bool
	// Proxy: the script is a proxy request's, which runs the caller's PROXY on the settings'
	// proxy ports when the trial's fault stood a proxy in for srt's own (StartProxy).
	Proxy bool
}

// Evidence is what every reproducer reads of a sandboxed session's evidence: the sandbox, its
// release and fault, its settings, its command line and its working directory. A script's own
// reader embeds it and adds what it needs.
type Evidence struct {
	Target        string `json:"target"`
	TargetVersion string `json:"target_version"`
	parts.Broken
	Settings json.RawMessage `json:"settings"`
	Run      struct {
		Argv []string `json:"argv"`
	} `json:"run"`
	Dir string `json:"dir"`
}

// Srt is the session's run as an srt script reads it.
func (e Evidence) Srt() Run {
	return Run{Target: e.Target, Version: e.TargetVersion, Broken: e.Broken, Settings: e.Settings, Argv: e.Run.Argv}
}

// Check says why the trial's run cannot be reproduced: another target, a fault's finding, a
// command line that is not srt's.
func (r Run) Check() error {
	if r.Target != "srt" {
		return fmt.Errorf("standalone reproducers of proxy requests drive srt, Codex and Claude Code so far, not %s", r.Target)
	}
	// A proxy the fault stood in for srt's is no reason when the script runs PROXY in its place.
	if !r.standIn() {
		if err := r.Broken.Check(); err != nil {
			return err
		}
	}
	_, err := argvOf(r.Argv)
	return err
}

// standIn says whether the script runs PROXY in place of the proxy the trial's fault stood in
// for srt's.
func (r Run) standIn() bool { return r.Proxy && r.Broken.FaultProxy }

// needsProxy is the script's check that the caller gave it PROXY, after its prelude.
const needsProxy = `PROXY=${PROXY:-}
[ -n "$PROXY" ] || { echo "set PROXY to the command that runs the proxy in srt's place: the script runs it as PROXY SETTINGS-FILE; it must serve the file's network.httpProxyPort and socksProxyPort on 127.0.0.1, enforcing its allowedDomains and deniedDomains" >&2; exit 2; }
export PROXY
`

// StartProxy writes, after the fixture, the lines that start PROXY in the sandbox's host
// namespace (with the fixture's hosts file and resolver) on the settings' proxy ports and wait
// until both listen; nothing unless the script stands it in (standIn).
func (r Run) StartProxy(b *strings.Builder) error {
	if !r.standIn() {
		return nil
	}
	var s struct {
		Network struct {
			HTTP  int `json:"httpProxyPort"`
			SOCKS int `json:"socksProxyPort"`
		} `json:"network"`
	}
	if err := json.Unmarshal(r.Settings, &s); err != nil || s.Network.HTTP == 0 || s.Network.SOCKS == 0 {
		return fmt.Errorf("the trial's settings name no proxy ports for PROXY to serve")
	}
	fmt.Fprintf(b, `# The proxy in srt's place: PROXY, given the settings, on their ports %[1]d and %[2]d.
ip netns exec "$hs" sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv.conf" /etc/resolv.conf && exec sh -c "exec $PROXY \"\$1\"" sh "$1/settings.json"' sh "$w" > "$w/proxy.log" 2>&1 &
echo $! >> "$w/pids"
i=0
until ip netns exec "$hs" python3 -c 'import socket, sys
for p in sys.argv[1:]: socket.create_connection(("127.0.0.1", int(p)), 1).close()' %[1]d %[2]d 2>/dev/null; do
  i=$((i + 1))
  [ $i -lt 100 ] || { echo "PROXY did not listen on 127.0.0.1:%[1]d and :%[2]d:" >&2; cat "$w/proxy.log" >&2; exit 2; }
  sleep 0.1
done
`, s.Network.HTTP, s.Network.SOCKS)
	return nil
}

// Open writes a script's opening: what it reproduces and what the trial saw, header, SANDBOX
// and RUN_AS (the trial's account), prelude (which makes $w), and the trial's settings in
// $w/settings.json with $w in the trial directory's place.
func (r Run) Open(b *strings.Builder, scenario, why, header, prelude string) error {
	argv, err := argvOf(r.Argv)
	if err != nil {
		return err
	}
	settings, err := relocate(r.Settings, argv.trialDir, r.OwnsPorts || r.standIn())
	if err != nil {
		return err
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	parts.Opening(b, scenario, r.Target, r.Version, why)
	r.Broken.Note(b)
	b.WriteString(header)
	w("SANDBOX=${SANDBOX:-srt}\nRUN_AS=${RUN_AS:-%s}\n", argv.user)
	b.WriteString(prelude)
	if r.standIn() {
		b.WriteString(needsProxy)
	}
	w("cat > \"$w/settings.json\" <<'SETTINGS'\n%s\nSETTINGS\n", settings)
	b.WriteString(parts.SetDir(`"$w/settings.json"`, settings))
	return nil
}

type srtCommand struct{ user, trialDir string }

// argvOf reads the trial's command line: [setpriv --reuid=U ... --] SRT --settings FILE -c CMD.
func argvOf(argv []string) (srtCommand, error) {
	user, srt, err := parts.AsAccount(argv, "")
	if err != nil {
		return srtCommand{}, err
	}
	if len(srt) < 5 || srt[1] != "--settings" || srt[3] != "-c" {
		return srtCommand{}, fmt.Errorf("the trial's command line is not srt's --settings FILE -c CMD: %q", argv)
	}
	return srtCommand{user: user, trialDir: filepath.Dir(srt[2])}, nil
}

// Relocate makes the settings the script's own: the trial directory becomes a placeholder
// (parts.Relocated), which the script replaces by its own; ports of a substituted proxy are refused (a fault's).
func Relocate(settings json.RawMessage, trialDir string) (string, error) {
	return relocate(settings, trialDir, false)
}

func relocate(settings json.RawMessage, trialDir string, ownsPorts bool) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(settings, &m); err != nil {
		return "", fmt.Errorf("the trial's settings: %w", err)
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	s := parts.Relocated(string(b), trialDir)
	if strings.Contains(s, "ProxyPort") && !ownsPorts {
		return "", fmt.Errorf("the settings point srt at a proxy of sandcheck's (httpProxyPort/socksProxyPort)")
	}
	return s, nil
}

// Line is what a script that gives srt a command of its own needs of the trial's run: the
// account, and the trial's settings with the trial directory a placeholder (parts.Relocated).
// workDir, the trial's working directory, must be in the directory its settings were in.
func (r Run) Line(workDir string) (user, settings string, err error) {
	if err := r.Check(); err != nil {
		return "", "", err
	}
	c, _ := argvOf(r.Argv)
	if c.trialDir != filepath.Dir(workDir) {
		return "", "", fmt.Errorf("srt's settings are in %s, not in the trial's directory", c.trialDir)
	}
	settings, err = relocate(r.Settings, c.trialDir, r.OwnsPorts)
	return c.user, settings, err
}

// TrialDir is the trial's directory, where its settings file was (the script's own in its place).
func (r Run) TrialDir() (string, error) {
	c, err := argvOf(r.Argv)
	return c.trialDir, err
}

// Send is send() for srt's request scripts (parts.SendHead): one request from inside srt run
// with the script's settings.
var Send = parts.SendHead + `send() {
  ` + parts.InHostAs("$w/tmp") + `"$SANDBOX" --settings "$w/settings.json" -c "python3 $w/request.py $1 $2 $3 $4 $5 $6 ${7:-}" ) || true
}
`
