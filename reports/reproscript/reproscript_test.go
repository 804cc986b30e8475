package reproscript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// trialEvidence is a bypass trial's evidence as the journal keeps it (the fields a reproducer
// reads), for srt run as the dedicated account.
func trialEvidence(fault, via string) json.RawMessage {
	ev := map[string]any{
		"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.75", "fault": fault,
		"settings": map[string]any{
			"network":    map[string]any{"allowedDomains": []string{"allowed.sandcheck.test:80", "*.rebind.sandcheck.test"}, "deniedDomains": []string{}},
			"filesystem": map[string]any{"allowWrite": []string{"/tmp/sandcheck-trial-1/workspace"}, "denyRead": []string{}, "denyWrite": []string{}},
		},
		"names": []map[string]any{{"name": "loopback.rebind.sandcheck.test", "addr": "127.0.0.1", "role": "loopback"}},
		"cases": []map[string]any{
			{"name": "bypass/resolved-address/loopback", "raw": map[string]any{"id": "resolved-address.loopback", "via": via, "host": "loopback.rebind.sandcheck.test", "port": 80}},
			{"name": "", "allowed_ok": true, "control": true, "raw": map[string]any{"id": "control-" + via, "via": via, "host": "allowed.sandcheck.test", "port": 80}},
		},
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/srt", "--settings", "/tmp/sandcheck-trial-1/srt-settings.json", "-c", "'probe' 'x'"}},
	}
	b, _ := json.Marshal(ev)
	return b
}

