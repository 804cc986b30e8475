package reproscript

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// claudeProxyEvidence is a resolved-address session's evidence of Claude Code, as a trial
// journals it: srt's case and control (trialEvidence) run by claude -p as the account, its
// settings and trust under the trial's claude-home, the fixture's names bound over the host's.
func claudeProxyEvidence(change func(map[string]any)) model.Record {
	var ev map[string]any
	json.Unmarshal(trialEvidence("", "http"), &ev)
	const trial = "/tmp/sandcheck-trial-1"
	settings := `{"sandbox":{"enabled":true,"network":{"allowedDomains":["allowed.sandcheck.test","*.rebind.sandcheck.test"]},"filesystem":{"allowWrite":["` + trial + `/workspace"]}}}`
	ev["target"], ev["target_version"], ev["dir"] = "claude-code", "@anthropic-ai/claude-code@2.1.215", trial+"/workspace"
	ev["settings"] = json.RawMessage(settings)
	ev["run"] = map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
		"/opt/claude", "-p", "Run the sandcheck probe with the Bash tool.", "--allowedTools", "Bash"},
		"mounts": []string{trial + "/hosts on /etc/hosts", trial + "/resolv.conf on /etc/resolv.conf"}}
	ev["layout"] = []map[string]any{
		{"path": trial + "/claude-home/.claude/settings.json", "text": settings, "mode": 0o644},
		{"path": trial + "/claude-home/.claude.json", "text": `{"projects":{"` + trial + `/workspace":{"hasTrustDialogAccepted":true}}}`, "mode": 0o600},
	}
	if change != nil {
		change(ev)
	}
	b, _ := json.Marshal(ev)
	return model.Record{Evidence: b}
}

// TestClaudeProxyScript: on Claude Code, a proxy request's script is valid sh; it lays out the
// files the trial gave Claude Code with its own directory in the trial's place, resolves the
// session's names to their roles' listeners, and sends the control and then the case each as one
// Claude Code session, run in the sandbox's host namespace with the fixture's hosts file as the
// trial's account, whose Bash tool the script's model asks for the request. A fault's finding,
// settings that exclude the probe by name, or files laid over the host's get none.
func TestClaudeProxyScript(t *testing.T) {
	s, err := Script(claudeProxyEvidence(nil), "bypass/resolved-address/loopback", "loopback reached")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SANDBOX=${SANDBOX:-claude}", "RUN_AS=${RUN_AS:-sandcheck}", "set SANDBOX=/path/to/claude",
		`cat > ''"$w"'/claude-home/.claude/settings.json' <<'FILE'`, `"@DIR@/workspace"`, `"*.rebind.sandcheck.test"`,
		`echo "127.0.0.1 loopback.rebind.sandcheck.test"`,
		`python3 "$w/model.py" "$w/claude" "python3 $w/request.py $1 $2 $3 $4 $5 $6"`,
		`( cd ''"$w"'/workspace' && ip netns exec "$hs" sh -c 'mount --bind "$1/hosts" /etc/hosts`,
		`'-p' 'Run the sandcheck probe with the Bash tool.' '--allowedTools' 'Bash'`, `HOME=''"$w"'/claude-home'`,
		`daemon=/tmp/cc-daemon-$(id -u "$RUN_AS")`, `ip netns pids "$hs"`,
		"send http " + hexOf("allowed.sandcheck.test") + " 80 GET /repro/control auth",
		"send http " + hexOf("loopback.rebind.sandcheck.test") + " 80 GET /repro/case auth",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(s, "/tmp/sandcheck-trial-1") || strings.Contains(s, `"$w/settings.json"`) {
		t.Error("the trial's directory or srt's settings are left in the script")
	}
	if strings.Index(s, "send() {") > strings.Index(s, "send http") {
		t.Error("send is used before it is defined")
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	for why, change := range map[string]func(map[string]any){
		"fault": func(ev map[string]any) { ev["fault"] = "open-proxy" },
		"excluded": func(ev map[string]any) {
			ev["settings"] = json.RawMessage(`{"sandbox":{"excludedCommands":["sandcheck *"]}}`)
		},
		"managed": func(ev map[string]any) {
			ev["run"].(map[string]any)["mounts"] = []string{"/tmp/sandcheck-trial-1/managed on /etc/claude-code"}
		},
		"no dir": func(ev map[string]any) { delete(ev, "dir") },
	} {
		if _, err := Script(claudeProxyEvidence(change), "bypass/resolved-address/loopback", ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
}

// TestClaudeProxyScriptDecides runs a Claude Code proxy request's script with two stand-ins for
// it (standIn): the one whose proxy forwards anything must make it exit 1, the one whose proxy
// forwards the allowed host only exit 0; neither leaves the script's directory or
// network namespaces behind. The real Claude Code's are run by e2e's TestReproStandaloneClaude.
func TestClaudeProxyScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script makes network namespaces and runs Claude Code as another account")
	skip.UnlessTools(t, "apt-get install util-linux iproute2 python3", "setpriv", "ip", "python3")
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	f, _ := scriptFile(t, claudeProxyEvidence(nil), "bypass/resolved-address/loopback", "")
	for name, want := range map[string]int{"open-claude": 1, "strict-claude": 0} {
		code, out, pid := runAsRoot(f, standIn(t, bin, name))
		if code != want {
			t.Errorf("with %s: exit %d, want %d\n%s", name, code, want, out)
		}
		if left := leftBehind(out, pid); left != "" {
			t.Fatalf("with %s: left %s behind", name, left)
		}
		nets, _ := exec.Command("ip", "netns", "list").Output()
		for _, ns := range []string{"reprohs", "reprofx"} {
			if slices.Contains(strings.Fields(string(nets)), fmt.Sprintf("%s%d", ns, pid)) {
				t.Fatalf("with %s: left network namespace %s%d behind", name, ns, pid)
			}
		}
	}
}
