//go:build linux

package trial

import (
	"strconv"

	"github.com/sandcheck/sandcheck/fixtures/sentinel"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// sentinels keep, for every case that signals (crafted.ViaSignal), a process of the sandbox's
// user running outside the sandbox, marked with the case's payload: the request's Addr. Its
// death is a hit of the fixture's (model.RoleSentinel), logged by its parent here, so what
// killed it is decided outside the sandbox. The unsandboxed control kills one (the positive
// control); the sandboxed run gets fresh ones.
type sentinels struct {
	t       *harness.Trial
	markers []string
	running []*sentinel.Sentinel
}

// watchSignals marks every signalling case of cases with its sentinel's marker.
func watchSignals(t *harness.Trial, cases []Case) *sentinels {
	w := &sentinels{t: t}
	for i, c := range cases {
		if c.Raw.Via == crafted.ViaSignal && c.NotApplicable == "" {
			cases[i].Raw.Addr = crafted.Payload(t.Nonce, c.Raw.ID)
			w.markers = append(w.markers, cases[i].Raw.Addr)
		}
	}
	return w
}

// start runs a sentinel for every marker.
func (w *sentinels) start() error {
	for _, marker := range w.markers {
		s, err := sentinel.Start(w.t.ProbeBin, marker, func(argv []string) []string { return w.t.Account.Command(argv, nil) }, w.t.Env,
			func(pid int, how string) {
				w.t.Hosts.Record(model.Hit{Role: model.RoleSentinel, Proto: model.ProtoSignal, Path: marker, Detail: how, From: "pid " + strconv.Itoa(pid)})
			})
		if err != nil {
			w.stop()
			return err
		}
		w.running = append(w.running, s)
	}
	return nil
}

// stop ends every sentinel; when it returns, any death but its own is on the fixture's record.
func (w *sentinels) stop() {
	for _, s := range w.running {
		s.Stop()
	}
	w.running = nil
}
