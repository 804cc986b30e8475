//go:build linux

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/journal"
)

// The test binary doubles as a runner process to kill -9.
func TestMain(m *testing.M) {
	if os.Getenv("SANDCHECK_TEST_RUNNER") != "" {
		os.Exit(testRunnerMain())
	}
	os.Exit(m.Run())
}

// testRunnerMain is a runner process for the kill -9 test, configured by environment.
func testRunnerMain() int {
	dir := os.Getenv("SANDCHECK_TEST_RUNNER")
	n, _ := strconv.Atoi(os.Getenv("RUNNER_N"))
	exec := &Fake{Seed: 1, Delay: 30 * time.Millisecond, P: map[model.Outcome]float64{model.ProxyDead: 0.2}}
	_, err := Run(context.Background(), exec, Options{
		Cells: testCells(2), Trials: n, Parallel: 2, Dir: filepath.Join(dir, "run"), Resume: true, Timeout: time.Hour,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func testCells(n int) []model.Cell {
	var cells []model.Cell
	for i := range n {
		f := fmt.Sprintf("fault%d", i)
		cells = append(cells, model.Cell{ID: matrix.CellID("fake", "local", f, ""), Target: "fake", Host: "local", Fault: f})
	}
	return cells
}

type key struct {
	cell  string
	trial int
}

// journalKeys reads a journal and fails on any duplicate (cell, trial).
func journalKeys(t *testing.T, path string) (map[key]model.Record, []string) {
	t.Helper()
	got := map[key]model.Record{}
	warn, err := journal.Scan(path, func(r model.Record) error {
		k := key{r.Cell.ID, r.Trial}
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

func countLines(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "\n")
}
