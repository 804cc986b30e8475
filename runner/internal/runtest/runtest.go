// Package runtest is what the runner's tests and its process executor's tests share: fake cells,
// and a journal read that fails on a trial journaled twice.
package runtest

import (
	"fmt"
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
