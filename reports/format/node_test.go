package format

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// nodeModules finds a node_modules folder holding pkg: $SANDCHECK_NODE_MODULES, else
// testdata/node/node_modules (npm install --prefix reports/format/testdata/node). These tests
// check our output against real third-party consumers; without them they skip, loudly.
func nodeModules(t *testing.T, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		skip.Missing(t, "node is not installed; cannot check reports against real consumers")
	}
	var cands []string
	if env := os.Getenv("SANDCHECK_NODE_MODULES"); env != "" {
		cands = append(cands, env, filepath.Join(env, "node_modules"))
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", "node", "node_modules"))
	cands = append(cands, abs)
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, pkg, "package.json")); err == nil {
			return c
		}
	}
	skip.Missing(t, "npm package %s not found (run `npm install --prefix reports/format/testdata/node` or set SANDCHECK_NODE_MODULES)", pkg)
	return ""
}

func runNode(t *testing.T, nodeModules, script string, out any, args ...string) {
	t.Helper()
	abs, _ := filepath.Abs(filepath.Join("testdata", "node", script))
	cmd := exec.Command("node", append([]string{abs}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	b, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node %s: %v\n%s", script, err, ee.Stderr)
		}
		t.Fatalf("node %s: %v", script, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node %s output: %v\n%s", script, err, b)
	}
}
