package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Output is what the harness learns from a sandboxed run's stdout.
type Output struct {
	Ran bool         // the SANDBOX-RAN marker with our nonce appeared: the command really ran
	Obs *Observation // nil when the probe did not finish (or its frame could not be trusted)
}

// MaxLine is the longest output line Parse reads. A longer one is an error, never skipped: the
// frame could be behind it.
const MaxLine = 8 << 20

// Parse finds the probe's framed output for nonce in stdout. A marker with another nonce is not
// ours (stale output, or something inside echoing markers) and is ignored. The nonce is in the
// probe's argv and spec, so whatever runs inside the sandbox can know it: a frame is taken only
// between BEGIN and END markers carrying it, identical repeats are harmless, and anything else
// (two frames that differ, a frame opened twice or never closed, an END without a BEGIN, output
// that could not be read to its end) is an error, with Obs left nil when frames disagree.
func Parse(stdout []byte, nonce string) (Output, error) {
	var out Output
	ran, begin, end := RanMarker+" "+nonce, BeginMarker+" "+nonce, EndMarker+" "+nonce
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64*1024), MaxLine)
	inside := false
	var body []byte
	var frames [][]byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == ran:
			out.Ran = true
		case line == begin:
			if inside {
				return out, fmt.Errorf("observation frame %s opened twice without an end", nonce)
			}
			inside, body = true, nil
		case line == end:
			if !inside {
				return out, fmt.Errorf("observation end marker %s without a begin", nonce)
			}
			inside = false
			frames = append(frames, body)
		case inside:
			body = append(body, strings.TrimSpace(line)...)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read sandbox output (lines up to %d bytes; nothing after this point was read, frame included): %w", MaxLine, err)
	}
	if inside {
		return out, fmt.Errorf("observation frame %s begun but never ended", nonce)
	}
	if len(frames) == 0 {
		return out, nil
	}
	for _, f := range frames[1:] {
		if !bytes.Equal(f, frames[0]) {
			return out, fmt.Errorf("two observations for one nonce %s that differ (%d frames): one of them was not printed by the probe", nonce, len(frames))
		}
	}
	var o Observation
	if err := json.Unmarshal(frames[0], &o); err != nil {
		return out, fmt.Errorf("parse observation: %w", err)
	}
	if o.Nonce != nonce {
		return out, fmt.Errorf("observation nonce %q, want %q", o.Nonce, nonce)
	}
	out.Obs = &o
	return out, nil
}
