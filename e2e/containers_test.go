package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/internal/testwait"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/hosts/container"
)

// requireDockerEngine is the Docker engine (internal/hosttest), and a check after the test that
// its trials left nothing behind.
func requireDockerEngine(t *testing.T) client.APIClient {
	t.Helper()
	cli := hosttest.RequireDocker(t)
	noLeftoversAfter(t)
	return cli
}

// containersOfRunner lists the sandcheck containers created by the runner process pid.
func containersOfRunner(t *testing.T, cli client.APIClient, pid int) []string {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", container.LabelOwner+"=sandcheck")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list.Items {
		if f := strings.Split(s.Labels[container.LabelRunner], "/"); len(f) == 4 && f[2] == strconv.Itoa(pid) {
			names = append(names, strings.Join(s.Names, ","))
		}
	}
	return names
}

type containersRunJSON struct {
	Cells []struct {
		Host     string                `json:"host"`
		User     string                `json:"user"`
		Trials   int                   `json:"trials"`
		Outcomes map[model.Outcome]int `json:"outcomes"`
	} `json:"cells"`
	Journal string `json:"journal"`
}

// TestContainersMatrix runs matrix/examples/containers.yaml: srt's network scenario on bullseye,
// bookworm, trixie and sid containers (bwrap-ready) must be correct every time, and on a stock
// Docker container (docker-default) srt must fail to start, loudly, every time.
//
// What srt does on docker-default (measured, bookworm, bubblewrap 0.8.0, CAP_SYS_ADMIN and
// CAP_NET_ADMIN added as for every container host): Docker's default seccomp profile lets
// unshare/clone through when CAP_SYS_ADMIN is granted, so bwrap gets as far as pivot_root, which
// the profile denies: `bwrap: pivot_root: Operation not permitted`, exit 1, before the command
// runs. srt passes that on and exits 1 without running the probe: sandbox-failed, not a silent
// run without a sandbox, nor a dead proxy. (Without the added capabilities bwrap fails earlier,
// "Creating new namespace failed", but then the trial could not build its fixture namespace
// either.)
func TestContainersMatrix(t *testing.T) {
	cli := requireDockerEngine(t)
	bin := hosttest.StaticSandcheck(t)
	const n = 3
	out := t.TempDir()
	tmpdir := t.TempDir()
	cmd := exec.Command(bin, "run", "--matrix", "../matrix/examples/containers.yaml", "-n", strconv.Itoa(n),
		"--json", "--plain", "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "TMPDIR="+tmpdir)
	start := time.Now()
	// Exit 1: the bookworm-default cell cannot start srt (sandbox-failed), a measured failure.
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("sandcheck run: %v (want exit 1: one cell fails)\n%s", err, stderr.String())
	}
	took := time.Since(start)
	var r containersRunJSON
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode run --json: %v\n%s", err, stdout.String())
	}
	// The sandbox runs as the unprivileged user, and in bookworm (the one root cell) and the
	// stock container as root too.
	want := map[string]model.Outcome{
		"bullseye unprivileged": model.Correct, "bookworm unprivileged": model.Correct, "bookworm root": model.Correct,
		"trixie unprivileged": model.Correct, "sid unprivileged": model.Correct,
		"bookworm-default root": model.SandboxFailed,
	}
	if len(r.Cells) != len(want) {
		t.Fatalf("got %d cells, want %d: %+v", len(r.Cells), len(want), r.Cells)
	}
	for _, c := range r.Cells {
		w, ok := want[c.Host+" "+c.User]
		if !ok {
			t.Errorf("unexpected cell on host %q as %q", c.Host, c.User)
			continue
		}
		if c.Trials != n || c.Outcomes[w] != n {
			t.Errorf("host %s as %s: outcomes %v over %d trials, want %s in all %d", c.Host, c.User, c.Outcomes, c.Trials, w, n)
		}
	}

	// What the journal says: isolation per host, why docker-default failed, trial timings.
	durations := map[string][]int64{}
	isolation := map[string]string{}
	hints := map[string]string{}
	f, err := os.Open(filepath.Join(out, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			Cell struct {
				Host string `json:"host"`
			} `json:"cell"`
			Outcome    model.Outcome `json:"outcome"`
			Hint       string        `json:"hint"`
			DurationMS int64         `json:"duration_ms"`
			Isolation  string        `json:"isolation"`
			HostFP     struct {
				Distro string `json:"distro"`
				Bwrap  string `json:"bwrap"`
			} `json:"host_fp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			continue
		}
		h := rec.Cell.Host
		durations[h] = append(durations[h], rec.DurationMS)
		isolation[h] = rec.Isolation
		if rec.Hint != "" {
			hints[h] = rec.Hint
		}
		if rec.HostFP.Distro != "" {
			t.Logf("%-16s %s, bubblewrap %s", h, rec.HostFP.Distro, rec.HostFP.Bwrap)
		}
	}
	var names []string
	for h := range durations {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		t.Logf("%-16s trials (ms, journal order): %v  [%s]", h, durations[h], isolation[h])
	}
	t.Logf("whole run (%d trials, -j 2, images present): %s", n*len(want), took.Round(100*time.Millisecond))
	if got := isolation["bookworm"]; got != "container per host (bwrap-ready)" {
		t.Errorf("bookworm isolation %q", got)
	}
	if got := isolation["bookworm-default"]; got != "container per trial (docker-default)" {
		t.Errorf("bookworm-default isolation %q", got)
	}
	if h := hints["bookworm-default"]; !strings.Contains(h, "pivot_root") && !strings.Contains(h, "namespace") {
		t.Errorf("docker-default hint %q does not say why bwrap failed", h)
	}
	t.Logf("docker-default: %s", hints["bookworm-default"])
	if left := containersOfRunner(t, cli, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("containers left after the run: %v", left)
	}
}

// TestContainersKilledRunner: a runner killed with SIGKILL leaves its containers behind; the next
// run's Prepare removes them. A runner stopped with SIGINT removes its own.
func TestContainersKilledRunner(t *testing.T) {
	cli := requireDockerEngine(t)
	bin := hosttest.StaticSandcheck(t)
	dir := t.TempDir()
	mx := filepath.Join(dir, "one.yaml")
	// The bookworm image only, and a trial long enough to be killed in the middle.
	if err := os.WriteFile(mx, []byte(`targets: [{name: srt}]
hosts: [{name: bookworm, kind: container, image: "sandcheck/debian:bookworm"}]
scenarios: "network"
trials: 50
timeout: 90s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	startRun := func(out string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, "run", "--matrix", mx, "--plain", "--out", out)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		cmd.Env = append(os.Environ(), "TMPDIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() }) // if the test stops before it does
		return cmd, &stderr
	}
	// waitContainer returns once the runner's container exists and its first trial is journaled,
	// so the next one runs (a cold image build takes minutes).
	waitContainer := func(cmd *exec.Cmd, out string) []string {
		var names []string
		testwait.Until(t, "the runner's container and its first trial", 10*time.Minute, func() bool {
			names = containersOfRunner(t, cli, cmd.Process.Pid)
			j, _ := os.ReadFile(filepath.Join(out, "journal.jsonl"))
			return len(names) > 0 && bytes.Count(j, []byte("\n")) > 0
		})
		return names
	}

	a, _ := startRun(filepath.Join(dir, "a"))
	names := waitContainer(a, filepath.Join(dir, "a"))
	a.Process.Signal(syscall.SIGKILL)
	a.Wait()
	if left := containersOfRunner(t, cli, a.Process.Pid); len(left) == 0 {
		t.Fatalf("after SIGKILL no container is left to clean up (had %v): the test proves nothing", names)
	}

	b, bout := startRun(filepath.Join(dir, "b"))
	waitContainer(b, filepath.Join(dir, "b"))
	if left := containersOfRunner(t, cli, a.Process.Pid); len(left) > 0 {
		b.Process.Kill()
		b.Wait()
		t.Fatalf("the killed runner's containers %v survived the next run's Prepare", left)
	}
	b.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- b.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		b.Process.Kill()
		t.Fatalf("runner did not stop after SIGINT:\n%s", bout.String())
	}
	if left := containersOfRunner(t, cli, b.Process.Pid); len(left) > 0 {
		t.Fatalf("containers left after SIGINT: %v\n%s", left, bout.String())
	}
}
