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

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/internal/runtest"
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
		Cells: runtest.Cells(2), Trials: n, Parallel: 2, Dir: filepath.Join(dir, "run"), Resume: true, Timeout: time.Hour,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func countLines(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "\n")
}
