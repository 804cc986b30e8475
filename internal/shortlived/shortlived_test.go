package shortlived

import (
	"runtime"
	"runtime/debug"
	"testing"
)

var sink [][]byte

// Below the limit nothing is collected; past it the runtime collects again, so the heap stays
// near the limit however much is allocated.
func TestNoGCBelowCollectsOnlyNearTheLimit(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const limit = 64 << 20
	NoGCBelow(limit)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 8 << 10 { // 8 MB in 1 KB pieces, dropped as they go
		sink = append(sink[:0], make([]byte, 1<<10))
	}
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC {
		t.Errorf("%d collections below the limit", after.NumGC-before.NumGC)
	}
	for range 256 << 10 { // 256 MB: four times the limit
		sink = append(sink[:0], make([]byte, 1<<10))
	}
	runtime.ReadMemStats(&after)
	if after.NumGC == before.NumGC || after.HeapAlloc > 2*limit {
		t.Errorf("past the limit: %d collections, heap %d MB", after.NumGC-before.NumGC, after.HeapAlloc>>20)
	}
}

// GOGC or GOMEMLIMIT in the environment: the process collects as they say.
func TestNoGCBelowLeavesAnExplicitSetting(t *testing.T) {
	t.Setenv("GOGC", "50")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	before := debug.SetGCPercent(100)
	debug.SetGCPercent(before)
	NoGCBelow(64 << 20)
	if got := debug.SetGCPercent(before); got != before {
		t.Errorf("GC percent %d, want %d (GOGC set)", got, before)
	}
}
