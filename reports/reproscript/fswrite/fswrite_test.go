package fswrite

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts/scripttest"
)

const fsWriteTrial = "/tmp/sandcheck-trial-5"

// firejailTrial is a filesystem trial's evidence as the journal keeps it, for firejail run as
// the dedicated account.
func firejailTrial(fault string) model.Record {
	ev := map[string]any{
		"target": "firejail", "target_version": "firejail 0.9.72", "fault": fault,
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/usr/bin/firejail", "--quiet", "--noprofile", "--net=none", "--read-only=/",
			"--read-write=" + fsWriteTrial + "/workspace", "--read-write=" + fsWriteTrial + "/firejail-tmp",
			"--env=TMPDIR=" + fsWriteTrial + "/firejail-tmp", "--blacklist=" + fsWriteTrial + "/home/.ssh", "--",
			"/opt/sandcheck", parts.ProbeVerb, fsWriteTrial + "/probe-1.json"}},
		"dir":  fsWriteTrial + "/workspace",
		"user": map[string]any{"name": "sandcheck", "uid": 1001, "home": "/home/sandcheck"},
	}
	b, _ := json.Marshal(ev)
	return model.Record{Evidence: b}
}

// TestFSWriteScript: a write outside the writable paths gets a script that is valid sh, runs the
// trial's command line (its directories the script's own) as the trial's account with a shell
// command in place of the probe, and writes the canary where the check wrote; anything it
// cannot give the sandbox again as it was gets none, saying why.
func TestFSWriteScript(t *testing.T) {
	s, err := Script(firejailTrial(""), "filesystem/outside/home", "wrote $HOME")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SANDBOX=${SANDBOX:-firejail}", "RUN_AS=${RUN_AS:-sandcheck}", "target=$home/repro-canary-$n",
		`'--read-write='"$w"'/workspace'`, `'--env=TMPDIR='"$w"'/firejail-tmp'`, `mkdir -p ''"$w"'/home/.ssh'`,
		`'--blacklist='"$w"'/home/.ssh' '--' sh -c`} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(s, fsWriteTrial) || strings.Contains(s, "/opt/sandcheck") || strings.Contains(s, parts.ProbeVerb) {
		t.Error("the trial's directory or sandcheck's probe is left in the script")
	}
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(s), 0o755)
	if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v: %s", err, out)
	}
	for name, c := range map[string]struct {
		rec      model.Record
		scenario string
		why      string
	}{
		"a fault":          {firejailTrial("fs-rw-root"), "filesystem/outside/home", "fault"},
		"another check":    {firejailTrial(""), "filesystem/secret/read", "not filesystem/secret/read"},
		"an older journal": {model.Record{Evidence: json.RawMessage(`{"target": "firejail", "run": {"argv": ["firejail", "--", "/p", "__sandcheck_probe", "x"]}}`)}, "filesystem/outside/home", "older sandcheck"},
	} {
		if _, err := Script(c.rec, c.scenario, ""); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.why)
		}
	}
}

// TestFSWriteScriptDecides runs the script with two stand-ins for the sandbox: one that runs the
// command unconfined must make it exit 1, one that runs nothing exit 0 (and neither leaves the
// canary behind). The real firejail's is run by e2e's TestReproStandaloneFSWrite.
func TestFSWriteScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script runs the sandbox as another account (setpriv)")
	skip.UnlessTools(t, "apt-get install util-linux", "setpriv")
	open, none := scripttest.ArgvStandIns(t)
	s, err := Script(firejailTrial(""), "filesystem/outside/tmp", "")
	if err != nil {
		t.Fatal(err)
	}
	decides(t, s, open, none)
}

// decides runs script with open (exit 1 wanted) and none (exit 0), and checks that neither run
// leaves a canary behind.
func decides(t *testing.T, script, open, none string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(script), 0o755)
	for sandbox, want := range map[string]int{open: 1, none: 0} {
		if code, out := scripttest.Run(f, sandbox); code != want {
			t.Errorf("with %s: exit %d, want %d\n%s", filepath.Base(sandbox), code, want, out)
		}
		if left, _ := filepath.Glob("/tmp/repro-canary-*"); len(left) > 0 {
			t.Errorf("with %s: left %v", filepath.Base(sandbox), left)
		}
	}
}

// TestFSWriteScriptUnderBrokenTools: a finding made by a fault that only put broken tools first
// on PATH gets a script, which says so: it shows the finding with the same broken tools first on
// PATH, and not with the healthy ones.
func TestFSWriteScriptUnderBrokenTools(t *testing.T) {
	rec := firejailTrial("fs-rw-root")
	var ev map[string]any
	json.Unmarshal(rec.Evidence, &ev)
	ev["fault_tools"] = []string{"bwrap"}
	rec.Evidence, _ = json.Marshal(ev)
	s, err := Script(rec, "filesystem/outside/home", "wrote $HOME")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sandcheck's fault fs-rw-root", "broken bwrap first on PATH"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}

// srtTrial is a filesystem trial's evidence of srt, run as the dedicated account.
func srtTrial(fault string) model.Record {
	ev := map[string]any{
		"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.83", "fault": fault,
		"settings": map[string]any{"filesystem": map[string]any{"allowWrite": []string{fsWriteTrial + "/workspace"}, "denyRead": []string{}, "denyWrite": []string{}},
			"network": map[string]any{"allowedDomains": []string{"allowed.sandcheck.test"}, "deniedDomains": []string{}}},
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/srt", "--settings", fsWriteTrial + "/srt-settings.json", "-c", "'/opt/sandcheck' '" + parts.ProbeVerb + "' 'x'"}},
		"dir": fsWriteTrial + "/workspace",
	}
	b, _ := json.Marshal(ev)
	return model.Record{Evidence: b}
}

// TestFSWriteScriptSrt: srt takes the command as one string after its settings: its script gives
// it the trial's settings (the script's directory in the trial's place) and the write as that
// string; run with a stand-in that runs the string unconfined it exits 1, with one that runs
// nothing 0, and leaves no canary behind either way.
func TestFSWriteScriptSrt(t *testing.T) {
	s, err := Script(srtTrial(""), "filesystem/outside/tmp", "wrote /tmp")
	if err != nil {
		t.Fatal(err)
	}
	scripttest.Check(t, s, fsWriteTrial, "SANDBOX=${SANDBOX:-srt}", "RUN_AS=${RUN_AS:-sandcheck}", `"@DIR@/workspace"`, "target=/tmp/repro-canary-$n",
		`as "$SANDBOX" --settings "$w/settings.json" -c "echo repro-canary > '$target'`)
	if _, err := Script(srtTrial("fs-drop-deny-read"), "filesystem/outside/tmp", ""); err == nil || !strings.Contains(err.Error(), "fault") {
		t.Errorf("a fault's finding: %v", err)
	}
	skip.UnlessRoot(t, "the script runs the sandbox as another account (setpriv)")
	skip.UnlessTools(t, "apt-get install util-linux", "setpriv")
	open, none := scripttest.SrtStandIns(t)
	decides(t, s, open, none)
}
