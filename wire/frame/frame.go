// Package frame is the one line of contract between a trial process and the runner: the trial's
// verdict (ResultPrefix) and every fixture hit it counts as egress (EgressPrefix), each framed
// with the trial's secret key, on stdout. Any host that can run `sandcheck trial` and return
// its output (a container, ssh, wsl.exe, a VM's serial console) can so deliver a trial, and the
// runner reads it without knowing anything of the specs that made it.
package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/model"
)

// ResultPrefix starts the one line of a trial's stdout that carries its verdict. Any host that can
// run `sandcheck trial --emit` and return its stdout (a container, ssh, wsl.exe, a VM's serial
// console) can therefore deliver a trial: no shared filesystem is needed.
//
// The runner gives every trial a random key (on its stdin, never in an argv or environment) and accepts only lines
// carrying it, `SANDCHECK-TRIAL-RESULT <key> {json}`: a sandboxed command that prints a frame of
// its own cannot know the key, so it cannot turn a failing trial into a pass. A trial started
// by hand, without a key, writes the unkeyed `SANDCHECK-TRIAL-RESULT {json}`.
const ResultPrefix = "SANDCHECK-TRIAL-RESULT "

// EgressPrefix starts a line streamed while the trial runs, one per hit on a fixture server:
// `SANDCHECK-EGRESS <key> {hit json}`. A trial killed at its deadline leaves these behind, so
// the runner still sees what reached the fixture servers before the kill.
const EgressPrefix = "SANDCHECK-EGRESS "

// MaxLine is the longest output line the parsers read. A longer line is an error, never a line
// silently skipped: it could hide the frame.
const MaxLine = 8 << 20

// Trial is what a trial process reports of itself.
type Trial struct {
	Outcome   model.Outcome    `json:"outcome"`
	Hint      string           `json:"hint,omitempty"`
	Scenarios []model.Scenario `json:"scenarios"`
	Evidence  json.RawMessage  `json:"evidence,omitempty"`
	// PhasesMS is where the trial process's time went, per phase (suites/harness/phases), in ms.
	PhasesMS map[string]int64 `json:"phases_ms,omitempty"`
	// Families is what each scenario family's specs cost: time and sandbox starts.
	Families map[string]model.FamilyCost `json:"families,omitempty"`
}

type emitted struct {
	Trial
	HostFP json.RawMessage `json:"host_fp,omitempty"`
}

// Emit writes the trial's verdict line, keyed when key is not empty.
func Emit(w io.Writer, key string, t Trial, hostFP json.RawMessage) error {
	b, err := json.Marshal(emitted{t, hostFP})
	if err != nil {
		return fmt.Errorf("emit trial result: %w", err)
	}
	if _, err := w.Write(frame(ResultPrefix, key, b)); err != nil {
		return fmt.Errorf("emit trial result: %w", err)
	}
	return nil
}

// EmitEgress writes one fixture hit as an egress line. One Write per line, starting with a
// newline, so that output another goroutine left mid-line cannot swallow the prefix.
func EmitEgress(w io.Writer, key string, hit model.Hit) error {
	b, err := json.Marshal(hit)
	if err != nil {
		return fmt.Errorf("emit egress: %w", err)
	}
	if _, err := w.Write(frame(EgressPrefix, key, b)); err != nil {
		return fmt.Errorf("emit egress: %w", err)
	}
	return nil
}

func frame(prefix, key string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\n" + prefix)
	if key != "" {
		b.WriteString(key + " ")
	}
	b.Write(body)
	b.WriteString("\n")
	return b.Bytes()
}

// ErrNoResult means the output held no verdict line: the trial died before it could say.
var ErrNoResult = errors.New("no " + strings.TrimSpace(ResultPrefix) + " line in the trial's output")

// Parse reads the verdict line of the trial keyed key. With a key, only lines carrying it
// count, and two of them that differ are an error (someone else knows the key). Without a key,
// the last unkeyed line counts (a trial run by hand). An output line longer than MaxLine is an
// error.
func Parse(stdout []byte, key string) (Trial, json.RawMessage, error) {
	bodies, err := frames(stdout, ResultPrefix, key)
	if err != nil {
		return Trial{}, nil, err
	}
	if len(bodies) == 0 {
		return Trial{}, nil, ErrNoResult
	}
	last := bodies[len(bodies)-1]
	if key != "" {
		for _, b := range bodies {
			if !bytes.Equal(b, last) {
				return Trial{}, nil, fmt.Errorf("%d different %s lines carry the trial's key", len(bodies), strings.TrimSpace(ResultPrefix))
			}
		}
	}
	var e emitted
	if err := json.Unmarshal(last, &e); err != nil {
		return Trial{}, nil, fmt.Errorf("parse trial result: %w", err)
	}
	return e.Trial, e.HostFP, nil
}

// ParseEgress reads the egress lines of the trial keyed key (unkeyed lines when key is ""), in
// order. The hits read before an error are returned with it: an unreadable line elsewhere must
// not hide egress that was seen.
func ParseEgress(stdout []byte, key string) ([]model.Hit, error) {
	bodies, ferr := frames(stdout, EgressPrefix, key)
	hits := make([]model.Hit, 0, len(bodies))
	var errs []error
	for _, b := range bodies {
		var h model.Hit
		if err := json.Unmarshal(b, &h); err != nil {
			errs = append(errs, fmt.Errorf("parse egress line %.80q: %w", b, err))
			continue
		}
		hits = append(hits, h)
	}
	return hits, errors.Join(append([]error{ferr}, errs...)...)
}

// frames returns the bodies of the lines framed with prefix and key. It reads every line, even
// past an over-long one (reported as an error once done), so the frames around it still count.
func frames(out []byte, prefix, key string) ([][]byte, error) {
	var bodies [][]byte
	var long int
	want := []byte(prefix)
	if key != "" {
		want = append(want, key+" "...)
	}
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		if len(line) > MaxLine {
			long++
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		body, ok := bytes.CutPrefix(line, want)
		if !ok {
			continue
		}
		if key == "" && !bytes.HasPrefix(body, []byte("{")) {
			continue // a keyed line, for a runner that knows the key
		}
		bodies = append(bodies, body)
	}
	if long > 0 {
		return bodies, fmt.Errorf("trial output has %d line(s) longer than %d MiB; a result frame there cannot be read", long, MaxLine>>20)
	}
	return bodies, nil
}
