package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/targets/codex"
)

const adapterTrials = 5

// proxyOnly are the network specs that need a proxy: on a deny-all sandbox they are
// not-applicable, in every trial, and never counted as passes or failures.
var proxyOnly = []string{"network/proxy-alive", "network/allowed-reachable", "network/channel/http", "network/channel/https", "network/channel/socks"}

// adapterCase is one sandbox and the faults that must be flagged in it.
type adapterCase struct {
	target string
	faults map[string][]string // fault -> scenarios that must be non-enforcing in every trial
	env    []string
	// available says why the sandbox cannot run here ("" = it can).
	available func() string
	// known: healthy scenarios that fail in every trial, covered by this known finding id.
	known map[string]string
}

func lookFor(tool string) func() string {
	return func() string {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not installed (run `make deps`)"
		}
		return ""
	}
}

// TestAdapters drives each real deny-all sandbox through the network and filesystem scenarios:
// healthy, every applicable spec passes in every trial and the proxy-only specs are
// not-applicable; with a fault through the sandbox's own seam, the escape is flagged every time.
func TestAdapters(t *testing.T) {
	requireSandbox(t)
	netns := []string{"network/seed", "network/enforcing", "network/channel/direct"}
	// A sandbox sandcheck does not know, from templates: bubblewrap with the network unshared,
	// TMPDIR in the workspace, no deny-read (so those checks are not-applicable).
	command, _ := json.Marshal(map[string]any{
		"argv": []string{"bwrap", "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
			"--bind", "{{.Workspace}}", "{{.Workspace}}", "--chdir", "{{.Workspace}}", "--", "env", "TMPDIR={{.Workspace}}", "{{.Argv}}"},
		"capabilities": []string{"deny-all-network", "writable-paths"},
		"reach":        []string{},
	})
	cases := []adapterCase{
		{target: "bwrap", available: lookFor("bwrap"), faults: map[string][]string{
			"netns-shared": netns,
			"fs-rw-root":   {"filesystem/isolation", "filesystem/outside/home"},
		}},
		{target: "firejail", available: lookFor("firejail"), faults: map[string][]string{"netns-shared": netns},
			// As a user other than root, --read-only=/ leaves HOME writable (targets/firejail/knownfindings.yaml).
			known: map[string]string{
				"filesystem/outside/home": "firejail@unprivileged:filesystem/outside/home#$HOME/sandcheck-fs-*",
				"filesystem/isolation":    "firejail@unprivileged:filesystem/outside/home#$HOME/sandcheck-fs-*",
			}},
		// Codex in its deny-all shape (its allow-list proxy: TestCodexProxy).
		{target: "codex", available: func() string {
			if _, err := codex.Locate(""); err != nil {
				return err.Error()
			}
			return ""
		}, env: []string{`SANDCHECK_TARGET_SETTINGS={"network":"deny-all"}`}, faults: map[string][]string{"netns-shared": netns}},
		{target: "command", available: lookFor("bwrap"), env: []string{"SANDCHECK_TARGET_SETTINGS=" + string(command)},
			faults: map[string][]string{"netns-shared": netns}},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			if why := c.available(); why != "" {
				skip.Missing(t, "%s: %s", c.target, why)
			}
			args := []string{"--target", c.target, "-n", fmt.Sprint(adapterTrials), "-j", "2", "--label-filter", "network || filesystem || failclosed", "--fault", ""}
			for f := range c.faults {
				args = append(args, "--fault", f)
			}
			rep := runReportEnv(t, c.env, args...)
			r := rows(rep)
			seen := 0
			for _, row := range rep.Cells {
				if row.Fault != "" {
					continue
				}
				seen++
				if row.Trials != adapterTrials {
					t.Errorf("%s: %d trials, want %d", row.Scenario, row.Trials, adapterTrials)
				}
				if id, ok := c.known[row.Scenario]; ok {
					if k := row.Known()[id]; k.Trials != adapterTrials {
						t.Errorf("healthy %s %s: known finding %s in %d/%d trials (%v), want all%s", c.target, row.Scenario, id, k.Trials, adapterTrials, row.Outcomes, why(row))
					}
				} else if row.Failures != 0 {
					t.Errorf("healthy %s %s: %d/%d failed: %v%s", c.target, row.Scenario, row.Failures, row.Trials, row.Outcomes, why(row))
				}
			}
			if seen < 30 {
				t.Errorf("healthy: only %d scenarios reported", seen)
			}
			// The fail-closed condition every sandbox meets: no CAP_SYS_ADMIN. Refusing loudly
			// (firejail) and still enforcing another way (bwrap via user namespaces) both pass.
			if row, ok := r["|failclosed/no-cap-sys-admin"]; !ok || row.Failures != 0 || row.Trials != adapterTrials {
				t.Errorf("failclosed/no-cap-sys-admin: %+v%s", row.Outcomes, why(row))
			}
			for _, s := range proxyOnly {
				if row := r["|"+s]; row.Outcomes["not-applicable"] != adapterTrials {
					t.Errorf("%s: outcomes %v, want not-applicable in all %d", s, row.Outcomes, adapterTrials)
				}
			}
			for _, s := range []string{"network/seed", "network/enforcing", "network/channel/direct", "filesystem/isolation", "filesystem/outside/home"} {
				if _, known := c.known[s]; known {
					continue
				}
				if row := r["|"+s]; row.Outcomes["correct"] != adapterTrials {
					t.Errorf("%s: outcomes %v, want correct in all %d%s", s, row.Outcomes, adapterTrials, why(row))
				}
			}
			// The sandbox runs as the unprivileged user, who cannot write /etc without it either.
			if row := r["|filesystem/outside/etc"]; row.Outcomes["not-applicable"] != adapterTrials {
				t.Errorf("filesystem/outside/etc: outcomes %v, want not-applicable in all %d%s", row.Outcomes, adapterTrials, why(row))
			}
			for fault, scenarios := range c.faults {
				for _, s := range scenarios {
					row, ok := r[fault+"|"+s]
					if !ok || row.Outcomes["non-enforcing"] != adapterTrials {
						t.Errorf("%s under %s: outcomes %v, want non-enforcing in all %d%s", s, fault, row.Outcomes, adapterTrials, why(row))
					}
				}
			}
		})
	}
}

// runReportEnv is runReport with extra environment for the runner (and so for its trials).
func runReportEnv(t *testing.T, env []string, args ...string) *schema.Report {
	t.Helper()
	rep, _ := runReportOut(t, env, args...)
	return rep
}

// runReportRows is runReportEnv that also reads the run's journal into rows, for the start-up
// race allowances (startRace).
func runReportRows(t *testing.T, env []string, args ...string) (*schema.Report, journalRows) {
	t.Helper()
	rep, out := runReportOut(t, env, args...)
	return rep, readJournalRows(t, out)
}

// runReportOut runs `sandcheck run` and returns its report and its --out directory.
func runReportOut(t *testing.T, env []string, args ...string) (*schema.Report, string) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(bin, append([]string{"run", "--plain", "--out", out}, args...)...)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+tmp), env...)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); !measured(err) {
		t.Fatalf("sandcheck run %v: %v\n%s", args, err, b)
	}
	account(t, out, time.Since(start))
	rep, err := schema.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		var b strings.Builder
		for _, c := range rep.Cells {
			fmt.Fprintf(&b, "\n  %-14s %-45s %v", c.Fault, c.Scenario, c.Outcomes)
		}
		t.Logf("%v:%s", args, b.String())
	}
	return rep, out
}
