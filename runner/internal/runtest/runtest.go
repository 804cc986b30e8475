// Package runtest is what the runner's tests and its process executor's tests share: fake cells,
// and a journal read that fails on a trial journaled twice.
package runtest

import (
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// Cells returns n cells of the fake target on the local host, one per fault (fault0, fault1, ...).
func Cells(n int) []model.Cell {
	var cells []model.Cell
	for i := range n {
		f := fmt.Sprintf("fault%d", i)
		cells = append(cells, model.Cell{ID: matrix.CellID("fake", "local", f, ""), Target: "fake", Host: "local", Fault: f})
	}
	return cells
}

// Key names one trial of a run: its cell and index.
type Key struct {
	Cell  string
	Trial int
}

// JournalKeys reads a journal and fails on any duplicate (cell, trial).
func JournalKeys(t testing.TB, path string) (map[Key]model.Record, []string) {
	t.Helper()
	got := map[Key]model.Record{}
	warn, err := journal.Scan(path, func(r model.Record) error {
		k := Key{r.Cell.ID, r.Trial}
		if _, dup := got[k]; dup {
			return fmt.Errorf("trial %v journaled twice", k)
		}
		got[k] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, warn
}

// Draw is the outcome a fake trial gets: drawn from p (the probability of each outcome; the rest
// is correct) by Uniform, so a rerun, a resume or another -j gives every trial the same one.
func Draw(seed uint64, p map[model.Outcome]float64, cell string, index int) model.Outcome {
	u := Uniform(seed, cell, index)
	acc := 0.0
	for _, o := range model.All {
		if o == model.Correct {
			continue
		}
		acc += p[o]
		if u < acc {
			return o
		}
	}
	return model.Correct
}

// Uniform is a deterministic uniform number in [0, 1) for (seed, cell, index).
func Uniform(seed uint64, cell string, index int) float64 {
	h := fnv.New64a()
	h.Write([]byte(cell))
	x := h.Sum64() ^ seed ^ uint64(index)*0x9e3779b97f4a7c15
	// splitmix64 finalizer: fnv alone correlates neighbouring indexes.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / math.Exp2(53)
}
