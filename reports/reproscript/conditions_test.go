package reproscript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// conditionEvidence is a condition's session of srt as a network trial journals it, keyed by its
// scenario: the settings, the command line (the probe) and where it ran.
func conditionEvidence(scenario, fault string, change func(map[string]any)) model.Record {
	const trial = "/tmp/sandcheck-trial-3"
	network := map[string]any{"allowedDomains": []string{"allowed.sandcheck.test"}, "deniedDomains": []string{}}
	var faults []string
	if strings.HasPrefix(scenario, "failclosed/") {
		network["httpProxyPort"], network["socksProxyPort"] = 41234, 41234
		faults = []string{"proxy-port-taken"}
	}
	ev := map[string]any{
		"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.83", "fault": fault,
		"settings": map[string]any{"network": network,
			"filesystem": map[string]any{"allowWrite": []string{trial + "/workspace"}, "denyRead": []string{}, "denyWrite": []string{}}},
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/srt", "--settings", trial + "/srt-settings.json", "-c", "'/opt/sandcheck' '__sandcheck_probe' '" + trial + "/probe-1.json'"}},
		"dir": trial + "/workspace", "faults": faults,
	}
	if change != nil {
		change(ev)
	}
	b, _ := json.Marshal(map[string]any{scenario: ev, "untrusted/settings-empty": map[string]any{"target": "srt"}})
	return model.Record{Evidence: b}
}

