package fswrite

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts/scripttest"
)

const hooksTrial = "/tmp/sandcheck-trial-6"

// hooksEvidence is a filesystem trial's evidence as the journal keeps it: srt's (its settings,
// its command line as the dedicated account, the workspace it ran in), or with claude true Claude
// Code's (its files under the trial's claude-home, claude -p as the account); change applies last.
func hooksEvidence(claude bool, change func(map[string]any)) model.Record {
	settings := `{"filesystem":{"allowWrite":["` + hooksTrial + `/workspace"],"denyRead":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`
	ev := map[string]any{
		"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.83", "settings": json.RawMessage(settings),
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/srt", "--settings", hooksTrial + "/srt-settings.json", "-c", "'probe' 'x'"}},
		"dir": hooksTrial + "/workspace",
	}
	if claude {
		settings = `{"sandbox":{"enabled":true,"filesystem":{"allowWrite":["` + hooksTrial + `/workspace"]}}}`
		ev["target"], ev["target_version"], ev["settings"] = "claude-code", "@anthropic-ai/claude-code@2.1.332", json.RawMessage(settings)
		ev["run"] = map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/claude", "-p", "Run the sandcheck probe with the Bash tool.", "--allowedTools", "Bash"}}
		ev["layout"] = []map[string]any{
			{"path": hooksTrial + "/claude-home/.claude/settings.json", "text": settings, "mode": 0o644},
			{"path": hooksTrial + "/claude-home/.claude.json", "text": `{"projects":{"` + hooksTrial + `/workspace":{"hasTrustDialogAccepted":true}}}`, "mode": 0o600},
		}
	}
	if change != nil {
		change(ev)
	}
	b, _ := json.Marshal(ev)
	return model.Record{Evidence: b}
}

// TestHooksScript: the new repository's hook gets a script that is valid sh, carries the trial's
// settings (srt's, or Claude Code's files) with its own directory in the trial's place, plants
// the hook in the sandbox and commits outside it, after a control without any sandbox; a fault's
// finding, another target and a trial that kept no working directory get none.
func TestHooksScript(t *testing.T) {
	for claude, wants := range map[bool][]string{
		false: {`"@DIR@/workspace"`, "RUN_AS=${RUN_AS:-sandcheck}", `ws=''"$w"'/workspace'`,
			`as "$SANDBOX" --settings "$w/settings.json" -c "sh $w/plant.sh newrepo $marks"`, "commit newrepo", "commit control"},
		true: {"SANDBOX=${SANDBOX:-claude}", `sh "$w/claude.sh" "$SANDBOX"`, `ip netns exec "$claude_net" setpriv`,
			`cat > ''"$w"'/claude-home/.claude/settings.json' <<'FILE'`, "commit newrepo", "commit control"},
	} {
		s, err := Script(hooksEvidence(claude, nil), newRepoHooks, "newrepo/.git/hooks/pre-commit written")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range wants {
			if !strings.Contains(s, want) {
				t.Errorf("claude %v: script lacks %q", claude, want)
			}
		}
		if strings.Contains(s, "sandcheck-trial-6") {
			t.Errorf("claude %v: the trial's directory is left in the script", claude)
		}
		if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("claude %v: sh -n: %v: %s", claude, err, out)
		}
	}
	for why, change := range map[string]func(map[string]any){
		"fault":  func(ev map[string]any) { ev["fault"] = "fs-unmask" },
		"bwrap":  func(ev map[string]any) { ev["target"] = "bwrap" },
		"no dir": func(ev map[string]any) { delete(ev, "dir") },
	} {
		if _, err := Script(hooksEvidence(false, change), newRepoHooks, ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
}

// TestHooksScriptDecides runs the script with stand-ins for srt and for Claude Code: one that runs
// the command unconfined (the hook is planted, and runs at the commit: exit 1) and one that runs
// nothing (exit 0); none leaves the script's directory behind.
func TestHooksScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs the sandbox as another account (and Claude Code in a network namespace)")
	skip.UnlessTools(t, "apt-get install git util-linux iproute2 python3", "git", "setpriv", "ip", "python3")
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	claude, err := os.ReadFile(filepath.Join("..", "claudescript", "testdata", "claude.py"))
	if err != nil {
		t.Fatal(err)
	}
	stands := map[string][]byte{
		"open-srt":    []byte("#!/bin/sh\n# srt --settings FILE -c CMD, unconfined\nexec sh -c \"$4\"\n"),
		"no-srt":      []byte("#!/bin/sh\necho refused >&2; exit 1\n"),
		"open-claude": claude, "no-claude": claude, // the stand-in's name decides how it behaves
	}
	for name, want := range map[string]int{"open-srt": 1, "no-srt": 0, "open-claude": 1, "no-claude": 0} {
		sandbox := filepath.Join(bin, name)
		if err := os.WriteFile(sandbox, stands[name], 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := Script(hooksEvidence(strings.HasSuffix(name, "claude"), nil), newRepoHooks, "")
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "r.sh")
		os.WriteFile(f, []byte(s), 0o755)
		code, out := scripttest.Run(f, sandbox)
		if code != want || code == 1 && !strings.Contains(out, "the hook ran: root in ") {
			t.Errorf("with %s: exit %d, want %d\n%s", name, code, want, out)
		}
		if dir := regexp.MustCompile(`/tmp/repro\.[A-Za-z0-9]{6}`).FindString(out); dir != "" {
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("with %s: left %s behind", name, dir)
			}
		}
	}
}

// TestTmpdirScript: srt's TMPDIR gets a script that is valid sh and writes under the TMPDIR the
// sandbox gives the command, with the trial's settings; with a stand-in for srt that gives a
// TMPDIR nobody made it exits 1, with one that gives a writable one 0.
func TestTmpdirScript(t *testing.T) {
	s, err := Script(hooksEvidence(false, nil), sessionTmp, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, `as "$SANDBOX" --settings "$w/settings.json" -c`) || strings.Contains(s, hooksTrial) {
		t.Errorf("script:\n%s", s)
	}
	if _, err := Script(hooksEvidence(true, nil), sessionTmp, ""); err == nil {
		t.Error("a Claude Code trial got srt's script")
	}
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(s), 0o755)
	skip.UnlessRoot(t, "the script runs the sandbox as another account")
	skip.UnlessTools(t, "apt-get install util-linux", "setpriv")
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	for name, c := range map[string]struct {
		tmp  string
		code int
	}{"made-srt": {"/tmp", 0}, "unmade-srt": {"/tmp/sandcheck-no-such-dir-for-the-test", 1}} {
		sandbox := filepath.Join(bin, name)
		// srt --settings FILE -c CMD, its TMPDIR the stand-in's.
		os.WriteFile(sandbox, []byte("#!/bin/sh\nTMPDIR="+c.tmp+" exec sh -c \"$4\"\n"), 0o755)
		if code, out := scripttest.Run(f, sandbox); code != c.code {
			t.Errorf("with %s: exit %d, want %d\n%s", name, code, c.code, out)
		}
	}
}
