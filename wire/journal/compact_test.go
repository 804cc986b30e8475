package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

// fullTrial is a trial of every scenario as the default matrix runs them: 52 verdicts, a few of
// them known findings, evidence of the size a real trial carries.
func fullTrial(trial int) model.Record {
	r := model.Record{RunID: "run-1", Cell: model.Cell{ID: "srt.local.healthy-0123abcd", Target: "srt", Host: "local"}, Trial: trial,
		Outcome: model.NonEnforcing, Hint: "protected/git-hooks-new-repo: write $WORKSPACE/newrepo/.git/hooks/pre-commit succeeded",
		DurationMS: 12345, PhasesMS: map[string]int64{"start": 2, "fixture": 5, "sandbox": 9000, "cleanup": 3, "classify": 1, "specs": 40, "report": 3},
		Evidence: json.RawMessage(`{"blob":"` + strings.Repeat("x", 80<<10) + `"}`),
		HostFP:   json.RawMessage(`{"kernel":"6.1.0-50-amd64","os":"Debian GNU/Linux 12"}`)}
	for i := range 45 {
		r.Scenarios = append(r.Scenarios, model.Scenario{Name: fmt.Sprintf("filesystem/protected/some-long-scenario-name-%02d", i),
			Labels: []string{"filesystem", "security"}, Outcome: model.Correct, Pass: true, Hint: "all checks held: EROFS, EACCES, ENOENT"})
	}
	r.Scenarios = append(r.Scenarios,
		model.Scenario{Name: "filesystem/protected/git-hooks-new-repo", Outcome: model.NonEnforcing, Hint: "write ... succeeded", Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit", Known: "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"}}},
		model.Scenario{Name: "filesystem/workspace/tmpdir", Outcome: model.AllowedBlocked, Breaches: []model.Breach{{Outcome: model.AllowedBlocked, What: "write /tmp/claude/sandcheck-fs-x: ENOENT", Known: "srt:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*"}}},
		model.Scenario{Name: "failclosed/proxy-port-taken", Outcome: model.ProxyDead, Breaches: []model.Breach{{Outcome: model.ProxyDead, What: "condition proxy-port-taken: ran with a dead proxy", Known: "srt:failclosed/proxy-port-taken#proxy-port-taken"}}},
		model.Scenario{Name: "untrusted/proxy-env-dead", Outcome: model.AllowedBlocked, Breaches: []model.Breach{{Outcome: model.AllowedBlocked, What: "condition proxy-env-dead: allowed host refused", Known: "srt:untrusted/proxy-env-dead#proxy-env-dead"}}},
		model.Scenario{Name: "failclosed/socat-missing", Outcome: model.SandboxFailed, Pass: true, Hint: "refused loudly"},
		model.Scenario{Name: "odd=name", Outcome: model.SandboxFailed, Pass: true},
		model.Scenario{Name: "concurrency/shared-workspace/k4", Outcome: model.Correct, Pass: true,
			Unreproduced: "srt:concurrency/shared-workspace/k4#leftover:.claude, srt:concurrency/shared-workspace/k4#session"},
	)
	return r
}

func TestKeepsEvidence(t *testing.T) {
	known := fullTrial(3)
	for _, c := range []struct {
		name string
		mod  func(*model.Record)
		want bool
	}{
		{"first trial of the cell", func(r *model.Record) { r.Trial = 0 }, true},
		{"only known findings", func(r *model.Record) {}, false},
		{"all passed", func(r *model.Record) {
			r.Outcome = model.Correct
			r.Scenarios = r.Scenarios[:45]
		}, false},
		{"a failure no finding covers", func(r *model.Record) { r.Scenarios[2].Pass, r.Scenarios[2].Outcome = false, model.ProxyDead }, true},
		{"a spec's harness error", func(r *model.Record) { r.Scenarios[2].Pass, r.Scenarios[2].Outcome = false, model.HarnessError }, true},
		{"egress", func(r *model.Record) { r.Egress = []string{"denied http GET /x"} }, true},
		{"timed out", func(r *model.Record) { r.TimedOut = true }, true},
		{"harness trouble", func(r *model.Record) { r.Error = "host lost" }, true},
		{"trial outcome harness-error", func(r *model.Record) { r.Outcome = model.HarnessError }, true},
		{"no scenario reported", func(r *model.Record) { r.Scenarios = nil }, true},
	} {
		r := known
		r.Scenarios = append([]model.Scenario(nil), known.Scenarios...)
		c.mod(&r)
		if got := KeepsEvidence(r); got != c.want {
			t.Errorf("%s: KeepsEvidence = %v, want %v", c.name, got, c.want)
		}
	}
}

// A compact record is small, and reads back as the same verdicts: what reports count survives.
func TestCompactRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	full := fullTrial(3)
	writeAll(t, path, full, Compacted(full))
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	if n := len(lines[1]); n > 4096 {
		t.Fatalf("compact record of 52 scenarios is %d bytes, want <= 4096:\n%s", n, lines[1])
	}
	t.Logf("full %d bytes, compact %d bytes", len(lines[0]), len(lines[1]))
	got, _, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	c := got[1]
	if !c.Compact || c.Evidence != nil || c.HostFP != nil || c.HostFPRef != FingerprintRef(full.HostFP) || c.V != SchemaVersion {
		t.Fatalf("compact record header: %+v", c)
	}
	if c.Outcome != full.Outcome || c.Hint != full.Hint || c.DurationMS != full.DurationMS || !reflect.DeepEqual(c.PhasesMS, full.PhasesMS) {
		t.Fatalf("compact record lost trial fields: %+v", c)
	}
	if len(c.Scenarios) != len(full.Scenarios) {
		t.Fatalf("%d scenarios, want %d", len(c.Scenarios), len(full.Scenarios))
	}
	for i, s := range c.Scenarios {
		w := full.Scenarios[i]
		w.Hint, w.Labels = "", nil
		if !reflect.DeepEqual(s, w) {
			t.Fatalf("scenario %d: %+v, want %+v", i, s, w)
		}
	}
	if f := got[0]; f.Compact || len(f.Evidence) == 0 || len(f.Scenarios[0].Labels) == 0 {
		t.Fatalf("full record lost its evidence or labels")
	}
}

