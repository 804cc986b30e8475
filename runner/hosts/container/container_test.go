//go:build linux

package container

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/sandcheck/sandcheck/images"
	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/internal/keyscan"
	"github.com/sandcheck/sandcheck/internal/procfs"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/trialresult"
	"github.com/sandcheck/sandcheck/wire/frame"
)

func TestRunnerAlive(t *testing.T) {
	host, _ := os.Hostname()
	cases := []struct {
		label string
		want  bool
	}{
		{runnerID(), true}, // this process
		{fmt.Sprintf("%s/%s/%d/1", host, procfs.BootID(), os.Getpid()), false}, // our pid, another start time: reused
		{fmt.Sprintf("%s/%s/999999999/5", host, procfs.BootID()), false},       // no such process
		{fmt.Sprintf("%s/another-boot/%d/1", host, os.Getpid()), false},        // before a reboot
		{"some-other-machine/x/1/1", true},                                     // not containersOfRun to judge
		{"", false}, {"garbage", false},
	}
	for _, c := range cases {
		if got := runnerAlive(c.label); got != c.want {
			t.Errorf("runnerAlive(%q) = %v, want %v", c.label, got, c.want)
		}
	}
}

func TestExecTail(t *testing.T) {
	w := &execTail{max: 5}
	w.Write([]byte("abc"))
	w.Write([]byte("defg"))
	if got := string(w.Bytes()); got != "cdefg" || !w.dropped {
		t.Fatalf("tail = %q (dropped %v), want cdefg", got, w.dropped)
	}
}

func TestCheckStaticRejectsDynamic(t *testing.T) {
	err := CheckStatic("/bin/sh")
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("CheckStatic(/bin/sh) = %v, want a dynamic-binary error naming CGO_ENABLED=0", err)
	}
	if err := CheckStatic("container_test.go"); err == nil {
		t.Fatal("CheckStatic of a non-ELF file passed")
	}
}

// containersOfRun lists the containers of one host run (by its run label).
func containersOfRun(t *testing.T, cli client.APIClient, runID string) []string {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelRun+"="+runID)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list.Items {
		names = append(names, strings.Join(s.Names, ","))
	}
	return names
}

// TestContainer runs the container host against the real engine (started by
// scripts/start-dockerd.sh), on the bookworm image (built on first use).
func TestContainer(t *testing.T) {
	skip.Short(t, "trials in real containers, about 20 s")
	hosttest.RequireDocker(t)
	bin := hosttest.StaticSandcheck(t)
	t.Run("PerHost", func(t *testing.T) { testContainerPerHost(t, bin) })
	t.Run("PerTrialDockerDefault", func(t *testing.T) { testContainerPerTrialDockerDefault(t, bin) })
	t.Run("OtherImages", func(t *testing.T) { testContainerOtherImages(t, bin) })
}

