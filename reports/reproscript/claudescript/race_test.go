package claudescript

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// raceHint is what the classifier says of a channel that met the start-up race.
const raceHint = "proxy came up late: the first request was refused, later ones reached the proxy"

// networkEvidenceOf is a network trial's evidence of Claude Code as the journal keeps it (one
// object: the family attaches it once), with change applied.
func networkEvidenceOf(change func(map[string]any)) model.Record {
	var ev map[string]any
	json.Unmarshal(claudeEvidenceOf("x", nil), &ev)
	one := ev["x"].(map[string]any)
	delete(one, "condition")
	one["result"] = map[string]any{"outcome": "proxy-dead", "hint": raceHint + "; http: proxy refused the connection"}
	one["run"].(map[string]any)["argv"] = []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
		"/opt/claude", "-p", "Run the sandcheck probe with the Bash tool.", "--allowedTools", "Bash"}
	if change != nil {
		change(one)
	}
	b, _ := json.Marshal(one)
	return model.Record{Evidence: b}
}

// TestRaceScript: the start-up race's script, for each proxy channel, is valid sh; it lays out
// what the trial gave Claude Code once per session at a time, under a directory of each's own,
// and asks each session's Bash tool for the allowed host through the channel's proxy at once and
// a second later. A channel that failed otherwise, another target, a fault's finding get none.
func TestRaceScript(t *testing.T) {
	for channel, via := range raceFirst {
		s, err := RaceScript(networkEvidenceOf(nil), channel, raceHint)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"RUNS=${RUNS:-40}", "PAR=${PAR:-2}", "RUN_AS=${RUN_AS:-sandcheck}", "lay_out() {",
			`( lay_out "$w/slot$k" )`, `cat > ''"$w"'/claude-home/.claude/settings.json' <<'FILE'`, `HOME=''"$w"'/claude-home'`,
			"curl -sS -m 3 " + via + ` -o /dev/null -w "FIRST=%{http_code}\n" http://allowed.sandcheck.test/repro/first`,
			`'-p' 'Run the sandcheck probe with the Bash tool.' '--allowedTools' 'Bash'`, "(Wilson 95%%)"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: script lacks %q", channel, want)
			}
		}
		if strings.Contains(s, claudeTrial) {
			t.Errorf("%s: the trial's directory is left in the script", channel)
		}
		if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v\n%s", channel, err, out)
		}
	}
	for name, c := range map[string]struct {
		rec           model.Record
		scenario, why string
	}{
		"another failure": {networkEvidenceOf(func(ev map[string]any) {
			ev["result"] = map[string]any{"hint": "in-sandbox bridge not listening on 127.0.0.1:3128"}
		}), "network/channel/http", raceHint},
		"not a channel": {networkEvidenceOf(nil), "network/channel/direct", raceHint},
		"a fault":       {networkEvidenceOf(func(ev map[string]any) { ev["fault"] = "bridge-late" }), "network/channel/http", raceHint},
		"srt":           {networkEvidenceOf(func(ev map[string]any) { ev["target"] = "srt" }), "network/channel/http", raceHint},
		"no dir":        {networkEvidenceOf(func(ev map[string]any) { delete(ev, "dir") }), "network/channel/http", raceHint},
	} {
		if _, err := RaceScript(c.rec, c.scenario, c.why); err == nil {
			t.Errorf("%s: a script was written", name)
		}
	}
}

// TestRaceScriptDecides runs the http channel's race script with stand-ins for Claude Code
// (testdata/claude.py): the one whose proxy listens half a second late must make it exit 1 with
// every run counted refused, the one whose proxy answers its first request four seconds late exit
// 1 with every run counted unanswered, the one whose proxy is ready at once exit 0; none leaves
// its directory behind. The real Claude Code's is run by e2e's TestReproStandaloneClaudeRace.
func TestRaceScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script makes network namespaces and runs Claude Code as another account")
	skip.UnlessTools(t, "apt-get install util-linux iproute2 python3 curl", "setpriv", "ip", "python3", "curl")
	s, err := RaceScript(networkEvidenceOf(nil), "network/channel/http", raceHint)
	if err != nil {
		t.Fatal(err)
	}
	standInClaude, err := os.ReadFile(filepath.Join("testdata", "claude.py"))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(s), 0o755)
	bin, err := os.MkdirTemp("", "sandcheck-race-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bin)
	os.Chmod(bin, 0o755)
	for name, want := range map[string]struct {
		code int
		says string
	}{
		"late-claude": {1, "4 of 4 = 100.0% [51.0%, 100.0%] (Wilson 95%) (4 refused"},
		"slow-claude": {1, "(0 refused, the relay not listening; 4 unanswered"},
		"open-claude": {0, "0 of 4 = 0.0%"},
	} {
		sandbox := filepath.Join(bin, name)
		if err := os.WriteFile(sandbox, standInClaude, 0o755); err != nil {
			t.Fatal(err)
		}
		// A script that hangs fails here, and its process group is told to stop (its trap
		// removes what it made) rather than left running.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "sh", f)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SANDBOX=" + sandbox, "RUN_AS=root", "RUNS=4", "PAR=2"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		cancel()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		}
		if code != want.code || !strings.Contains(string(out), want.says) {
			t.Errorf("with %s: exit %d, want %d saying %q\n%s", name, code, want.code, want.says, out)
		}
		if dir := regexp.MustCompile(`/tmp/repro\.[A-Za-z0-9]{6}`).FindString(string(out)); dir != "" {
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("with %s: left %s behind", name, dir)
			}
		}
	}
}
