package specreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// EmitPrefix starts the one line of a trial's stdout that carries its verdict. Any host that can
// run `sandcheck trial --emit` and return its stdout (a container, ssh, wsl.exe, a VM's serial
// console) can therefore deliver a trial: no shared filesystem is needed.
const EmitPrefix = "SANDCHECK-TRIAL-RESULT "

type emitted struct {
	Trial
	HostFP json.RawMessage `json:"host_fp,omitempty"`
}

// Emit writes the trial's verdict line.
func Emit(w io.Writer, t Trial, hostFP json.RawMessage) error {
	b, err := json.Marshal(emitted{t, hostFP})
	if err != nil {
		return fmt.Errorf("emit trial result: %w", err)
	}
	_, err = fmt.Fprintf(w, "\n%s%s\n", EmitPrefix, b)
	return err
}

// ErrNoResult means the output held no verdict line: the trial died before it could say.
var ErrNoResult = errors.New("no " + EmitPrefix + "line in the trial's output")

// ParseEmitted finds the last verdict line in stdout.
func ParseEmitted(stdout []byte) (Trial, json.RawMessage, error) {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		if line := sc.Bytes(); bytes.HasPrefix(line, []byte(EmitPrefix)) {
			last = append(last[:0], line[len(EmitPrefix):]...)
		}
	}
	if last == nil {
		return Trial{}, nil, ErrNoResult
	}
	var e emitted
	if err := json.Unmarshal(last, &e); err != nil {
		return Trial{}, nil, fmt.Errorf("parse trial result: %w", err)
	}
	return e.Trial, e.HostFP, nil
}
