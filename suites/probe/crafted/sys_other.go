//go:build !linux

package crafted

// The probe runs inside Linux sandboxes only; elsewhere these requests are reported skipped.

func icmpEcho(_ spec, _ Request, res *Result)     { res.Skipped = "icmp: Linux only" }
func uringRequest(_ spec, _ Request, res *Result) { res.Skipped = "io_uring: Linux only" }
func tiocsti(_ spec, _ Request, res *Result)      { res.Skipped = "TIOCSTI: Linux only" }
func signalMarked(_ Request, res *Result)         { res.Skipped = "signals: Linux only" }
