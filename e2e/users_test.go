package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/internal/testwait"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// TestUsersBothWays runs every scenario on srt as root and as the unprivileged account, and
// prints (and, with SANDCHECK_USERS_TABLE=FILE, writes) the table of scenarios whose outcomes
// differ, for the README. Both must pass every scenario outside the known findings; a check the
// user cannot do without a sandbox (writing /etc) is not-applicable for the user, with the
// reason, and judged for root; each cell's fingerprint names its user.
func TestUsersBothWays(t *testing.T) {
	requireSandbox(t)
	rep, _, n := healthySRTRun(t)
	by := map[string]map[string]schema.Cell{} // scenario -> user -> row
	for _, c := range rep.Cells {
		if by[c.Scenario] == nil {
			by[c.Scenario] = map[string]schema.Cell{}
		}
		by[c.Scenario][c.User] = c
		if c.Trials != n {
			t.Errorf("%s: %d trials, want %d", c.Name(), c.Trials, n)
		}
		if unknown := c.Failures - c.KnownFailures(); unknown != 0 {
			t.Errorf("%s: %d/%d failed outside the known findings: %v%s", c.Name(), unknown, c.Trials, c.Outcomes, why(c))
		}
	}
	var scenarios []string
	for s, u := range by {
		if len(u) != 2 {
			t.Errorf("%s ran as %d users, want root and unprivileged", s, len(u))
			continue
		}
		scenarios = append(scenarios, s)
	}
	sort.Strings(scenarios)
	var rows []string
	for _, s := range scenarios {
		// A row differs when the users see different outcomes, not the same ones in other
		// proportions, nor two faces of one intermittent known finding (they vary from run to
		// run whoever runs the sandbox).
		if r, u := by[s]["root"], by[s]["unprivileged"]; !sameOutcomes(r, u) && !bothKnown(r, u) {
			rows = append(rows, fmt.Sprintf("| `%s` | %s | %s |", s, summary(r), summary(u)))
		}
	}
	table := fmt.Sprintf("| scenario (srt 0.0.83, %d trials each) | root | unprivileged (`sandcheck`) |\n|---|---|---|\n%s\n", n, strings.Join(rows, "\n"))
	t.Logf("where root and the user differ:\n%s", table)
	if f := os.Getenv("SANDCHECK_USERS_TABLE"); f != "" {
		if err := os.WriteFile(f, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	etc := by["filesystem/outside/etc"]
	if c := etc["root"]; c.Outcomes["correct"] != n {
		t.Errorf("outside/etc as root: %v, want correct %d/%d", c.Outcomes, n, n)
	}
	if c := etc["unprivileged"]; c.Outcomes["not-applicable"] != n || !strings.Contains(c.Examples["not-applicable"].Hint, "even without a sandbox (EACCES)") {
		t.Errorf("outside/etc as the user: %v %q, want not-applicable %d/%d with the reason", c.Outcomes, c.Examples["not-applicable"].Hint, n, n)
	}
	for key, want := range map[string]int{"local": 0, "local user=unprivileged": uidOf(t, "sandcheck")} {
		var fp struct {
			User struct {
				Name string `json:"name"`
				UID  int    `json:"uid"`
			} `json:"user"`
		}
		if err := json.Unmarshal(rep.Hosts[key], &fp); err != nil || fp.User.UID != want || fp.User.Name == "" {
			t.Errorf("fingerprint %q: user %+v (%v), want uid %d", key, fp.User, err, want)
		}
	}
	leftOwned(t, "sandcheck")
}

func sameOutcomes(a, b schema.Cell) bool {
	if len(a.Outcomes) != len(b.Outcomes) {
		return false
	}
	for o := range a.Outcomes {
		if _, ok := b.Outcomes[o]; !ok {
			return false
		}
	}
	return true
}

// bothKnown: both users' rows failed, and only as known findings.
func bothKnown(a, b schema.Cell) bool {
	return a.Failures > 0 && b.Failures > 0 && a.Failures == a.KnownFailures() && b.Failures == b.KnownFailures()
}

var fsNonce = regexp.MustCompile(`sandcheck-fs-[0-9a-f]+`)

// summary is a row's outcomes as the README table shows them: "correct 5/5", with the reason of
// a not-applicable and the known finding of a failure.
func summary(c schema.Cell) string {
	var outs []string
	for o := range c.Outcomes {
		outs = append(outs, o)
	}
	sort.Strings(outs)
	var parts []string
	for _, o := range outs {
		p := fmt.Sprintf("%s %d/%d", o, c.Outcomes[o], c.Trials)
		switch {
		case o == "not-applicable":
			p += ": " + c.Examples[o].Hint
		case o != "correct" && len(c.KnownIDs()) > 0:
			p += " (known finding)"
		}
		parts = append(parts, p)
	}
	return fsNonce.ReplaceAllString(strings.ReplaceAll(strings.Join(parts, ", "), "|", "\\|"), "sandcheck-fs-*")
}

func uidOf(t *testing.T, name string) int {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("account %s: %v", name, err)
	}
	id, _ := strconv.Atoi(u.Uid)
	return id
}

// ownedBefore: what the test account owned in the shared temporary directories before these
// tests began (a killed earlier run's), which leftOwned does not blame on them.
var ownedBefore = map[string]bool{}

// sharedTemp are the shared temporary directories (the e2e tests' TMPDIR is under /tmp).
var sharedTemp = []string{"/tmp", "/var/tmp", "/dev/shm"}

func recordOwnedBefore() {
	u, err := user.Lookup("sandcheck")
	if err != nil {
		return // the account is made by the first run as the user: it owns nothing yet
	}
	uid, _ := strconv.Atoi(u.Uid)
	for _, p := range ownedIn(uid) {
		ownedBefore[p] = true
		fmt.Fprintln(os.Stderr, "e2e: owned by sandcheck before these tests, not blamed on them:", p)
	}
}

// ownedIn lists what uid owns in the shared temporary directories (a directory once, not its
// contents).
func ownedIn(uid int) []string {
	var out []string
	for _, root := range sharedTemp {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) == nil && int(st.Uid) == uid {
				out = append(out, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
			}
			return nil
		})
	}
	return out
}

