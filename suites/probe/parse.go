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
	Obs *Observation // nil when the probe did not finish
}

// Parse finds the probe's framed output for nonce in stdout. A marker with another nonce is not
// ours (stale output, or something inside echoing markers) and is ignored.
func Parse(stdout []byte, nonce string) (Output, error) {
	var out Output
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64*1024), 8<<20)
	inside := false
	var body []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == RanMarker+" "+nonce:
			out.Ran = true
		case line == BeginMarker+" "+nonce:
			inside = true
		case line == EndMarker+" "+nonce:
			var o Observation
			if err := json.Unmarshal(body, &o); err != nil {
				return out, fmt.Errorf("parse observation: %w", err)
			}
			if o.Nonce != nonce {
				return out, fmt.Errorf("observation nonce %q, want %q", o.Nonce, nonce)
			}
			out.Obs = &o
			return out, nil
		case inside:
			body = append(body, strings.TrimSpace(line)...)
		}
	}
	return out, nil
}