// TestScript: the script is valid sh, carries the trial's settings with its own directory in the
// trial's place, resolves the session's names to their roles' listeners, runs the sandbox as the
// trial's account, and sends the control before the case, the case's host byte for byte.
func TestScript(t *testing.T) {
	rec := model.Record{Evidence: trialEvidence("", "http")}
	s, err := Script(rec, "bypass/resolved-address/loopback", "loopback reached")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"@DIR@/workspace"`, `"*.rebind.sandcheck.test"`, `echo "127.0.0.1 loopback.rebind.sandcheck.test"`,
		`echo "$b.3 denied.sandcheck.test"`, "RUN_AS=${RUN_AS:-sandcheck}",
		"send http " + hexOf("allowed.sandcheck.test") + " 80 GET /repro/control auth",
		"send http " + hexOf("loopback.rebind.sandcheck.test") + " 80 GET /repro/case auth",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Index(s, "/repro/control") > strings.Index(s, "/repro/case") {
		t.Error("the case is sent before its control")
	}
	if strings.Contains(s, "/tmp/sandcheck-trial-1") {
		t.Error("the trial's directory is left in the script")
	}
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(s), 0o755)
	if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v: %s", err, out)
	}
}

// TestScriptNoAuth: a case that leaves the proxy's credentials out is sent without them; its
// control, with them.
func TestScriptNoAuth(t *testing.T) {
	var m map[string]any
	json.Unmarshal(trialEvidence("", "http"), &m)
	m["cases"].([]any)[0].(map[string]any)["raw"].(map[string]any)["no_auth"] = true
	ev, _ := json.Marshal(m)
	s, err := Script(model.Record{Evidence: ev}, "bypass/resolved-address/loopback", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "/repro/case noauth") || !strings.Contains(s, "/repro/control auth") {
		t.Errorf("script sends:\n%s", s[strings.Index(s, "== control"):])
	}
}

// TestScriptRefuses: a fault's finding, another target, a request that uses no proxy have no
// reproducer, each saying why.
func TestScriptRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		ev   json.RawMessage
		want string
	}{
		"fault":  {trialEvidence("bad-proxy", "http"), "fault"},
		"direct": {json.RawMessage(strings.Replace(string(trialEvidence("", "direct")), `"target":"srt"`, `"target":"claude-code"`, 1)), "not through a proxy"},
		"bwrap":  {json.RawMessage(strings.Replace(string(trialEvidence("", "http")), `"target":"srt"`, `"target":"bwrap"`, 1)), "drive srt, Codex and Claude Code"},
		// A Codex trial from before the evidence named the run's working directory.
		"codex, no dir": {json.RawMessage(strings.Replace(string(trialEvidence("", "http")), `"target":"srt"`, `"target":"codex"`, 1)), "working directory"},
		// A request field the script does not speak would be dropped, and the script send
		// another request than the trial did.
		"unknown field": {json.RawMessage(strings.Replace(string(trialEvidence("", "http")), `"host":"loopback.rebind.sandcheck.test"`,
			`"host":"loopback.rebind.sandcheck.test","host_header":"allowed.sandcheck.test:80"`, 1)), "host_header"},
	} {
		_, err := Script(model.Record{Evidence: tc.ev}, "bypass/resolved-address/loopback", "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
	if _, err := Script(model.Record{Evidence: trialEvidence("", "http")}, "network/channel/http", ""); err == nil || !strings.Contains(err.Error(), "no network session") {
		t.Errorf("a network scenario from a trial without a network session: %v", err)
	}
}

// TestWriteAll: one script per failing scenario, from its first trial with evidence; a passing
// one gets none; a failing one without a reproducer says why.
func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	jp := filepath.Join(dir, "journal.jsonl")
	w, err := journal.OpenWriter(jp)
	if err != nil {
		t.Fatal(err)
	}
	fail := model.Scenario{Name: "bypass/resolved-address/loopback", Outcome: model.NonEnforcing}
	pass := model.Scenario{Name: "bypass/resolved-address/metadata", Outcome: model.Correct, Pass: true}
	other := model.Scenario{Name: "bypass/other-egress/udp", Outcome: model.NonEnforcing}
	cell := model.Cell{ID: "srt.local", Target: "srt", Host: "local"}
	for i, ev := range []json.RawMessage{nil, trialEvidence("", "http")} {
		if err := w.Append(model.Record{Cell: cell, Trial: i, Outcome: model.NonEnforcing, Scenarios: []model.Scenario{fail, pass, other}, Evidence: ev}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	got, err := WriteAll(jp, filepath.Join(dir, "repro"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != filepath.Join(dir, "repro", "bypass-resolved-address-loopback.sh") || got[1].Path != "" || got[1].Why == "" {
		t.Fatalf("WriteAll: %+v", got)
	}
	if _, err := os.Stat(got[0].Path); err != nil {
		t.Error(err)
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(digits[s[i]>>4])
		b.WriteByte(digits[s[i]&15])
	}
	return b.String()
}

// TestSandbox: each script names the command it runs as SANDBOX in the run's list.
func TestSandbox(t *testing.T) {
	for _, c := range [][3]string{{"claude-settings/permissions/bypass", "claude-code", "claude"}, {"bypass/git/bare-repo-config", "srt", "srt"},
		{"filesystem/outside/home", "firejail", "firejail"}, {"bypass/fs-interplay/deny-read-file-rename", "bwrap", "bwrap"}, {"bypass/matching/nul", "", "srt"},
		{"untrusted/proxy-env-dead", "claude-code", "claude"}, {"bypass/other-egress/proxy-no-credentials", "codex", "codex"}} {
		if got := Sandbox(c[0], c[1]); got != c[2] {
			t.Errorf("Sandbox(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}

// A Codex trial's script runs `codex sandbox` with the trial's own arguments (its policy is in
// their -c overrides), the trial directory in them becoming the script's, and the request last.
func TestCodexScript(t *testing.T) {
	var ev map[string]any
	json.Unmarshal(trialEvidence("", "http"), &ev)
	ev["target"], ev["target_version"], ev["dir"] = "codex", "@openai/codex@0.171.0", "/tmp/sandcheck-trial-1/workspace"
	ev["run"] = map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--", "/opt/codex", "sandbox", "--enable", "network_proxy",
		"-c", `sandbox_workspace_write.writable_roots=["/tmp/sandcheck-trial-1/workspace"]`, "-c", "network.allowed_domains=['allowed.sandcheck.test']", "--",
		"/opt/probe", parts.ProbeVerb, "/tmp/sandcheck-trial-1/probe-1.json"}}
	b, _ := json.Marshal(ev)
	s, err := Script(model.Record{Evidence: b}, "bypass/resolved-address/loopback", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SANDBOX=${SANDBOX:-codex}", "RUN_AS=${RUN_AS:-sandcheck}",
		`printf '%s\n' 'sandbox' >> "$w/args"`,
		`printf '%s\n' 'sandbox_workspace_write.writable_roots=["'"$w"'/workspace"]' >> "$w/args"`,
		`printf '%s\n' 'network.allowed_domains=['\''allowed.sandcheck.test'\'']' >> "$w/args"`,
		`"$SANDBOX" "$@" -- sh -c "$req"`, `TMPDIR="$w/codex-tmp"`,
		// Codex makes /tmp/codex-daemon-UID whatever TMPDIR says: the script removes it.
		`daemon=/tmp/codex-daemon-$(id -u "$RUN_AS")`, `rm -rf "$daemon"' EXIT`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "/tmp/sandcheck-trial-1") || strings.Contains(s, "settings.json\" ") {
		t.Errorf("script names the trial's directory or an srt settings file:\n%s", s)
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
}

