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

// filesystemEvidence is a filesystem trial's evidence of srt as the journal keeps it: its
// settings, its command line as the dedicated account, the workspace it ran in.
func filesystemEvidence(change func(map[string]any)) model.Record {
	const trial = "/tmp/sandcheck-trial-5"
	ev := map[string]any{
		"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.83",
		"settings": map[string]any{"filesystem": map[string]any{"allowWrite": []string{trial + "/workspace"}, "denyRead": []string{}, "denyWrite": []string{}},
			"network": map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}}},
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/srt", "--settings", trial + "/srt-settings.json", "-c", "'probe' 'x'"}},
		"dir": trial + "/workspace",
	}
	if change != nil {
		change(ev)
	}
	b, _ := json.Marshal(ev)
	return model.Record{Evidence: b}
}

// TestHooksScript: the new repository's hook gets a script that is valid sh, carries srt's
// settings with its own directory in the trial's place, plants the hook in the sandbox and
// commits outside it, after a control without any sandbox; a fault's finding, another target and
// a trial that kept no working directory get none.
func TestHooksScript(t *testing.T) {
	f, s := scriptFile(t, filesystemEvidence(nil), newRepoHooks, "newrepo/.git/hooks/pre-commit written")
	for _, want := range []string{`"@DIR@/workspace"`, "RUN_AS=${RUN_AS:-sandcheck}", `ws=''"$w"'/workspace'`,
		`as "$SANDBOX" --settings "$w/settings.json" -c "sh $w/plant.sh newrepo $marks"`, "commit newrepo", "commit control"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(s, "sandcheck-trial-5") {
		t.Error("the trial's directory is left in the script")
	}
	if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v: %s", err, out)
	}
	for why, change := range map[string]func(map[string]any){
		"fault":  func(ev map[string]any) { ev["fault"] = "fs-unmask" },
		"bwrap":  func(ev map[string]any) { ev["target"] = "bwrap" },
		"no dir": func(ev map[string]any) { delete(ev, "dir") },
	} {
		if _, err := Script(filesystemEvidence(change), newRepoHooks, ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
}

// TestHooksScriptDecides runs the script with two stand-ins for srt: one that runs the command
// unconfined (the hook is planted, and runs at the commit: exit 1) and one that runs nothing
// (exit 0); neither leaves the script's directory behind.
func TestHooksScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs the sandbox as another account")
	skip.UnlessTools(t, "apt-get install git util-linux", "git", "setpriv")
	f, _ := scriptFile(t, filesystemEvidence(nil), newRepoHooks, "")
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	open, none := filepath.Join(bin, "open-srt"), filepath.Join(bin, "no-srt")
	os.WriteFile(open, []byte("#!/bin/sh\n# srt --settings FILE -c CMD, unconfined\nexec sh -c \"$4\"\n"), 0o755)
	os.WriteFile(none, []byte("#!/bin/sh\necho 'refused' >&2; exit 1\n"), 0o755)
	for sandbox, want := range map[string]int{open: 1, none: 0} {
		code, out, pid := runAsRoot(f, sandbox)
		if code != want || code == 1 && !strings.Contains(out, "the hook ran: root in ") {
			t.Errorf("with %s: exit %d, want %d\n%s", filepath.Base(sandbox), code, want, out)
		}
		if left := leftBehind(out, pid); left != "" {
			t.Errorf("with %s: left %s behind", filepath.Base(sandbox), left)
		}
	}
}

// TestHooksScriptClaude: on Claude Code the same script lays out what the trial gave Claude Code
// and has its Bash tool plant the hook (the script's model asking for it); with a stand-in for
// Claude Code that runs the command unconfined it exits 1, with one that runs nothing 0.
func TestHooksScriptClaude(t *testing.T) {
	f, s := scriptFile(t, claudeProxyEvidence(nil), newRepoHooks, "")
	for _, want := range []string{"SANDBOX=${SANDBOX:-claude}", `sh "$w/claude.sh" "$SANDBOX"`, `ip netns exec "$claude_net" setpriv`,
		`cat > ''"$w"'/claude-home/.claude/settings.json' <<'FILE'`, "commit newrepo"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v: %s", err, out)
	}
	skip.UnlessRoot(t, "the script runs Claude Code as another account in a network namespace")
	skip.UnlessTools(t, "apt-get install git util-linux iproute2 python3", "git", "setpriv", "ip", "python3")
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	for name, want := range map[string]int{"open-claude": 1, "no-claude": 0} {
		code, out, pid := runAsRoot(f, standIn(t, bin, name))
		if code != want {
			t.Errorf("with %s: exit %d, want %d\n%s", name, code, want, out)
		}
		if left := leftBehind(out, pid); left != "" {
			t.Errorf("with %s: left %s behind", name, left)
		}
	}
}
