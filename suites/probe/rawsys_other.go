//go:build !linux

package probe

// The probe runs inside Linux sandboxes only; elsewhere these requests are reported skipped.

func icmpEcho(_ Spec, _ Raw, res *RawResult)     { res.Skipped = "icmp: Linux only" }
func uringRequest(_ Spec, _ Raw, res *RawResult) { res.Skipped = "io_uring: Linux only" }
func tiocsti(_ Spec, _ Raw, res *RawResult)      { res.Skipped = "TIOCSTI: Linux only" }
