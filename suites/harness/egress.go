//go:build linux

package harness

import (
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// OnEgress is called, when set, for every hit on a fixture server that is egress under the
// trial's target (classify.Egress: anything but the allowed host; any hit at all for a deny-all
// sandbox; the allowed host reached around the proxy where the target promises no such way) as
// it happens, from the servers' goroutines and so possibly concurrently: `sandcheck trial
// --emit` streams them, so that a trial killed at its deadline still leaves its evidence
// behind. Set it before a trial starts.
var OnEgress func(model.Hit)

// streamer hands the hits that are egress under reach to OnEgress, read at call time.
func streamer(reach []string) func(model.Hit) {
	return func(h model.Hit) {
		if f := OnEgress; f != nil && classify.Egress(h, reach) {
			f(h)
		}
	}
}