// Journals written before compact records existed (schema v1) read as they always did.
func TestReadsV1Journals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	v1 := `{"v":1,"run_id":"old","cell":{"id":"c","target":"srt","host":"local"},"trial":0,"outcome":"correct","scenarios":[{"name":"network/seed","labels":["network"],"outcome":"correct","pass":true,"hint":"ok"}],"evidence":{"x":1},"start":"2026-01-02T03:04:05Z","duration_ms":900}` + "\n"
	os.WriteFile(path, []byte(v1), 0o644)
	got, _, err := readAll(t, path)
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	r := got[0]
	if r.V != 1 || r.Compact || string(r.Evidence) != `{"x":1}` || r.Scenarios[0].Hint != "ok" || r.Scenarios[0].Labels[0] != "network" {
		t.Fatalf("v1 record: %+v", r)
	}
}

func TestCompactScenarioStrings(t *testing.T) {
	for in, want := range map[string]model.Scenario{
		`"network/seed"`:                      {Name: "network/seed", Outcome: model.Correct, Pass: true},
		`"failclosed/x=sandbox-failed"`:       {Name: "failclosed/x", Outcome: model.SandboxFailed, Pass: true},
		`"odd\"name"`:                         {Name: `odd"name`, Outcome: model.Correct, Pass: true},
		`{"name":"a","outcome":"proxy-dead"}`: {Name: "a", Outcome: model.ProxyDead},
	} {
		var s model.Scenario
		if err := json.Unmarshal([]byte(in), &s); err != nil || !reflect.DeepEqual(s, want) {
			t.Errorf("%s: %+v %v, want %+v", in, s, err, want)
		}
	}
}

// An information scenario's hint is its reading (the limits class's "not limited: ..."): a
// compact record keeps it, and only its.
func TestCompactKeepsInformation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	full := fullTrial(1)
	full.Scenarios = []model.Scenario{
		{Name: "bypass/limits/disk", Outcome: model.Correct, Pass: true, Info: true, Hint: "not limited: 128 MiB written"},
		{Name: "network/seed", Outcome: model.Correct, Pass: true, Hint: "every channel as the policy says"},
	}
	writeAll(t, path, Compacted(full))
	got, _, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if s := got[0].Scenarios; len(s) != 2 || s[0].Hint != "not limited: 128 MiB written" || !s[0].Info || s[1].Hint != "" {
		t.Fatalf("compact scenarios read back: %+v", s)
	}
}
