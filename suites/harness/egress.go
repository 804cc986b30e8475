//go:build linux

package harness

import "github.com/sandcheck/sandcheck/fixtures/nethost"

// OnEgress is called, when set, for every hit on a fixture server (any role, any protocol) as
// it happens, from the servers' goroutines and so possibly concurrently: `sandcheck trial --emit`
// streams them, so that a trial killed at its deadline still leaves its evidence behind. Set it
// before a trial starts. Hits whose Role is not nethost.RoleAllowed are egress (see nethost.Hit).
var OnEgress func(nethost.Hit)

// streamHit hands a hit to OnEgress, read at call time.
func streamHit(h nethost.Hit) {
	if f := OnEgress; f != nil {
		f(h)
	}
}