// leftOwned fails the test for anything the account owns in the shared temporary directories
// that it did not own before these tests: nothing may be left owned by the user after a run.
// (Its HOME gets the leftover check's: nothing new, see leftoverPaths.)
func leftOwned(t *testing.T, name string) {
	t.Helper()
	for _, p := range ownedIn(uidOf(t, name)) {
		if !ownedBefore[p] {
			t.Errorf("left owned by %s after the run: %s", name, p)
		}
	}
}

// TestUsersNothingLeftAfterKilledTrials: srt SIGKILLed mid-run (timeout -s KILL) cannot clean up
// after itself: its bridge sockets and mount sources stay in its TMPDIR (the trial's) as the
// user, its relays keep running. The trial (or the next one, or the end of the run) removes all
// of it and kills what still runs as the account.
func TestUsersNothingLeftAfterKilledTrials(t *testing.T) {
	requireSandbox(t)
	srt := srtPath(t)
	uid := uidOf(t, "sandcheck")
	dir := t.TempDir()
	mf := filepath.Join(dir, "matrix.yaml")
	matrix := fmt.Sprintf(`targets:
  - name: command
    settings:
      argv: ["timeout", "-s", "KILL", "2", %q, "--settings", "{{.PolicyFile}}", "-c", "{{.Command}}; sleep 60"]
      policy_template: '{"network": {"allowedDomains": {{json .AllowedHosts}}, "deniedDomains": []}, "filesystem": {"allowWrite": {{json .WritablePaths}}, "denyRead": [], "denyWrite": []}}'
      capabilities: ["proxy-allow-list", "writable-paths"]
      reach: ["http", "https", "socks"]
hosts:
  - {name: local, kind: local, user: unprivileged}
scenarios: "network && seed"
trials: 4
parallel: 2
timeout: 8s
`, srt)
	if err := os.WriteFile(mf, []byte(matrix), 0o644); err != nil {
		t.Fatal(err)
	}
	// What the sandbox made as the user while it ran: in its TMPDIR (the trial's own, under the
	// trial directory), or in /tmp.
	seen := map[string]bool{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			dirs, _ := filepath.Glob(filepath.Join(tmp, "sandcheck-trial-*", "tmp"))
			for _, dir := range append(dirs, "/tmp") {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					var st syscall.Stat_t
					if syscall.Lstat(filepath.Join(dir, e.Name()), &st) == nil && int(st.Uid) == uid &&
						(strings.HasPrefix(e.Name(), "claude-") || strings.HasPrefix(e.Name(), "srt-")) {
						seen[e.Name()] = true
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	out := t.TempDir()
	_, stderr, code := sandcheckExit(t, nil, "run", "--plain", "--matrix", mf, "--out", out)
	close(stop)
	gone(t, uid)
	<-done
	if code == 2 {
		t.Fatalf("run exit %d\n%s", code, stderr)
	}
	if len(seen) == 0 {
		t.Fatal("the sandbox never made anything in its TMPDIR as the user: the test shows nothing")
	}
	t.Logf("made in its TMPDIR as the user while the sandboxes ran: %d entries, e.g. %s", len(seen), first(seen))
	for _, p := range pidsOfUser(uid) {
		t.Errorf("process of sandcheck still running: %d", p)
	}
	leftOwned(t, "sandcheck")
}

// gone waits (a second at most) for the account's killed processes to be reaped; those still
// there are the caller's to report.
func gone(t *testing.T, uid int) {
	t.Helper()
	testwait.Eventually(time.Second, func() bool { return len(pidsOfUser(uid)) == 0 })
}

func first(m map[string]bool) string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k[0]
}

func pidsOfUser(uid int) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		var st syscall.Stat_t
		if syscall.Stat(d, &st) == nil && int(st.Uid) == uid {
			b, _ := os.ReadFile(d + "/stat")
			if f := strings.Fields(string(b)); len(f) > 2 && f[2] != "Z" {
				pid, _ := strconv.Atoi(filepath.Base(d))
				out = append(out, pid)
			}
		}
	}
	return out
}

// TestUsersOtherTargets: the network scenario through bwrap, firejail and codex as the user:
// each runs (no harness trouble) and enforces, and the report names the user.
func TestUsersOtherTargets(t *testing.T) {
	requireSandbox(t)
	for _, target := range []string{"bwrap", "firejail", "codex"} {
		t.Run(target, func(t *testing.T) {
			if target != "codex" {
				if why := lookFor(target)(); why != "" {
					skip.Missing(t, "%s", why)
				}
			}
			rep := runReport(t, "-n", "2", "--target", target, "--label-filter", "network", "--user", "unprivileged")
			for _, o := range rep.Overall {
				if o.User != "unprivileged" || o.Failures != 0 || o.Measured != o.Trials {
					t.Errorf("%s: %v%s", o.Name(), o.Outcomes, whyOverall(o))
				}
			}
		})
	}
	leftOwned(t, "sandcheck")
}

func whyOverall(o schema.Overall) string {
	var b strings.Builder
	for out, ex := range o.Examples {
		fmt.Fprintf(&b, "\n    %s: %s %s", out, ex.Hint, ex.Error)
	}
	return b.String()
}
