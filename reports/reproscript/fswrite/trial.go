package fswrite

import (
	"encoding/json"
	"fmt"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

// trial is what the hook's and the TMPDIR's scripts read of a filesystem trial: the session's
// evidence as every script reads it.
type trial struct{ srtrun.Evidence }

// readTrial reads rec's filesystem evidence, or says why a script cannot be written from it.
func readTrial(rec model.Record) (*trial, error) {
	var e trial
	if len(rec.Evidence) == 0 || json.Unmarshal(rec.Evidence, &e) != nil || e.Target == "" {
		return nil, fmt.Errorf("the trial kept no filesystem evidence")
	}
	if e.Dir == "" {
		return nil, parts.ErrNoWorkingDir
	}
	return &e, nil
}

// srt is the trial's run as srtrun reads it.
func (e *trial) srt() srtrun.Run { return e.Srt() }
