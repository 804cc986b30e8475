//go:build linux

package network

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// The probe is this test binary when a recording runs it inside a sandbox.
func TestMain(m *testing.M) {
	probe.MaybeRun()
	os.Exit(m.Run())
}

// recordedFaults are the real runs suites/classify's table tests classify, one file per fault
// ("none" is the healthy run).
var recordedFaults = []string{"none", "bridge-absent", "bridge-late", "bridge-mid", "host-bridge-dies", "netns-shared", "open-proxy", "policy-allows-denied"}

// TestRecordClassifyTestdata re-records suites/classify/testdata from real srt runs on this
// machine, one network trial per fault, as network.Trial JSON:
//
//	SANDCHECK_RECORD=1 go test ./suites/harness/network -run TestRecordClassifyTestdata -v
//
// It needs root and the real srt (make deps). It is a recorder, not a check: what the recordings
// must classify as is asserted by suites/classify's tests.
func TestRecordClassifyTestdata(t *testing.T) {
	if os.Getenv("SANDCHECK_RECORD") != "1" {
		skip.Tier(t, "recorder only; set SANDCHECK_RECORD=1 to re-record suites/classify/testdata from real srt runs")
	}
	for _, f := range recordedFaults {
		t.Run(f, func(t *testing.T) {
			fault := f
			if f == "none" {
				fault = ""
			}
			t.Cleanup(config.With(func(e *config.Env) { e.Fault = fault }))
			cfg, err := harness.FromEnv()
			if err != nil {
				t.Fatal(err)
			}
			nt, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(nt, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join("..", "..", "classify", "testdata", f+".json")
			if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s (%s)", out, nt.Result.Outcome, nt.Result.Hint)
		})
	}
}
