package fswrite

import (
	"encoding/json"
	"fmt"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/srtrun"
)

// trial is what the hook's and the TMPDIR's scripts read of a filesystem trial: the sandbox, its
// release and fault, its settings, its command line and its working directory.
type trial struct {
	Target        string          `json:"target"`
	TargetVersion string          `json:"target_version"`
	Fault         string          `json:"fault"`
	Settings      json.RawMessage `json:"settings"`
	Run           struct {
		Argv []string `json:"argv"`
	} `json:"run"`
	Dir string `json:"dir"`
}

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
func (e *trial) srt() srtrun.Run {
	return srtrun.Run{Target: e.Target, Version: e.TargetVersion, Fault: e.Fault, Settings: e.Settings, Argv: e.Run.Argv}
}
