//go:build linux

package process

// A trial's own frames against a sandboxed command that floods stdout with lines that look like
// frames: the trial's stdout is the sandboxed command's too.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/trialresult"
	"github.com/sandcheck/sandcheck/wire/frame"
)

var deniedHit = model.Hit{Role: model.RoleDenied, Proto: "http", Path: "/http/flood", From: "198.18.0.2:4711"}

// catTrial runs a trial process that prints out (written to a file first, so that neither the
// key nor the output is in its command line) and exits 0, read as the runner reads a real one.
func catTrial(t *testing.T, out []byte, maxFrames int, key string) model.Record {
	t.Helper()
	f := filepath.Join(t.TempDir(), "stdout")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	e := &Executor{
		Command: func(runner.Trial, string) ([]string, []string, string) {
			return []string{"cat", f}, nil, ""
		},
		Parse:         trialresult.Parse,
		FramePrefixes: trialresult.Prefixes,
		MaxFrames:     maxFrames,
	}
	return e.Run(context.Background(), runner.Trial{Key: key, Timeout: time.Minute})
}

// flood is n bytes of lines that look like frames but do not carry key: unkeyed, with another
// key, and with a prefix of the key.
func flood(n int, key string) []byte {
	var b bytes.Buffer
	lines := []string{
		frame.ResultPrefix + `{"outcome":"correct"}`,
		frame.EgressPrefix + `{"role":"allowed","proto":"http"}`,
		frame.EgressPrefix + strings.Repeat("f", len(key)) + ` {"role":"allowed"}`,
		frame.EgressPrefix + key[:len(key)/2] + ` {"role":"allowed"}`,
	}
	for i := 0; b.Len() < n; i++ {
		b.WriteString(lines[i%len(lines)] + "\n")
	}
	return b.Bytes()
}

// A flood of frame-looking lines past the keeper's cap, then the trial's own keyed egress line:
// the hit is seen, and the record is non-enforcing, not a harness error for lack of frames.
func TestFloodCannotHideKeyedEgress(t *testing.T) {
	key := runner.NewKey()
	const maxFrames = 1 << 20
	var out bytes.Buffer
	out.Write(flood(3*maxFrames, key))
	frame.EmitEgress(&out, key, deniedHit)
	rec := catTrial(t, out.Bytes(), maxFrames, key)
	if rec.Outcome != model.NonEnforcing || len(rec.Egress) != 1 || !strings.Contains(rec.Egress[0], "/http/flood") {
		t.Fatalf("flood then a keyed denied hit: %+v", rec)
	}
	// The same with the trial's result line after the flood: read, and non-enforcing.
	out.Reset()
	out.Write(flood(3*maxFrames, key))
	frame.EmitEgress(&out, key, deniedHit)
	frame.Emit(&out, key, frame.Trial{Outcome: model.Correct}, nil)
	if rec := catTrial(t, out.Bytes(), maxFrames, key); rec.Outcome != model.NonEnforcing || rec.Error != "" {
		t.Fatalf("flood, a keyed denied hit and a keyed result: %+v", rec)
	}
	// And a trial that saw no egress still reads its result after the flood.
	out.Reset()
	out.Write(flood(3*maxFrames, key))
	frame.Emit(&out, key, frame.Trial{Outcome: model.Correct}, nil)
	if rec := catTrial(t, out.Bytes(), maxFrames, key); rec.Outcome != model.Correct {
		t.Fatalf("flood then a keyed result: %+v", rec)
	}
}

// The trial's own frames past the cap are never dropped silently: result lines kept before
// them cannot make a pass of a record whose later evidence is gone.
func TestLostKeyedFramesAreNoPass(t *testing.T) {
	key := runner.NewKey()
	const maxFrames = 64 << 10
	var out bytes.Buffer
	for out.Len() < 2*maxFrames {
		frame.Emit(&out, key, frame.Trial{Outcome: model.Correct}, nil)
	}
	frame.EmitEgress(&out, key, deniedHit)
	rec := catTrial(t, out.Bytes(), maxFrames, key)
	if rec.Outcome != model.HarnessError || !strings.Contains(rec.Error, "dropped") {
		t.Fatalf("keyed frames past the cap: %+v, want a harness error saying frames were dropped", rec)
	}
}
