package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// fixtureRanges are where a trial's traffic may go: loopback and the test ranges the fixtures'
// namespaces use. A sandbox's host-side proxy (Codex's) resolves and dials names itself; in a
// trial it must meet only the fixture's hosts file and resolver.
var fixtureRanges = map[string][]string{
	"iptables":  {"127.0.0.0/8", "198.18.0.0/15"},
	"ip6tables": {"::1/128", "2001:2::/48"},
}

// stayInFixture makes the test fail if anything the sandbox's user (the dedicated account every
// trial runs its sandbox as) sends leaves for an address outside fixtureRanges while the test
// runs. Such packets are counted and rejected in this namespace's OUTPUT chain, so they never
// leave the machine either; a packet sent first to a documentation address proves the count
// works. Trials in an isolated host namespace (the bypass family) have no route out at all.
func stayInFixture(t *testing.T) {
	t.Helper()
	skip.UnlessTools(t, "run `make deps-test`", "iptables", "ip6tables")
	acct, err := users.Resolve(model.UserUnprivileged)
	if err != nil {
		t.Fatal(err)
	}
	chain := fmt.Sprintf("SC-EGRESS-%d", os.Getpid())
	ipt := func(tool string, args ...string) string {
		t.Helper()
		out, err := exec.Command(tool, append([]string{"-w"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v: %s", tool, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	jump := []string{"OUTPUT", "-m", "owner", "--uid-owner", strconv.Itoa(acct.UID), "-j", chain}
	for tool, ranges := range fixtureRanges {
		ipt(tool, "-N", chain)
		t.Cleanup(func() {
			exec.Command(tool, append([]string{"-w", "-D"}, jump...)...).Run()
			exec.Command(tool, "-w", "-F", chain).Run()
			exec.Command(tool, "-w", "-X", chain).Run()
		})
		for _, r := range ranges {
			ipt(tool, "-A", chain, "-d", r, "-j", "RETURN")
		}
		ipt(tool, "-A", chain, "-j", "REJECT")
		ipt(tool, append([]string{"-I"}, jump...)...)
	}
	left := func(tool string) int {
		t.Helper()
		for _, l := range strings.Split(ipt(tool, "-L", chain, "-n", "-v", "-x"), "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[2] == "REJECT" {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
		t.Fatalf("%s: no REJECT rule in %s", tool, chain)
		return 0
	}
	// The count works: the account's connection to a documentation address is counted (and
	// refused here, before it could leave).
	for tool, addr := range map[string]string{"iptables": "203.0.113.1", "ip6tables": "[2001:db8::1]"} {
		argv := acct.Command([]string{"curl", "-sS", "--noproxy", "*", "--max-time", "3", "http://" + addr + ":9/"}, nil)
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err == nil || left(tool) == 0 {
			t.Fatalf("%s: a connection to %s as %s was not counted (%v: %s)", tool, addr, acct.Name, err, out)
		}
		ipt(tool, "-Z", chain)
	}
	t.Cleanup(func() {
		for tool := range fixtureRanges {
			if n := left(tool); n != 0 {
				t.Errorf("%d packet(s) of %s's went to addresses outside the fixture ranges %v (%s; refused here before they left): nothing of a trial's may", n, acct.Name, fixtureRanges[tool], tool)
			}
		}
	})
}
