package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

// Hosts beyond this machine, end to end: the network scenario through the ssh driver (a real
// sshd on 127.0.0.1, so the sandbox tools are this machine's) and through vm hosts booting other
// kernels under QEMU.

// runMatrix runs `sandcheck run --json` on a matrix file with extra environment; it returns the
// summary and the run directory.
func runMatrix(t *testing.T, yaml string, env ...string) (runJSON, string) {
	t.Helper()
	dir := t.TempDir()
	mf := filepath.Join(dir, "matrix.yaml")
	if err := os.WriteFile(mf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", "--json", "--plain", "--out", out, "--matrix", mf)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+tmp), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); !measured(err) {
		t.Fatalf("sandcheck run: %v\n%s", err, stderr.String())
	}
	t.Logf("sandcheck run took %s", time.Since(start).Round(time.Millisecond))
	var r runJSON
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode run --json: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return r, out
}

// journalRecords reads the run's journal as loose JSON objects.
func journalRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(out, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			recs = append(recs, m)
		}
	}
	return recs
}

// startSSHD starts the throwaway sshd (internal/hosttest): its address and key directory.
func startSSHD(t *testing.T) (addr, dir string) {
	s := hosttest.StartSSHD(t)
	return s.Addr, s.Dir
}

// srtPath is the srt this machine runs (make exports SANDCHECK_SRT).
func srtPath(t testing.TB) string {
	t.Helper()
	p := config.Get().SRT
	if p == "" {
		p, _ = filepath.Abs("../.tools/npm/node_modules/.bin/srt")
	}
	if _, err := os.Stat(p); err != nil {
		skip.Missing(t, "srt not installed at %s (run `make deps`)", p)
	}
	return p
}

// TestSSHHostNetwork runs the network scenario and the filesystem checks (writes outside, escapes,
// the secret; srt's known findings left out) 3 times through the ssh driver to a real sshd on
// this machine: the binary is copied over SFTP, each trial is an ssh session, and the verdict
// comes back on the session's stdout.
func TestSSHHostNetwork(t *testing.T) {
	requireSandbox(t)
	srt := srtPath(t)
	addr, dir := startSSHD(t)
	const n = 3
	yaml := fmt.Sprintf(`targets:
  - name: srt
hosts:
  - name: localhost-ssh
    kind: ssh
    address: %s
    user: root
    key_file: %s
    known_hosts: [%s]
scenarios: "network || fs-outside || fs-escape || fs-secret"
trials: %d
parallel: 1
timeout: 120s
`, addr, filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "known_hosts"), n)
	r, out := runMatrix(t, yaml,
		// The host is this machine: its srt, and trial dirs where the leftover check looks.
		"SANDCHECK_PASSENV=SANDCHECK_SRT,TMPDIR", "SANDCHECK_SRT="+srt)
	if len(r.Cells) != 1 || r.Cells[0].Trials != n || r.Cells[0].Outcomes[model.Correct] != n {
		t.Fatalf("ssh host: %+v, want %d correct", r, n)
	}
	var durs []string
	fsSeen := false
	for _, rec := range journalRecords(t, out) {
		for _, sc := range rec["scenarios"].([]any) {
			// A compact record writes a passing scenario as its name ("NAME" or "NAME=OUTCOME").
			name, _ := sc.(string)
			if m, ok := sc.(map[string]any); ok {
				name, _ = m["name"].(string)
			}
			if strings.HasPrefix(name, "filesystem/escape/") {
				fsSeen = true
			}
		}
		if iso, _ := rec["isolation"].(string); !strings.Contains(iso, "ssh") {
			t.Errorf("journal record isolation %q, want the ssh host's", iso)
		}
		durs = append(durs, fmt.Sprint(rec["duration_ms"]))
	}
	if !fsSeen {
		t.Error("the filesystem scenario did not run through ssh")
	}
	t.Logf("ssh trial durations (ms): %s", strings.Join(durs, ", "))
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("trial dirs left behind: %v", left)
	}
	if left, _ := filepath.Glob("/tmp/sandcheck-host-*"); len(left) > 0 {
		t.Errorf("ssh run dirs left behind: %v", left)
	}
}

// TestVMKernelsNetwork boots two Debian kernels (bookworm's 6.1, trixie's 6.12) under QEMU
// TCG and runs the network scenario twice in each, both trials in one boot: srt in the guest
// must be `correct` in both, and the guest's own fingerprint must name the kernel it booted. The
// first run
// builds the artifacts into /var/cache/sandcheck/vm (kernels from Debian packages, a
// debootstrap root filesystem with bubblewrap, socat, curl, ripgrep, node and srt): a few
// minutes, then cached.
func TestVMKernelsNetwork(t *testing.T) {
	skip.UnlessRoot(t, "the vm hosts' root filesystem (debootstrap)")
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		if out, err := exec.Command("../scripts/vm-deps.sh").CombinedOutput(); err != nil {
			skip.Missing(t, "this machine cannot boot a VM: QEMU is missing and installing it failed: %v\n%s", err, out)
		}
	}
	if out, err := exec.Command("qemu-system-x86_64", "-accel", "help").CombinedOutput(); err != nil || !strings.Contains(string(out), "tcg") {
		skip.Missing(t, "this machine cannot boot a VM: QEMU has no TCG accelerator: %v %s", err, out)
	}
	sc := bin // static (CGO_ENABLED=0, TestMain): the runner copies itself into the guests
	yaml := `targets:
  - name: srt
hosts:
  - name: vm-bookworm
    kind: vm
    image: bookworm
  - name: vm-trixie
    kind: vm
    image: trixie
scenarios: "network"
trials: 2
parallel: 2
timeout: 300s
`
	dir := t.TempDir()
	mf := filepath.Join(dir, "matrix.yaml")
	os.WriteFile(mf, []byte(yaml), 0o644)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(sc, "run", "--json", "--plain", "--out", out, "--matrix", mf)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "SANDCHECK_VM_LOG=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); !measured(err) {
		t.Fatalf("sandcheck run: %v\n%s", err, stderr.String())
	}
	t.Logf("sandcheck run (2 kernels, artifacts cached or built): %s\n%s", time.Since(start).Round(time.Millisecond), stderr.String())
	var r runJSON
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout.String())
	}
	kernels := map[string]string{}
	for _, rec := range journalRecords(t, out) {
		cell, _ := rec["cell"].(map[string]any)
		fp, _ := rec["host_fp"].(map[string]any)
		host, _ := cell["host"].(string)
		if kernel, _ := fp["kernel"].(string); kernel != "" {
			kernels[host] = kernel
		}
		t.Logf("%s trial %v: %v in %v ms, isolation %q, hint %v, error %v", host, rec["trial"], rec["outcome"], rec["duration_ms"], rec["isolation"], rec["hint"], rec["error"])
		if iso, _ := rec["isolation"].(string); !strings.Contains(iso, "boot per host") {
			t.Errorf("isolation %q: trials should share the boot", iso)
		}
	}
	if len(r.Cells) != 2 || r.Outcomes[model.Correct] != 4 {
		t.Fatalf("want both kernels correct in both trials: %+v", r)
	}
	if !strings.HasPrefix(kernels["vm-bookworm"], "6.1.") || !strings.HasPrefix(kernels["vm-trixie"], "6.12.") {
		t.Fatalf("guest kernels %v, want 6.1.x (bookworm) and 6.12.x (trixie)", kernels)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "sandcheck-vm-*")); len(left) > 0 {
		t.Errorf("VM run dirs left behind: %v", left)
	}
}