// TestEnvDeadScript: untrusted/proxy-env-dead's script is valid sh; it asks for the allowed host
// through the sandbox's proxy with the caller's environment clean, then with the dead proxy in
// every variable the condition set, and decides on what the fixture logged. Claude Code's keeps
// loopback off the dead proxy, for its model. A fault's session gets none.
func TestEnvDeadScript(t *testing.T) {
	s, err := Script(conditionEvidence("untrusted/proxy-env-dead", "", nil), "untrusted/proxy-env-dead", "silent-degraded")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"send http " + hexOf("allowed.sandcheck.test") + " 80 GET /repro/control auth",
		`--settings "$w/settings.json"`, "LANG=C.UTF-8 ${caller_env:-}", "RUN_AS=${RUN_AS:-sandcheck}"}, model.CallerProxyVars...) {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Index(s, "/repro/control") > strings.Index(s, "caller_env='") {
		t.Error("the dead proxy is set before the control")
	}
	if strings.Contains(s, "NO_PROXY") {
		t.Error("srt's caller environment has a NO_PROXY the trial's did not")
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	if _, err := Script(conditionEvidence("untrusted/proxy-env-dead", "open-proxy", nil), "untrusted/proxy-env-dead", ""); err == nil {
		t.Error("a fault's session got a script")
	}
	c, err := Script(claudeCondition(), "untrusted/proxy-env-dead", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c, "NO_PROXY=127.0.0.1,localhost") || !strings.Contains(c, "LANG=C.UTF-8 ${caller_env:-} \\\n      ANTHROPIC_BASE_URL") {
		t.Error("Claude Code's script does not give it the caller's environment with loopback kept off the proxy")
	}
}

// claudeCondition is untrusted/proxy-env-dead's session of Claude Code (claudeProxyEvidence's).
func claudeCondition() model.Record {
	rec := claudeProxyEvidence(func(ev map[string]any) { delete(ev, "cases") })
	b, _ := json.Marshal(map[string]json.RawMessage{"untrusted/proxy-env-dead": rec.Evidence})
	return model.Record{Evidence: b}
}

// TestConditionScriptsDecide runs the conditions' scripts with stand-ins for srt (testdata/srt.py)
// and Claude Code: a proxy that takes the caller's as its upstream must make env-dead's exit 1, one
// that goes direct exit 0; a sandbox that gives the command the settings' proxy port unchecked
// must make port-taken's exit 1, one that refuses a port that is not a proxy exit 0. Nothing is
// left behind.
func TestConditionScriptsDecide(t *testing.T) {
	skip.UnlessRoot(t, "the script makes network namespaces and runs the sandbox as another account")
	skip.UnlessTools(t, "apt-get install util-linux iproute2 python3", "setpriv", "ip", "python3")
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	srt, err := os.ReadFile(filepath.Join("testdata", "srt.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"adopt-srt", "plain-srt", "no-srt"} {
		if err := os.WriteFile(filepath.Join(bin, name), srt, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	envDead, _ := scriptFile(t, conditionEvidence("untrusted/proxy-env-dead", "", nil), "untrusted/proxy-env-dead", "")
	portTaken, _ := scriptFile(t, conditionEvidence("failclosed/proxy-port-taken", "", nil), "failclosed/proxy-port-taken", "")
	claudeDead, _ := scriptFile(t, claudeCondition(), "untrusted/proxy-env-dead", "")
	for _, c := range []struct {
		script, sandbox string
		want            int
	}{
		{envDead, filepath.Join(bin, "adopt-srt"), 1},
		{envDead, filepath.Join(bin, "plain-srt"), 0},
		{envDead, filepath.Join(bin, "no-srt"), 2}, // the control fails too: cannot tell
		{portTaken, filepath.Join(bin, "adopt-srt"), 1},
		{portTaken, filepath.Join(bin, "plain-srt"), 0},
		{claudeDead, standIn(t, bin, "adopt-claude"), 1},
		{claudeDead, standIn(t, bin, "strict-claude"), 0},
	} {
		code, out, pid := runAsRoot(c.script, c.sandbox)
		if code != c.want {
			t.Errorf("%s with %s: exit %d, want %d\n%s", filepath.Base(filepath.Dir(c.script)), filepath.Base(c.sandbox), code, c.want, out)
		}
		if left := leftBehind(out, pid); left != "" {
			t.Fatalf("with %s: left %s behind", filepath.Base(c.sandbox), left)
		}
	}
}

// TestPortTakenScript: failclosed/proxy-port-taken's script is valid sh; it keeps the settings'
// proxy ports for the script to point at its own listener, runs the control with them removed
// and the case with them on the listener. A session under a fault of the run's or another
// condition, or of a sandbox whose settings take no proxy ports, gets none.
func TestPortTakenScript(t *testing.T) {
	s, err := Script(conditionEvidence("failclosed/proxy-port-taken", "", nil), "failclosed/proxy-port-taken", "proxy-dead")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"httpProxyPort": 41234`, `python3 "$w/ports.py" "$w" -`, `python3 "$w/ports.py" "$w" "$port"`,
		`ip netns exec "$hs" python3 "$w/taker.py"`, "send http " + hexOf("allowed.sandcheck.test") + " 80 GET /repro/case auth"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Index(s, `ports.py" "$w" -`) > strings.Index(s, "/repro/control") || strings.Index(s, `"$port"`) > strings.Index(s, "/repro/case") {
		t.Error("the ports are not set before the request that needs them")
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	if _, err := Script(conditionEvidence("failclosed/proxy-port-taken", "open-proxy", nil), "failclosed/proxy-port-taken", ""); err == nil {
		t.Error("a session under a fault of the run's got a script")
	}
	other := conditionEvidence("failclosed/proxy-port-taken", "", func(ev map[string]any) { ev["faults"] = []string{"socat-missing"} })
	if _, err := Script(other, "failclosed/proxy-port-taken", ""); err == nil {
		t.Error("a session under another condition got a script")
	}
	codex := conditionEvidence("failclosed/proxy-port-taken", "", func(ev map[string]any) { ev["target"] = "codex" })
	if _, err := Script(codex, "failclosed/proxy-port-taken", ""); err == nil {
		t.Error("Codex, whose settings take no proxy ports, got a script")
	}
	c, err := Script(claudePortTaken(), "failclosed/proxy-port-taken", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c, `"httpProxyPort":41234`) || !strings.Contains(c, "SANDBOX=${SANDBOX:-claude}") {
		t.Error("Claude Code's script does not lay out its settings with the proxy ports for the script to take")
	}
}

// claudePortTaken is failclosed/proxy-port-taken's session of Claude Code: its settings name the
// trial's taken port.
func claudePortTaken() model.Record {
	rec := claudeProxyEvidence(func(ev map[string]any) {
		delete(ev, "cases")
		ev["faults"] = []string{"proxy-port-taken"}
		const settings = `{"sandbox":{"enabled":true,"network":{"allowedDomains":["allowed.sandcheck.test"],"httpProxyPort":41234,"socksProxyPort":41234}}}`
		ev["settings"] = json.RawMessage(settings)
		ev["layout"].([]map[string]any)[0]["text"] = settings
	})
	b, _ := json.Marshal(map[string]json.RawMessage{"failclosed/proxy-port-taken": rec.Evidence})
	return model.Record{Evidence: b}
}

// TestClaudeUntrustedScript: an untrusted configuration of Claude Code (here an empty --settings
// file) gets Claude Code's configuration script: the files it was given, among them the empty
// one, laid out again, the seed's two curls asked of its Bash tool, the denied host reached the
// bug. srt's gets none (only its dead caller proxy has one).
func TestClaudeUntrustedScript(t *testing.T) {
	const trial = "/tmp/sandcheck-trial-1"
	rec := claudeProxyEvidence(func(ev map[string]any) {
		delete(ev, "cases")
		ev["condition"] = "settings-empty"
		ev["layout"] = append(ev["layout"].([]map[string]any), map[string]any{"path": trial + "/settings.json", "text": "", "mode": 0o644})
		run := ev["run"].(map[string]any)
		run["argv"] = append(run["argv"].([]string), "--settings", trial+"/settings.json")
	})
	b, _ := json.Marshal(map[string]json.RawMessage{"untrusted/settings-empty": rec.Evidence})
	s, err := Script(model.Record{Evidence: b}, "untrusted/settings-empty", "non-enforcing")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SANDBOX=${SANDBOX:-claude}", `cat > ''"$w"'/settings.json' <<'FILE'`, `'--settings' ''"$w"'/settings.json'`,
		"BUG: the denied host was reached"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	if _, err := Script(conditionEvidence("untrusted/settings-empty", "", nil), "untrusted/settings-empty", ""); err == nil {
		t.Error("srt's empty settings got a script")
	}
}
