package concscript

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts/scripttest"
)

const trialDir = "/tmp/sandcheck-trial-5"

// concEvidence is a concurrency trial's evidence of srt as the family journals it: k sessions, in
// one workspace or one each, each with its own settings file under trialDir/session-NONCE.
func concEvidence(k int, shared bool, change func(map[string]any)) model.Record {
	var sessions []map[string]any
	for i := 0; i < k; i++ {
		ws := trialDir + "/workspace"
		if !shared {
			ws = fmt.Sprintf("%s/workspace-%d", trialDir, i)
		}
		sessions = append(sessions, map[string]any{
			"workspace": ws,
			"settings": map[string]any{"network": map[string]any{"allowedDomains": []string{"allowed.sandcheck.test"}},
				"filesystem": map[string]any{"allowWrite": []string{ws}}},
			"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
				"/opt/srt", "--settings", fmt.Sprintf("%s/session-%d/srt-settings.json", trialDir, i), "-c", "'/opt/sandcheck' '__sandcheck_probe' 'x'"}},
		})
	}
	ev := map[string]any{"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.83", "k": k, "shared_workspace": shared,
		"sessions": sessions, "leftovers": []string{trialDir + "/workspace/.claude"}}
	if change != nil {
		change(ev)
	}
	b, _ := json.Marshal(map[string]any{"concurrency/shared-workspace/k4": ev, "concurrency/separate-workspaces/k4": map[string]any{}})
	return model.Record{Evidence: b}
}

// TestScript: the script is valid sh; it starts every session at once with its own settings (the
// trial directory the round's), in the trial's workspaces, and compares each round's workspace
// before and after. A fault's trial, another target, or sessions outside one trial directory get
// none.
func TestScript(t *testing.T) {
	s, err := Script(concEvidence(4, true, nil), "concurrency/shared-workspace/k4", "residue")
	if err != nil {
		t.Fatal(err)
	}
	scripttest.Check(t, s, trialDir, `"@DIR@/workspace"`, "RUN_AS=${RUN_AS:-sandcheck}", "ROUNDS=${ROUNDS:-20}",
		`sed "s|@DIR@|$rd|g" "$w/settings-4.json" > "$rd/s4/settings.json"`, `( cd "$rd/workspace" && ip netns exec "$net"`,
		`for ws in workspace; do`, `cmp -s "$w/r$r.before" "$w/r$r.after"`)
	if n := strings.Count(s, `"$SANDBOX" --settings`); n != 4 {
		t.Errorf("%d sessions started, want 4", n)
	}
	sep, err := Script(concEvidence(2, false, nil), "concurrency/shared-workspace/k4", "")
	if err != nil || !strings.Contains(sep, "for ws in workspace-0 workspace-1; do") {
		t.Errorf("separate workspaces: %v\n%s", err, sep)
	}
	for why, change := range map[string]func(map[string]any){
		"fault":  func(ev map[string]any) { ev["fault"] = "open-proxy" },
		"target": func(ev map[string]any) { ev["target"] = "claude-code" },
		"outside": func(ev map[string]any) {
			ev["sessions"].([]map[string]any)[1]["workspace"] = "/elsewhere/workspace"
		},
	} {
		if _, err := Script(concEvidence(4, true, change), "concurrency/shared-workspace/k4", ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
}

// TestScriptDecides runs the script with stand-ins for srt (--settings FILE -c CMD): one that
// leaves a placeholder in the workspace, and one that fails to start, must each make it exit 1;
// one that just runs the command, exit 0. Nothing is left behind.
func TestScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs the sandbox as another account in a network namespace")
	skip.UnlessTools(t, "apt-get install util-linux iproute2 diffutils", "setpriv", "ip", "cmp")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	f := filepath.Join(dir, "r.sh")
	s, err := Script(concEvidence(4, true, nil), "concurrency/shared-workspace/k4", "")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f, []byte(s), 0o755)
	for name, c := range map[string]struct {
		body string
		want int
		says string
	}{
		"leaving-srt": {"mkdir -p .claude\nexec sh -c \"$4\"\n", 1, "+ workspace/.claude"},
		"failing-srt": {"echo \"bwrap: Can't find source path $PWD/.gitconfig: No such file or directory\"\nexit 1\n", 1, "Can't find source path"},
		"clean-srt":   {"exec sh -c \"$4\"\n", 0, "no bug in 2 rounds"},
	} {
		sb := filepath.Join(dir, name)
		os.WriteFile(sb, []byte("#!/bin/sh\n# --settings FILE -c CMD\n"+c.body), 0o755)
		code, out := scripttest.Run(f, sb, "ROUNDS=2")
		if code != c.want || !strings.Contains(out, c.says) {
			t.Errorf("with %s: exit %d, want %d, saying %q\n%s", name, code, c.want, c.says, out)
		}
		nets, _ := exec.Command("ip", "netns", "list").Output()
		if strings.Contains(string(nets), "reprok") {
			t.Fatalf("with %s: left a network namespace behind:\n%s", name, nets)
		}
	}
}