// TestScriptUnixSocket: a bypass case that connects to a host unix socket, on a sandbox whose
// command line carries the command, gets unixscript's reproducer with the case's socket.
func TestScriptUnixSocket(t *testing.T) {
	ev := map[string]any{
		"target": "bwrap", "target_version": "bubblewrap 0.8.0", "dir": "/tmp/sandcheck-trial-1/workspace",
		"cases": []map[string]any{{"name": "bypass/unix-sockets/host-socket",
			"raw": map[string]any{"id": "unix-sockets.host-socket", "via": "unix", "addr": "/tmp/sandcheck-trial-1/run/sandcheck-host.sock"}}},
		"run": map[string]any{"argv": []string{"/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-all", "--",
			"/opt/sandcheck", parts.ProbeVerb, "/tmp/sandcheck-trial-1/probe-1.json"}},
	}
	b, _ := json.Marshal(ev)
	s, err := Script(model.Record{Evidence: b}, "bypass/unix-sockets/host-socket", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, `sock=''"$w"'/run/sandcheck-host.sock'`) || !strings.Contains(s, "server.py") {
		t.Errorf("not the unix socket's script:\n%s", s)
	}
}

// The network family's summaries get no script of their own: their reason names the channels',
// which reproduce them.
func TestNetworkSummariesPointAtChannels(t *testing.T) {
	for _, id := range []string{"network/seed", "network/proxy-alive", "network/enforcing", "network/allowed-reachable"} {
		if _, err := Script(model.Record{Evidence: []byte(`{}`)}, id, ""); err == nil || !strings.Contains(err.Error(), "network/channel/") {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// TestScriptFaultedSettings: a trial under a fault that changed the settings and nothing else gets
// its script, which says so (the settings it carries are the fault's); under one that changed
// more, none; and a session whose control names the allowed host by the trial's own address,
// which the script's fixture does not have, none either.
func TestScriptFaultedSettings(t *testing.T) {
	with := func(change func(m map[string]any)) model.Record {
		var m map[string]any
		json.Unmarshal(trialEvidence("inject-anywhere", "http"), &m)
		change(m)
		b, _ := json.Marshal(m)
		return model.Record{Evidence: b}
	}
	s, err := Script(with(func(m map[string]any) { m["fault_settings"] = true }), "bypass/resolved-address/loopback", "")
	if err != nil || !strings.Contains(s, "changed the sandbox's settings and nothing") {
		t.Errorf("settings-only fault: %v\n%s", err, s)
	}
	if _, err := Script(with(func(map[string]any) {}), "bypass/resolved-address/loopback", ""); err == nil {
		t.Error("a fault that changed more than the settings got a script")
	}
	ipControl := with(func(m map[string]any) {
		m["fault"] = ""
		m["cases"].([]any)[1].(map[string]any)["raw"].(map[string]any)["host"] = "198.18.7.2"
	})
	if _, err := Script(ipControl, "bypass/resolved-address/loopback", ""); err == nil || !strings.Contains(err.Error(), "trial's address") {
		t.Errorf("a control by the trial's address: %v, want no script, saying why", err)
	}
	// Codex's policy names the allowed host's address as it is: the script's takes its place,
	// in the policy and in the control (over SOCKS5, sent as an address).
	codexIP := with(func(m map[string]any) {
		m["fault"], m["target"], m["dir"] = "", "codex", "/tmp/sandcheck-trial-1/workspace"
		m["allowed"] = map[string]any{"ip": "198.18.7.2"}
		m["run"] = map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--", "/opt/codex", "sandbox", "-c",
			`permissions.s.network.domains={"198.18.7.2"="allow","198.18.7.25"="allow"}`, "--", "/opt/sandcheck", parts.ProbeVerb, "/tmp/sandcheck-trial-1/p.json"}}
		for i, c := range m["cases"].([]any) {
			raw := c.(map[string]any)["raw"].(map[string]any)
			raw["via"] = "socks"
			if i == 1 {
				raw["host"], raw["atyp"] = "198.18.7.2", 1
			}
		}
	})
	s, err = Script(codexIP, "bypass/resolved-address/loopback", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`'permissions.s.network.domains={"'"$b.2"'"="allow","198.18.7.25"="allow"}'`,
		`send socks-ip "$(printf %s "$b.2" | od -An -tx1 | tr -d ' \n')" 80 GET /repro/control auth`} {
		if !strings.Contains(s, want) {
			t.Errorf("Codex's script lacks %q", want)
		}
	}
	if strings.Contains(s, "198.18.7.2\"") || strings.Contains(s, hexOf("198.18.7.2")) {
		t.Error("the trial's address is left in Codex's script")
	}
}

// TestScriptRefusesTrialAddresses: a case whose host is the trial's own fixture, by an address in
// any spelling or by a name only the trial's resolver answered, gets no script: the script's
// fixture has neither, so its request would reach nothing and the script would say "no bug"
// whatever the proxy did. Names the script's hosts file answers (in another case, with a trailing
// dot), the script's own loopback and metadata addresses, and a name with bytes a proxy may cut
// at (NUL), get one.
func TestScriptRefusesTrialAddresses(t *testing.T) {
	with := func(host string) model.Record {
		var m map[string]any
		json.Unmarshal(trialEvidence("", "http"), &m)
		m["cases"].([]any)[0].(map[string]any)["raw"].(map[string]any)["host"] = host
		b, _ := json.Marshal(m)
		return model.Record{Evidence: b}
	}
	for _, host := range []string{"3323090723", "0xc6125723", "0306.022.0127.043", "198.18.22307", "[::ffff:198.18.87.35]", "[::ffff:c612:5723]",
		"[198.18.87.35]", "::ffff:198.19.233.19%x.wild.sandcheck.test", "allowed.sandcheck.test.denied.sandcheck.test", "198.18.87.35"} {
		if _, err := Script(with(host), "bypass/resolved-address/loopback", ""); err == nil || !strings.Contains(err.Error(), "fixture does not have") {
			t.Errorf("host %q: %v, want no script, saying why", host, err)
		}
	}
	for _, host := range []string{"DENIED.sandcheck.test.", "loopback.rebind.sandcheck.test", "127.0.0.1", "169.254.169.254", "denied.sandcheck.test\x00.allowed.sandcheck.test"} {
		if _, err := Script(with(host), "bypass/resolved-address/loopback", ""); err != nil {
			t.Errorf("host %q: %v", host, err)
		}
	}
}
