package e2e

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/reports/schema"
)

// TestReportsFromRealRun: a real run writes all four formats; the gate blocks a fail-open cell
// and names it; compare finds nothing against itself.
func TestReportsFromRealRun(t *testing.T) {
	requireSandbox(t)
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--plain", "-n", "3", "-j", "2", "--label-filter", "network",
		"--fault", "", "--fault", "open-proxy", "--out", out)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	// The open-proxy cell is fail-open, so run exits 1; anything else is not a measurement.
	if b, err := cmd.CombinedOutput(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("run: %v (want exit 1: a fail-open cell)\n%s", err, b)
	}
	for _, f := range []string{"report.json", "report.md", "junit.xml", "report.html", "journal.jsonl"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s missing or empty: %v", f, err)
		}
	}
	rep, err := schema.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sawOpen bool
	for _, c := range rep.Cells {
		if c.Fault == "open-proxy" && c.Scenario == "network/seed" {
			sawOpen = c.Outcomes["non-enforcing"] == 3
		}
	}
	if !sawOpen || len(rep.Hosts) == 0 {
		t.Fatalf("report.json lacks the open-proxy cell's 3 non-enforcing trials or the host fingerprint")
	}
	var junit struct {
		XMLName xml.Name
	}
	jb, _ := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err := xml.Unmarshal(jb, &junit); err != nil || junit.XMLName.Local != "testsuites" {
		t.Fatalf("junit.xml: %v (root %q)", err, junit.XMLName.Local)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## Environment", "## Settings", "allowed.sandcheck.test", "## Observed", "non-enforcing"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	gate := exec.Command(bin, "gate", filepath.Join(out, "report.json"))
	gout, err := gate.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(gout), "open-proxy") {
		t.Fatalf("gate must exit 1 naming the open-proxy cell; got %v:\n%s", err, gout)
	}
	// Compared with itself nothing regressed, but a fail-open outside the known findings fails
	// compare as it fails run and the gate (one rule): the open-proxy cell is named.
	cmp := exec.Command(bin, "compare", filepath.Join(out, "report.json"), filepath.Join(out, "report.json"))
	b, err := cmp.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(b), "no significant regressions") ||
		!strings.Contains(string(b), "FAIL-OPEN srt@local user=unprivileged fault=open-proxy") {
		t.Fatalf("compare with itself must exit 1 naming only the open-proxy cell's fail-open; got %v:\n%s", err, b)
	}
}

// TestIPLiteralHosts: the same verdicts when the fixture hosts are addressed by IP literal
// (allowedDomains holds the IP), instead of names resolved through the private hosts file.
func TestIPLiteralHosts(t *testing.T) {
	requireSandbox(t)
	r := sandcheckRun(t, "-n", "3", "-j", "2", "--hostnames", "ip", "--label-filter", "network",
		"--fault", "", "--fault", "policy-allows-denied")
	if len(r.Cells) != 2 || r.Cells[0].Outcomes["correct"] != 3 || r.Cells[1].Outcomes["non-enforcing"] != 3 {
		t.Fatalf("ip literals: %+v", r.Cells)
	}
}