// testContainerPerHost drives a container host through Prepare, Exec (exit codes, streams,
// environment), a deadline that must kill a process that left the exec's session and a real
// trial, the loss of the container mid-trial, leftover removal and Close.
func testContainerPerHost(t *testing.T, bin string) {
	if err := CheckStatic(bin); err != nil {
		t.Fatalf("CGO_ENABLED=0 build is not static: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a cold image build takes minutes
	defer cancel()

	start := time.Now()
	h, err := New(Config{Name: "hosts-test", Image: images.Ref("bookworm"), Profile: ProfileBwrapReady})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			h.Close()
		}
	}()
	remote, err := h.Prepare(ctx, bin)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Logf("Prepare (image present or built, container started, binary copied, checks): %s", time.Since(start).Round(time.Millisecond))
	if remote != RemoteBinary || h.BwrapCheck != "" {
		t.Fatalf("Prepare = %q, bwrap check %q; want %q and a working bwrap", remote, h.BwrapCheck, RemoteBinary)
	}
	if got := h.Isolation(); got != "container per host (bwrap-ready)" {
		t.Errorf("Isolation = %q", got)
	}

	r := h.Exec(ctx, hosts.Cmd(remote, "version"), time.Minute)
	if r.Err != nil || r.Exit != 0 || len(r.Stdout) == 0 {
		t.Fatalf("sandcheck version: %+v (stderr %s)", r, r.Stderr)
	}

	r = h.Exec(ctx, hosts.Cmd("sh", "-c", `echo "$SANDCHECK_SRT $TMPDIR"; test -x "$SANDCHECK_SRT" && echo to-stderr >&2; exit 3`), time.Minute)
	want := images.SRTPath + " " + images.TmpDir + "\n"
	if r.Err != nil || r.TimedOut || r.Exit != 3 || string(r.Stdout) != want || string(r.Stderr) != "to-stderr\n" {
		t.Fatalf("exec: exit %d, stdout %q, stderr %q, err %v; want exit 3, %q, \"to-stderr\\n\"", r.Exit, r.Stdout, r.Stderr, r.Err, want)
	}

	// The deadline: the trial's own process and one that escaped its session (as bwrap
	// --new-session does) must both die, and Exec must return soon after the deadline.
	t0 := time.Now()
	r = h.Exec(ctx, hosts.Cmd("sh", "-c", "setsid sleep 1001 & sleep 1002; echo never"), time.Second)
	took := time.Since(t0)
	if !r.TimedOut || r.Err != nil || strings.Contains(string(r.Stdout), "never") {
		t.Fatalf("deadline: %+v, want TimedOut", r)
	}
	if took > 8*time.Second {
		t.Errorf("Exec returned %s after a 1s deadline", took)
	}
	r = h.Exec(ctx, hosts.Cmd("ps", "-eo", "pid,args"), time.Minute)
	if strings.Contains(string(r.Stdout), "sleep 100") {
		t.Fatalf("processes of the killed exec survived:\n%s", r.Stdout)
	}
	t.Logf("deadline 1s: Exec returned after %s", took.Round(time.Millisecond))

	// A real trial killed in the middle (srt, bwrap, socat and the fixture servers running):
	// nothing of it may be left in the container.
	r = h.Exec(ctx, hosts.Cmd(remote, "trial", "--emit", "--label-filter", "network"), 1200*time.Millisecond)
	if !r.TimedOut {
		t.Logf("the trial finished within 1.2s (%s); the kill was not exercised mid-trial", r.Duration)
	}
	r = h.Exec(ctx, hosts.Cmd("ps", "-eo", "pid,args"), time.Minute)
	for _, line := range strings.Split(strings.TrimSpace(string(r.Stdout)), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch args := strings.Join(f[1:], " "); {
		case strings.HasPrefix(args, "/sbin/docker-init") || args == "sleep infinity":
		case strings.HasPrefix(args, "setsid -w sh -c") || strings.HasPrefix(args, "sh -c echo") || args == "ps -eo pid,args":
		default:
			t.Errorf("left in the container after a killed trial: %s", line)
		}
	}

	// Ctrl-C: the runner's context ends.
	cctx, ccancel := context.WithCancel(ctx)
	time.AfterFunc(500*time.Millisecond, ccancel)
	r = h.Exec(cctx, hosts.Cmd("sleep", "1003"), time.Minute)
	if !r.TimedOut {
		t.Fatalf("cancelled exec: %+v, want TimedOut", r)
	}

	// The container disappears mid-trial: harness trouble (Err), and the next trial gets a new one.
	first := h.shared.id
	time.AfterFunc(time.Second, func() {
		h.cli.ContainerRemove(context.Background(), first, client.ContainerRemoveOptions{Force: true})
	})
	r = h.Exec(ctx, hosts.Cmd("sleep", "30"), time.Minute)
	if r.Err == nil || r.TimedOut {
		t.Fatalf("exec in a removed container: %+v, want Err", r)
	}
	t.Logf("container lost: %v", r.Err)
	r = h.Exec(ctx, hosts.Cmd(remote, "version"), time.Minute)
	if r.Err != nil || r.Exit != 0 || h.shared.id == first {
		t.Fatalf("exec after the loss: %+v (container %s, lost %s)", r, h.shared.id, first)
	}

	// A leftover of a killed run (its runner is gone) is removed; our live container is not.
	var rnd [4]byte
	rand.Read(rnd[:])
	host, _ := os.Hostname()
	leftName := ContainerPrefix + "leftover-" + hex.EncodeToString(rnd[:])
	created, err := h.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: leftName,
		Config: &container.Config{Image: images.Ref("bookworm"), Cmd: []string{"true"},
			Labels: map[string]string{LabelOwner: "sandcheck", LabelRunner: host + "/" + procfs.BootID() + "/999999999/1"}},
		HostConfig: &container.HostConfig{NetworkMode: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveLeftovers(ctx, h.cli); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cli.ContainerInspect(ctx, created.ID, client.ContainerInspectOptions{}); !dockerNotFound(err) {
		h.cli.ContainerRemove(ctx, created.ID, client.ContainerRemoveOptions{Force: true})
		t.Fatalf("leftover %s not removed (inspect: %v)", leftName, err)
	}
	if got := containersOfRun(t, h.cli, h.runID); len(got) != 1 {
		t.Fatalf("containers of the live host after RemoveLeftovers: %v, want its one", got)
	}

	runID, cli := h.runID, h.cli
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closed = true
	if got := containersOfRun(t, cli, runID); len(got) != 0 {
		t.Fatalf("containers left after Close: %v", got)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if r := h.Exec(ctx, hosts.Cmd("true"), time.Minute); r.Err == nil {
		t.Fatal("Exec after Close did not fail")
	}
}

// testContainerPerTrialDockerDefault: per_trial_container gives every trial its own container,
// and Docker's default profile stops bwrap, which Prepare records instead of refusing.
func testContainerPerTrialDockerDefault(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	h, err := New(Config{Name: "hosts-test-default", Image: images.Ref("bookworm"),
		Profile: ProfileDockerDefault, PerTrial: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Prepare(ctx, bin); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Logf("bwrap in a docker-default container: %s", h.BwrapCheck)
	if h.BwrapCheck == "" {
		t.Error("bwrap worked under Docker's default profile; the docker-default cells would not show what they are meant to")
	}
	if got := h.Isolation(); got != "container per trial (docker-default)" {
		t.Errorf("Isolation = %q", got)
	}
	seen := map[string]bool{}
	for i := 0; i < 2; i++ {
		t0 := time.Now()
		r := h.Exec(ctx, hosts.Cmd("hostname"), time.Minute)
		if r.Err != nil || r.Exit != 0 {
			t.Fatalf("exec %d: %+v", i, r)
		}
		t.Logf("per-trial exec %d (start + copy + exec + remove): %s", i, time.Since(t0).Round(time.Millisecond))
		seen[strings.TrimSpace(string(r.Stdout))] = true
	}
	if len(seen) != 2 {
		t.Errorf("two trials ran in the same container: %v", seen)
	}
	if got := containersOfRun(t, h.cli, h.runID); len(got) != 0 {
		t.Fatalf("per-trial containers left after their trials: %v", got)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

// testContainerOtherImages: an image no recipe builds is used as it is (never pulled), and a
// missing one is an error that says nothing is pulled here.
func testContainerOtherImages(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var rnd [4]byte
	rand.Read(rnd[:])
	missing, err := New(Config{Name: "hosts-test-missing", Image: "sandcheck-test/missing:" + hex.EncodeToString(rnd[:])})
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Close()
	if _, err := missing.Prepare(ctx, bin); err == nil || !strings.Contains(err.Error(), "nothing is pulled") {
		t.Fatalf("Prepare with a missing image: %v", err)
	}

	// Another image: the bookworm one under a name of no recipe, without our directories' help.
	b := &images.Builder{}
	defer b.Close()
	if _, err := b.Ensure(ctx, "bookworm"); err != nil {
		t.Fatal(err)
	}
	other := "sandcheck-test/other:" + hex.EncodeToString(rnd[:])
	h, err := New(Config{Name: "hosts-test-other", Image: other})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.cli.ImageTag(ctx, client.ImageTagOptions{Source: images.Ref("bookworm"), Target: other}); err != nil {
		t.Fatal(err)
	}
	defer h.cli.ImageRemove(context.Background(), other, client.ImageRemoveOptions{})
	remote, err := h.Prepare(ctx, bin)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if r := h.Exec(ctx, hosts.Cmd(remote, "version"), time.Minute); r.Err != nil || r.Exit != 0 {
		t.Fatalf("exec: %+v", r)
	}
}

// TestContainerTrialKeyHidden: while a trial runs in the container, no process in it holds the
// trial's key in its command line or environment; the trial still gets the key.
func TestContainerTrialKeyHidden(t *testing.T) {
	hosttest.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a cold image build takes minutes
	defer cancel()
	h, err := New(Config{Name: "hosts-test-key", Image: images.Ref("bookworm")})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Prepare(ctx, hosttest.StaticSandcheck(t)); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	var scan keyscan.Scan
	e, err := hosts.NewExecutor(h, hosts.Trials{Binary: "unused",
		Argv:   func(t runner.Trial, _ string) []string { return keyscan.Argv(t.Key) },
		Parse:  scan.Parse,
		Frames: keyscan.Trials})
	if err != nil {
		t.Fatal(err)
	}
	key := runner.NewKey()
	start := time.Now()
	rec := e.Run(ctx, runner.Trial{Key: key, Timeout: time.Minute})
	t.Logf("key scan in the container: %s", time.Since(start).Round(time.Millisecond))
	scan.Check(t, key, rec)
}

// TestContainerFloodKeepsEarlyEgress: a trial's keyed denied hit, then more output than the
// exec keeps the tail of, is still non-enforcing.
func TestContainerFloodKeepsEarlyEgress(t *testing.T) {
	hosttest.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a cold image build takes minutes
	defer cancel()
	h, err := New(Config{Name: "hosts-test-flood", Image: images.Ref("bookworm")})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Prepare(ctx, hosttest.StaticSandcheck(t)); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	var hit bytes.Buffer
	frame.EmitEgress(&hit, "KEY", model.Hit{Role: model.RoleDenied, Proto: "http", Path: "/http/early", From: "198.18.0.2:4711"})
	script := `read -r key; printf '%s\n' "$(echo '` + strings.TrimSpace(hit.String()) + `' | sed "s/KEY/$key/")"
yes 'SANDCHECK-EGRESS {"role":"allowed"}' | head -c ` + strconv.Itoa(maxExecOutput+(1<<20)) + `; echo`
	e, err := hosts.NewExecutor(h, hosts.Trials{Binary: "unused",
		Argv:   func(runner.Trial, string) []string { return []string{"sh", "-c", script} },
		Parse:  trialresult.Parse,
		Frames: trialresult.Prefixes})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Run(ctx, runner.Trial{Key: runner.NewKey(), Timeout: time.Minute})
	if r.Outcome != model.NonEnforcing || len(r.Egress) != 1 || !strings.Contains(r.Egress[0], "/http/early") {
		t.Fatalf("a keyed denied hit before a flood: %+v", r)
	}
}
