package reproscript

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// claudeInterplay is the fs-interplay session's evidence of Claude Code, as a trial journals it:
// its settings and trust files under the trial's claude-home, its run (claude -p as the account),
// and the session's working directory.
func claudeInterplay(change func(map[string]any)) model.Record {
	const trial = "/tmp/sandcheck-trial-9"
	settings := `{"sandbox":{"enabled":true,"filesystem":{"allowWrite":["` + trial + `/fakehome"],` +
		`"denyRead":["` + trial + `/fakehome/proj/sub/private","/tm?/sandcheck-trial-9/fakehome/proj/sub/keys/secret.pem"]}}}`
	ev := map[string]any{
		"target": "claude-code", "target_version": "@anthropic-ai/claude-code@2.1.332",
		"settings": json.RawMessage(settings),
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/claude", "-p", "Run the sandcheck probe with the Bash tool.", "--allowedTools", "Bash"}},
		"dir": trial + "/fakehome/proj/sub",
		"layout": []map[string]any{
			{"path": trial + "/claude-home/.claude/settings.json", "text": settings, "mode": 0o644},
			{"path": trial + "/claude-home/.claude.json", "text": `{"projects":{"` + trial + `/fakehome/proj/sub":{"hasTrustDialogAccepted":true}}}`, "mode": 0o600},
		},
	}
	if change != nil {
		change(ev)
	}
	b, _ := json.Marshal(map[string]any{"bypass/fs-interplay/deny-read-and-write": ev})
	return model.Record{Evidence: b}
}

// TestClaudeFSScript: on Claude Code, every fs-interplay, privilege, globs and git case gets a
// script that is valid sh, lays out the files the trial gave Claude Code with its own directory
// in the trial's place (the unanchored pattern too), runs Claude Code as the trial's account with
// the trial's arguments in a network namespace of loopback only, and has its Bash tool run the
// case's command; no srt settings and no trial path are left. A fault's finding, or files laid
// over the host's, get none; nor does a setup case (its next session), which says why.
func TestClaudeFSScript(t *testing.T) {
	for _, id := range caseIDs(func(id string) bool { return !strings.HasPrefix(id, "bypass/setup/") }) {
		f, s := scriptFile(t, claudeInterplay(nil), id, "")
		for _, want := range []string{"SANDBOX=${SANDBOX:-claude}", "RUN_AS=${RUN_AS:-sandcheck}", `sh "$w/claude.sh" "$SANDBOX"`,
			`cat > ''"$w"'/claude-home/.claude/settings.json' <<'FILE'`, `"@DIR@/fakehome/proj/sub/private"`, `"@DIR?@/fakehome/proj/sub/keys/secret.pem"`,
			`ip netns exec "$claude_net" setpriv`, `'-p' 'Run the sandcheck probe with the Bash tool.' '--allowedTools' 'Bash'`,
			`python3 "$w/model.py" "$w/claude" "sh $w/claude/command.sh"`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: script lacks %q", id, want)
			}
		}
		if strings.Contains(s, "sandcheck-trial-9") || strings.Contains(s, `"$w/settings.json"`) {
			t.Errorf("%s: the trial's directory or srt's settings are left in the script", id)
		}
		if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", id, err, out)
		}
	}
	for why, change := range map[string]func(map[string]any){
		"fault":   func(ev map[string]any) { ev["fault"] = "fs-unmask" },
		"managed": func(ev map[string]any) { ev["run"].(map[string]any)["mounts"] = []string{"/tmp/x on /etc/claude-code"} },
		"files":   func(ev map[string]any) { ev["layout"] = nil },
	} {
		if _, err := Script(claudeInterplay(change), "bypass/git/submodule-config", ""); err == nil {
			t.Errorf("%s: a script was written", why)
		}
	}
	// The setup class's next session would start where the trial trusted nothing: none, saying so.
	if _, err := Script(claudeInterplay(nil), "bypass/setup/planted-file", ""); err == nil || !strings.Contains(err.Error(), "did not trust") {
		t.Errorf("a setup case on Claude Code: %v, want an error saying why there is no script", err)
	}
}

// standIn writes the stand-in for Claude Code (claudescript/testdata/claude.py) into dir as name,
// which decides how it behaves, and returns its path.
func standIn(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("claudescript", "testdata", "claude.py"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClaudeFSScriptDecides runs the fs-interplay, globs and git scripts of Claude Code with two
// stand-ins for it (standIn): the one that runs the command unconfined must make each exit 1, the
// one that runs nothing exit 0; neither leaves the script's directory or network
// namespace behind. The real Claude Code's are run by e2e's
// TestReproStandaloneClaudeFS.
func TestClaudeFSScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs Claude Code as another account in a network namespace")
	skip.UnlessTools(t, "apt-get install git util-linux iproute2 python3", "git", "setpriv", "findmnt", "ip", "python3")
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	open, none := standIn(t, bin, "open-claude"), standIn(t, bin, "no-claude")
	// Not the privilege cases: without a sandbox their steps would remount and unmount this
	// host's own mounts.
	unprivileged := func(id string) bool {
		return strings.HasPrefix(id, "bypass/fs-interplay/") || strings.HasPrefix(id, "bypass/globs/") || strings.HasPrefix(id, "bypass/git/")
	}
	for _, id := range caseIDs(unprivileged) {
		f, _ := scriptFile(t, claudeInterplay(nil), id, "")
		for sandbox, want := range map[string]int{open: 1, none: 0} {
			code, out, pid := runAsRoot(f, sandbox)
			if code != want {
				t.Errorf("%s with %s: exit %d, want %d\n%s", id, filepath.Base(sandbox), code, want, out)
			}
			if left := leftBehind(out, pid); left != "" {
				t.Fatalf("%s with %s left %s behind", id, filepath.Base(sandbox), left)
			}
		}
	}
}

// caseIDs are the scenario ids of the filesystem classes' and the git class's cases that keep
// takes.
func caseIDs(keep func(id string) bool) []string {
	var ids []string
	for id := range fsCases {
		ids = append(ids, "bypass/"+id)
	}
	for id := range gitCases {
		ids = append(ids, "bypass/git/"+id)
	}
	return slices.DeleteFunc(ids, func(id string) bool { return !keep(id) })
}

// leftBehind is what is left of the reproducer that ran as pid and printed out: its directory
// (the working directory it names, /tmp/repro.XXXXXX/fakehome/...) and its network namespaces
// (reproclaude$$, reprohs$$, reprofx$$). Other tests' reproducers may run meanwhile, so only its
// own are looked for.
func leftBehind(out string, pid int) string {
	if dir := reproDir.FindString(out); dir != "" {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
	}
	nets, _ := exec.Command("ip", "netns", "list").Output()
	for _, ns := range []string{"reproclaude", "reprohs", "reprofx"} {
		if own := fmt.Sprintf("%s%d", ns, pid); slices.Contains(strings.Fields(string(nets)), own) {
			return "network namespace " + own
		}
	}
	return ""
}

// reproDir is a reproducer's directory, as its output names it.
var reproDir = regexp.MustCompile(`/tmp/repro\.[A-Za-z0-9]{6}`)