// claudeConc is a concurrency trial's evidence of Claude Code: k sessions in one workspace, each
// with its own HOME under the trial directory, its settings and the workspace's trust.
func claudeConc(k int) model.Record {
	var sessions []map[string]any
	ws := trialDir + "/workspace"
	for i := 0; i < k; i++ {
		home := fmt.Sprintf("%s/session-%d/claude-home", trialDir, i)
		settings := `{"sandbox":{"enabled":true,"filesystem":{"allowWrite":["` + ws + `"]}}}`
		sessions = append(sessions, map[string]any{
			"workspace": ws, "dir": ws, "settings": json.RawMessage(settings),
			"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
				"/opt/claude", "-p", "Run the sandcheck probe with the Bash tool.", "--allowedTools", "Bash"}},
			"layout": []map[string]any{
				{"path": home + "/.claude/settings.json", "text": settings, "mode": 0o644},
				{"path": home + "/.claude.json", "text": `{"projects":{"` + ws + `":{"hasTrustDialogAccepted":true}}}`, "mode": 0o600},
			},
		})
	}
	ev := map[string]any{"target": "claude-code", "target_version": "@anthropic-ai/claude-code@2.1.215", "k": k, "shared_workspace": true, "sessions": sessions}
	b, _ := json.Marshal(map[string]any{"concurrency/shared-workspace/k4": ev})
	return model.Record{Evidence: b}
}

// TestClaudeScript: on Claude Code, the script lays out each session's files under the round's
// directory, starts each session with a model of its own at once, and decides as srt's does:
// with stand-ins for Claude Code (its testdata/claude.py), one that leaves .claude/.cc-writes in
// the workspace must make it exit 1, one that runs nothing exit 1 (no command ran), one that runs
// the command and leaves nothing exit 0; no network namespace is left behind.
func TestClaudeScript(t *testing.T) {
	s, err := Script(claudeConc(2), "concurrency/shared-workspace/k4", "residue")
	if err != nil {
		t.Fatal(err)
	}
	scripttest.Check(t, s, trialDir, "SANDBOX=${SANDBOX:-claude}", "lay_out2() {", `session2 "$rd" & pids="$pids $!"`, "'sleep 1; echo repro-ran'",
		`cat > ''"$w"'/session-1/claude-home/.claude.json' <<'FILE'`)
	if t.Failed() {
		t.FailNow() // the stand-ins below need the script as it should be
	}
	skip.UnlessRoot(t, "the script runs Claude Code as another account in a network namespace")
	skip.UnlessTools(t, "apt-get install util-linux iproute2 python3 diffutils", "setpriv", "ip", "python3", "cmp")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	f := filepath.Join(dir, "r.sh")
	os.WriteFile(f, []byte(s), 0o755)
	standIn, err := os.ReadFile(filepath.Join("..", "claudescript", "testdata", "claude.py"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		want int
		says string
	}{
		"residue-claude": {1, "+ workspace/.claude/.cc-writes"},
		"no-claude":      {1, "sessions whose command did not run: 4 of 4"},
		"open-claude":    {0, "no bug in 2 rounds"},
	} {
		sb := filepath.Join(dir, name)
		os.WriteFile(sb, standIn, 0o755)
		code, out := scripttest.Run(f, sb, "ROUNDS=2")
		if code != c.want || !strings.Contains(out, c.says) {
			t.Errorf("with %s: exit %d, want %d, saying %q\n%s", name, code, c.want, c.says, out)
		}
		nets, _ := exec.Command("ip", "netns", "list").Output()
		if strings.Contains(string(nets), "reprok") {
			t.Fatalf("with %s: left a network namespace behind:\n%s", name, nets)
		}
	}
}
