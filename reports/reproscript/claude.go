package reproscript

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/claudescript"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// claudeRun is a proxy request's trial on Claude Code: `claude -p` as the trial ran it, with the
// files it was given (claudescript.Given), its Bash tool asked for each request by the script's
// own model.
type claudeRun struct {
	raw   json.RawMessage // the session's evidence
	dir   string          // the run's working directory
	given *claudescript.Given
}

// Check reads what the trial gave Claude Code, or says why a script cannot give it again.
func (r *claudeRun) Check() error {
	if r.dir == "" {
		return parts.ErrNoWorkingDir
	}
	g, err := claudescript.ReadGiven(r.raw, filepath.Dir(r.dir))
	if err != nil {
		return err
	}
	r.given = g
	return nil
}

// Open writes the script's opening (see srtrun.Run.Open) for Claude Code, then the files it was
// given, its model and send() (claudescript.Given.WriteSend).
func (r *claudeRun) Open(b *strings.Builder, scenario, why, header, prelude string) error {
	var e struct {
		TargetVersion string `json:"target_version"`
	}
	_ = json.Unmarshal(r.raw, &e)
	named := strings.NewReplacer("SANDBOX=/path/to/srt (default: srt on PATH)", "SANDBOX=/path/to/claude (default: claude on PATH)",
		"set SANDBOX=/path/to/srt", "set SANDBOX=/path/to/claude")
	parts.Opening(b, scenario, "Claude Code", e.TargetVersion, why)
	header = named.Replace(header)
	at := strings.Index(header, "set -eu\n")
	if at < 0 {
		return fmt.Errorf("the request script's header has no set -eu")
	}
	b.WriteString(header[:at] + claudescript.ProxyHeader + header[at:])
	fmt.Fprintf(b, "SANDBOX=${SANDBOX:-claude}\nRUN_AS=${RUN_AS:-%s}\n", r.given.User)
	b.WriteString(named.Replace(prelude))
	r.given.WriteSend(b)
	return nil
}
