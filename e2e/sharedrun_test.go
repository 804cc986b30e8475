package e2e

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// The healthy srt's default matrix (every scenario, as root and as the unprivileged account) is
// run once and judged by every test that asks about it: the users, the filesystem, fail-closed
// and untrusted families, the bypass classes and the trial's own cost accounting. One run of
// the matrix users run (`make run`), rather than one per test of the same trials: the families
// then also share a trial, as they do for users, so a check whose side effects changed another's
// verdict would show here. Issue 32: the same coverage for fewer sandbox starts.
var healthySRT struct {
	once    sync.Once
	owner   string // the test that ran it
	running bool   // it is running now: the cost ledger gives it its own line
	n       int
	rep     *schema.Report
	rows    journalRows
	records []model.Record
}

// sharedRunName is the shared run's line in the cost ledger.
const sharedRunName = "(shared: default matrix, both users)"

// sharedTrials is the trials per cell of the shared run: tierTrials (5 in make test, 20 in the
// long tier), or SANDCHECK_USERS_TRIALS.
func sharedTrials(t *testing.T) int { return envTrials(t, "SANDCHECK_USERS_TRIALS", tierTrials()) }

// envTrials is the positive number in the environment variable name, def when it is unset; any
// other value fails the test.
func envTrials(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// healthySRTRun is the shared run's report, journal rows and trial count, running it first if no
// test has. A failed run fails every test that asks for it.
func healthySRTRun(t *testing.T) (*schema.Report, journalRows, int) {
	t.Helper()
	healthySRT.once.Do(func() {
		healthySRT.owner = t.Name()
		n := sharedTrials(t)
		healthySRT.running = true
		defer func() { healthySRT.running = false }()
		rep, out := runReportOut(t, nil, "-n", strconv.Itoa(n), "-j", "2", "--user", "root", "--user", "unprivileged")
		rows := journalRows{}
		var recs []model.Record
		if _, err := journal.Scan(out+"/journal.jsonl", func(r model.Record) error { rows.add(r); recs = append(recs, r); return nil }); err != nil {
			t.Fatal(err)
		}
		healthySRT.n, healthySRT.rep, healthySRT.rows, healthySRT.records = n, rep, rows, recs
	})
	if healthySRT.rep == nil {
		t.Fatalf("the shared run of the default matrix failed (in %s)", healthySRT.owner)
	}
	return healthySRT.rep, healthySRT.rows, healthySRT.n
}

// rowsOf is rep with only user's rows of the families named (the unprivileged account's user is
// "unprivileged").
func rowsOf(rep *schema.Report, user string, families ...string) *schema.Report {
	out := *rep
	out.Cells = nil
	for _, c := range rep.Cells {
		family, _, _ := strings.Cut(c.Scenario, "/")
		if c.User == user && slices.Contains(families, family) {
			out.Cells = append(out.Cells, c)
		}
	}
	return &out
}

// TestTrialCostsJournaled: every trial of the shared run journals what each family cost it:
// each family ran and started the sandbox at least once, and the concurrency family's sessions
// overlap (their time together exceeds its wall time), as they must to test anything.
func TestTrialCostsJournaled(t *testing.T) {
	requireSandbox(t)
	healthySRTRun(t)
	families := []string{"network", "filesystem", "failclosed", "untrusted", "concurrency", "bypass"}
	for _, r := range healthySRT.records {
		for _, f := range families {
			c, ok := r.Families[f]
			switch {
			case !ok:
				t.Errorf("%s trial %d: no cost journaled for %s (families: %v)", r.Cell.ID, r.Trial, f, r.Families)
			case c.Sessions < 1 || c.MS <= 0 || c.SessionMS <= 0:
				t.Errorf("%s trial %d: %s cost %+v, want sandbox starts and time", r.Cell.ID, r.Trial, f, c)
			case f == "concurrency" && c.SessionMS <= c.MS:
				t.Errorf("%s trial %d: concurrency's sessions took %d ms in %d ms of wall time: they did not overlap", r.Cell.ID, r.Trial, c.SessionMS, c.MS)
			}
		}
	}
	if len(healthySRT.records) == 0 {
		t.Fatal("the shared run journaled no trial")
	}
}
