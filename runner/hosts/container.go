//go:build linux

package hosts

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/sandcheck/sandcheck/images"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/targets/npmcache"
)

func init() {
	Register(matrix.KindContainer, func(h matrix.Host) (Host, error) { return NewContainer(h) })
}

// Labels and names of everything a Container host creates in Docker. A container is ours when
// its name starts with ContainerPrefix and it carries LabelOwner; LabelRunner names the process
// that created it, so that the next Prepare can tell a killed run's leftovers (remove) from a
// live run's containers (leave alone).
const (
	ContainerPrefix = "sandcheck-"
	LabelOwner      = "org.sandcheck.owner" // = "sandcheck"
	LabelRunner     = "org.sandcheck.runner"
	LabelRun        = "org.sandcheck.run" // one Container host's id
	LabelHost       = "org.sandcheck.host"
)

// RemoteBinary is where Prepare copies sandcheck inside containers.
const RemoteBinary = images.BinDir + "/sandcheck"

// execIDVar marks every process one Exec starts, so that a kill reaches processes that left the
// exec's session (sandboxes start theirs in new sessions).
const execIDVar = "SANDCHECK_EXEC_ID"

// Container runs trials in Docker containers built by package images (or any local image), via
// testcontainers-go. By default one container per host entry is started in Prepare and reused by
// every trial of that host's cells (in matrix/examples/containers.yaml each host has one cell, so
// that is a container per cell); per_trial_container gives every trial a fresh one. Containers
// run with network mode none, an init process, CAP_NET_ADMIN and CAP_SYS_ADMIN (trials build
// their fixture network namespaces inside), and, for profile bwrap-ready, seccomp unconfined and
// no masked or read-only /proc paths, which bubblewrap needs. Profile docker-default keeps
// Docker's own seccomp profile and masked paths, to show what a stock container does to the
// sandbox. Nothing is ever pulled.
type Container struct {
	h        matrix.Host
	perTrial bool
	runID    string

	provider *testcontainers.DockerProvider
	cli      client.APIClient

	mu       sync.Mutex // guards prepared, local, shared, closed
	prepared bool
	local    string  // the sandcheck binary on this machine
	shared   *ctrBox // the per-host container (nil in per-trial mode or before Prepare)
	closed   bool
	bmu      sync.Mutex
	boxes    map[*ctrBox]bool // every container created and not yet removed
	seq      atomic.Int64
	execSeq  atomic.Int64
	// BwrapCheck is what `bwrap` said when Prepare tried it in the container ("" = it worked).
	BwrapCheck string
}

// ctrBox is one container.
type ctrBox struct {
	c    testcontainers.Container
	id   string
	name string
	dead atomic.Bool // the container stopped or vanished under us
}

// NewContainer builds the host for a matrix entry of kind container. It connects to Docker
// ($DOCKER_HOST or the default socket) and fails when no engine answers: start one with
// scripts/start-dockerd.sh.
func NewContainer(h matrix.Host) (*Container, error) {
	if h.Image == "" {
		return nil, fmt.Errorf("container host %q: no image", h.Name)
	}
	switch h.Profile {
	case "":
		h.Profile = matrix.ProfileBwrapReady
	case matrix.ProfileBwrapReady, matrix.ProfileDockerDefault:
	default:
		return nil, fmt.Errorf("container host %q: unknown profile %q", h.Name, h.Profile)
	}
	// Ryuk, testcontainers' reaper, is an image from a registry: there is none here. Prepare
	// and Close (and the next run's Prepare, after a kill) do its job.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	if os.Getenv("SANDCHECK_DOCKER_DEBUG") == "" {
		// testcontainers prints engine details and lifecycle lines to stderr, over the progress.
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	// Default network "none": with dockerd's bridge disabled, testcontainers would otherwise
	// create a bridge network of its own and attach the container to it.
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(tclog.Default()),
		testcontainers.WithDefaultBridgeNetwork("none"))
	if err != nil {
		return nil, fmt.Errorf("container host %q: no Docker engine (start one with scripts/start-dockerd.sh): %w", h.Name, err)
	}
	if !p.Config().RyukDisabled {
		p.Close()
		return nil, fmt.Errorf("container host %q: testcontainers' reaper is enabled (TESTCONTAINERS_RYUK_DISABLED was read as false); it cannot be pulled here", h.Name)
	}
	var id [4]byte
	rand.Read(id[:])
	return &Container{h: h, perTrial: h.PerTrialContainer, runID: hex.EncodeToString(id[:]),
		provider: p, cli: p.Client(), boxes: map[*ctrBox]bool{}}, nil
}

// Name implements Host.
func (c *Container) Name() string { return c.h.Name }

// Isolation implements Host.
func (c *Container) Isolation() string {
	if c.perTrial {
		return "container per trial (" + c.h.Profile + ")"
	}
	return "container per host (" + c.h.Profile + ")"
}

// Prepare implements Host: it removes what killed runs left behind, makes sure the image exists
// (building one of package images' when missing: minutes the first time), starts a container,
// copies the sandcheck binary in, and checks that it runs there and, for profile bwrap-ready,
// that bubblewrap can create its namespaces.
func (c *Container) Prepare(ctx context.Context, localBinary string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", errors.New("container host closed")
	}
	if err := CheckStatic(localBinary); err != nil {
		return "", err
	}
	c.local = localBinary
	if _, err := c.cli.Ping(ctx, client.PingOptions{}); err != nil {
		return "", fmt.Errorf("no Docker engine answers (start one with scripts/start-dockerd.sh): %w", err)
	}
	if _, err := RemoveLeftovers(ctx, c.cli); err != nil {
		return "", err
	}
	if err := c.ensureImage(ctx); err != nil {
		return "", err
	}
	b, err := c.start(ctx, localBinary)
	if err != nil {
		return "", err
	}
	if err := c.check(ctx, b); err != nil {
		c.remove(b)
		return "", err
	}
	if c.perTrial {
		c.remove(b) // it served the checks; every trial gets its own
	} else {
		c.shared = b
	}
	c.prepared = true
	return RemoteBinary, nil
}

func (c *Container) ensureImage(ctx context.Context) error {
	if distro, ok := images.DistroOf(c.h.Image); ok {
		bld := &images.Builder{Docker: c.cli} // the engine testcontainers found
		defer bld.Close()
		if _, err := bld.Ensure(ctx, distro); err != nil {
			return fmt.Errorf("image %s: %w", c.h.Image, err)
		}
		return nil
	}
	if _, err := c.cli.ImageInspect(ctx, c.h.Image); err != nil {
		return fmt.Errorf("image %s is not in Docker and no recipe of package images builds it (recipes: %s:%s); nothing is pulled here: %w",
			c.h.Image, images.Repo, strings.Join(images.Distros, "|"), err)
	}
	return nil
}

// check runs the binary and bubblewrap in a fresh container.
func (c *Container) check(ctx context.Context, b *ctrBox) error {
	out, code, err := c.run(ctx, b, []string{RemoteBinary, "version"}, 30*time.Second)
	if err != nil || code != 0 {
		return fmt.Errorf("sandcheck does not run in %s (exit %d, %v): %s", c.h.Image, code, err, tail(out, 300))
	}
	bw := []string{"bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--proc", "/proc", "--dev", "/dev", "true"}
	out, code, err = c.run(ctx, b, bw, 30*time.Second)
	if err != nil {
		return fmt.Errorf("bwrap check in %s: %w", c.h.Image, err)
	}
	if code != 0 {
		c.BwrapCheck = strings.TrimSpace(string(out))
		if c.BwrapCheck == "" {
			c.BwrapCheck = fmt.Sprintf("exit %d", code)
		}
		if c.h.Profile == matrix.ProfileBwrapReady {
			return fmt.Errorf("bwrap cannot create its namespaces in %s with profile %s: %s", c.h.Image, c.h.Profile, c.BwrapCheck)
		}
		// docker-default: expected; the trials will show what the sandbox does about it.
	}
	return nil
}

// run executes argv in b and returns its combined output.
func (c *Container) run(ctx context.Context, b *ctrBox, argv []string, timeout time.Duration) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := c.execIn(ctx, b, argv, nil)
	return append(r.Stdout, r.Stderr...), r.Exit, r.Err
}

var unsafeContainerName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// start creates and starts one container and copies the binary in.
func (c *Container) start(ctx context.Context, localBinary string) (*ctrBox, error) {
	name := fmt.Sprintf("%s%s-%s-%d", ContainerPrefix, unsafeContainerName.ReplaceAllString(c.h.Name, "_"), c.runID, c.seq.Add(1))
	bwrapReady := c.h.Profile == matrix.ProfileBwrapReady
	req := testcontainers.ContainerRequest{
		Image:  c.h.Image,
		Name:   name,
		Cmd:    []string{"sleep", "infinity"},
		Labels: map[string]string{LabelOwner: "sandcheck", LabelRunner: runnerID(), LabelRun: c.runID, LabelHost: c.h.Name},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NetworkMode = "none"
			// Versions of npm sandboxes a cell chose (--target srt@0.0.60) run from the
			// machine's npm cache, at the same path inside: read-only, installed once.
			if npm := npmcache.New().Root(); dirExists(npm) {
				hc.Binds = append(hc.Binds, npm+":"+npm+":ro")
			}
			yes := true
			hc.Init = &yes
			hc.CapAdd = []string{"NET_ADMIN", "SYS_ADMIN"}
			if bwrapReady {
				// The daemon takes seccomp's value as the profile's JSON text, or "unconfined";
				// empty (not nil) MaskedPaths/ReadonlyPaths = the CLI's systempaths=unconfined.
				hc.SecurityOpt = append(hc.SecurityOpt, "seccomp=unconfined")
				if engineAppArmor(ctx, c.cli) {
					hc.SecurityOpt = append(hc.SecurityOpt, "apparmor=unconfined")
				}
				hc.MaskedPaths = []string{}
				hc.ReadonlyPaths = []string{}
			}
		},
		EndpointSettingsModifier: func(m map[string]*network.EndpointSettings) { clear(m) },
	}
	ctr, err := c.provider.CreateContainer(ctx, req)
	b := &ctrBox{c: ctr, name: name}
	if ctr != nil {
		b.id = ctr.GetContainerID()
		c.bmu.Lock()
		c.boxes[b] = true
		c.bmu.Unlock()
	}
	if err != nil {
		c.remove(b)
		return nil, fmt.Errorf("create container %s from %s: %w", name, c.h.Image, err)
	}
	if err := ctr.Start(ctx); err != nil {
		c.remove(b)
		return nil, fmt.Errorf("start container %s: %w", name, err)
	}
	if _, ours := images.DistroOf(c.h.Image); !ours {
		// Another image: make the directories ours have.
		r := c.execIn(ctx, b, []string{"mkdir", "-p", images.BinDir, images.TmpDir}, nil)
		if r.Err != nil || r.Exit != 0 {
			c.remove(b)
			return nil, fmt.Errorf("prepare %s in %s: exit %d %v: %s", images.BinDir, c.h.Image, r.Exit, r.Err, tail(r.Stderr, 300))
		}
	}
	if err := c.copyBinary(ctx, b.id, localBinary); err != nil {
		c.remove(b)
		return nil, fmt.Errorf("copy %s into %s: %w", localBinary, name, err)
	}
	if err := ensureUsers(c.h.Users, func(argv []string) ([]byte, int, error) {
		r := c.execIn(ctx, b, append([]string{RemoteBinary}, argv...), nil)
		return append(r.Stdout, r.Stderr...), r.Exit, r.Err
	}); err != nil {
		c.remove(b)
		return nil, fmt.Errorf("container %s: %w", name, err)
	}
	return b, nil
}

// copyBinary streams the binary into the container as an uncompressed tar (testcontainers'
// CopyFileToContainer gzips it in memory first, which costs a second per container).
func (c *Container) copyBinary(ctx context.Context, id, localBinary string) error {
	f, err := os.Open(localBinary)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path.Base(RemoteBinary), Mode: 0o755, Size: st.Size(), ModTime: st.ModTime()})
		if err == nil {
			_, err = io.Copy(tw, f)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	_, err = c.cli.CopyToContainer(ctx, id, client.CopyToContainerOptions{DestinationPath: path.Dir(RemoteBinary), Content: pr})
	return err
}

var (
	appArmorOnce sync.Once
	appArmorOn   bool
)

// engineAppArmor reports whether the engine confines containers with AppArmor (then bwrap-ready
// needs apparmor=unconfined too).
func engineAppArmor(ctx context.Context, cli client.APIClient) bool {
	appArmorOnce.Do(func() {
		info, err := cli.Info(ctx, client.InfoOptions{})
		if err != nil {
			return
		}
		for _, o := range info.Info.SecurityOptions {
			if strings.Contains(o, "apparmor") {
				appArmorOn = true
			}
		}
	})
	return appArmorOn
}

// remove stops and removes one container (Init makes the stop immediate).
func (c *Container) remove(b *ctrBox) error {
	if b == nil {
		return nil
	}
	c.bmu.Lock()
	delete(c.boxes, b)
	c.bmu.Unlock()
	b.dead.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if b.c != nil {
		err := b.c.Terminate(ctx, testcontainers.StopTimeout(0))
		if err == nil || dockerNotFound(err) {
			return nil
		}
	}
	if b.id == "" {
		return nil
	}
	_, err := c.cli.ContainerRemove(ctx, b.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !dockerNotFound(err) {
		return fmt.Errorf("remove container %s: %w", b.name, err)
	}
	return nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func dockerNotFound(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "No such container") || strings.Contains(err.Error(), "not found"))
}

// Exec implements Host. argv runs under `setsid -w sh` in a new session whose id is recorded
// inside the container, with TMPDIR at images.TmpDir, SANDCHECK_SRT at the image's srt (images of
// package images; another image needs srt on its PATH, and sh and setsid), and an exec id in the
// environment of everything it starts. On the deadline or ctx's end, a second exec kills the
// session and every process carrying the exec id, then Exec returns TimedOut.
func (c *Container) Exec(ctx context.Context, argv []string, timeout time.Duration) Result {
	start := time.Now()
	b, err := c.boxForTrial(ctx)
	if err != nil {
		return Result{Exit: -1, Err: err, Duration: time.Since(start)}
	}
	if c.perTrial {
		defer c.remove(b)
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env := []string{"TMPDIR=" + images.TmpDir}
	if _, ours := images.DistroOf(c.h.Image); ours {
		env = append(env, "SANDCHECK_SRT="+images.SRTPath)
	}
	r := c.execIn(tctx, b, argv, env)
	r.Duration = time.Since(start)
	return r
}

// boxForTrial returns the container a trial runs in: the shared one (restarted if it died), or
// a fresh one per trial (started outside the lock, so parallel trials start theirs at once).
func (c *Container) boxForTrial(ctx context.Context) (*ctrBox, error) {
	c.mu.Lock()
	if c.closed || !c.prepared {
		c.mu.Unlock()
		return nil, errors.New("container host closed or not prepared")
	}
	local := c.local
	if !c.perTrial {
		defer c.mu.Unlock()
		if c.shared == nil || c.shared.dead.Load() {
			c.remove(c.shared)
			b, err := c.start(ctx, local)
			if err != nil {
				return nil, err
			}
			c.shared = b
		}
		return c.shared, nil
	}
	c.mu.Unlock()
	b, err := c.start(ctx, local)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed { // Close ran meanwhile and could not see this one
		c.remove(b)
		return nil, errors.New("container host closed")
	}
	return b, nil
}

// execWrapper runs "$@" in a new session, recording the session id in $0 for the execKiller.
const execWrapper = `echo $$ > "$0"; "$@"; rc=$?; rm -f "$0"; exit $rc`

// execKiller SIGKILLs the session recorded in $1 and every process whose environment has exec id $2,
// twice over (a dying process may have been forking).
const execKiller = `for round in 1 2 3; do
  pg=$(cat "$1" 2>/dev/null); [ -n "$pg" ] && kill -9 -"$pg" 2>/dev/null
  for p in /proc/[0-9]*; do
    grep -qsz "^$2\$" "$p/environ" && kill -9 "${p#/proc/}" 2>/dev/null
  done
  sleep 0.1
done
rm -f "$1"`

// execIn runs argv in b. ctx's end (deadline or cancel) kills what it started and sets TimedOut.
func (c *Container) execIn(ctx context.Context, b *ctrBox, argv, env []string) Result {
	start := time.Now()
	if b.dead.Load() {
		return Result{Exit: -1, Err: fmt.Errorf("container %s is gone", b.name)}
	}
	id := fmt.Sprintf("%s-%d", c.runID, c.execSeq.Add(1))
	pidFile := "/tmp/.sandcheck-exec-" + id + ".sid" // /tmp: every image has it
	marker := execIDVar + "=" + id
	cmd := append([]string{"setsid", "-w", "sh", "-c", execWrapper, pidFile}, argv...)
	// The exec is created and attached with contexts that outlive ctx: the stream must stay
	// readable until the kill below has run.
	bg := context.WithoutCancel(ctx)
	createCtx, cancelCreate := context.WithTimeout(bg, 30*time.Second)
	defer cancelCreate()
	streamCtx, cancelStream := context.WithCancel(bg)
	defer cancelStream()
	created, err := c.cli.ExecCreate(createCtx, b.id, client.ExecCreateOptions{
		Cmd: cmd, Env: append(append([]string{}, env...), marker), WorkingDir: "/",
		AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		c.markIfGone(b)
		return Result{Exit: -1, Err: fmt.Errorf("docker exec in %s: %w", b.name, err), Duration: time.Since(start)}
	}
	att, err := c.cli.ExecAttach(streamCtx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		c.markIfGone(b)
		return Result{Exit: -1, Err: fmt.Errorf("docker exec attach in %s: %w", b.name, err), Duration: time.Since(start)}
	}
	defer att.Close()
	stdout, stderr := &execTail{max: maxExecOutput}, &execTail{max: maxExecOutput}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		copied <- err
	}()
	r := Result{}
	var copyErr error
	select {
	case copyErr = <-copied:
	case <-ctx.Done():
		r.TimedOut = true
		c.kill(b, pidFile, marker)
		select {
		case copyErr = <-copied:
		case <-time.After(5 * time.Second):
			// Something escaped both the session and the marker and holds the stream: let go.
			att.Close()
			copyErr = <-copied
		}
	}
	r.Stdout, r.Stderr = stdout.Bytes(), stderr.Bytes()
	var inspectErr error
	r.Exit, inspectErr = c.exitCode(bg, created.ID)
	switch {
	case r.TimedOut:
		r.Exit = -1
	case copyErr != nil:
		c.markIfGone(b)
		r.Exit, r.Err = -1, fmt.Errorf("docker exec stream from %s: %w", b.name, copyErr)
	case inspectErr != nil:
		// The engine did not say how the exec ended: the connection or the container is gone.
		c.markIfGone(b)
		r.Exit, r.Err = -1, fmt.Errorf("docker exec in %s: %w", b.name, inspectErr)
	case r.Exit < 0 || r.Exit == 137:
		// Killed from outside: if the container went with it, that is harness trouble. Docker
		// reports the container stopped a moment after the stream ends, so look for a while.
		if c.goneWithin(b, 2*time.Second) {
			r.Err = fmt.Errorf("container %s stopped during the exec (exit %d)", b.name, r.Exit)
			r.Exit = -1
		}
	}
	r.Duration = time.Since(start)
	return r
}

// kill runs the execKiller in a second exec.
func (c *Container) kill(b *ctrBox, pidFile, marker string) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	created, err := c.cli.ExecCreate(ctx, b.id, client.ExecCreateOptions{
		Cmd: []string{"sh", "-c", execKiller, "sandcheck-kill", pidFile, marker},
	})
	if err != nil {
		c.markIfGone(b)
		return
	}
	if _, err := c.cli.ExecStart(ctx, created.ID, client.ExecStartOptions{}); err != nil {
		return
	}
	for ctx.Err() == nil {
		st, err := c.cli.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
		if err != nil || !st.Running {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exitCode waits briefly for Docker to mark the exec finished and returns its exit code.
func (c *Container) exitCode(ctx context.Context, execID string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		st, err := c.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil {
			return -1, err
		}
		if !st.Running {
			return st.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, errors.New("the exec's output ended but Docker still reports it running")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// goneWithin polls markIfGone for up to d.
func (c *Container) goneWithin(b *ctrBox, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if c.markIfGone(b) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// markIfGone marks b dead when its container no longer runs, and says so.
func (c *Container) markIfGone(b *ctrBox) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if (err != nil && dockerNotFound(err)) || (err == nil && (st.Container.State == nil || !st.Container.State.Running)) {
		b.dead.Store(true)
		return true
	}
	return false
}

// Close implements Host: it removes every container this host created, and nothing else.
func (c *Container) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.shared = nil
	c.bmu.Lock()
	var all []*ctrBox
	for b := range c.boxes {
		all = append(all, b)
	}
	c.bmu.Unlock()
	var errs []error
	for _, b := range all {
		errs = append(errs, c.remove(b))
	}
	// Anything of this host's run the bookkeeping missed (a create that failed half-way).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := c.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelRun+"="+c.runID)})
	if err == nil {
		for _, s := range list.Items {
			if _, err := c.cli.ContainerRemove(ctx, s.ID, client.ContainerRemoveOptions{Force: true}); err != nil && !dockerNotFound(err) {
				errs = append(errs, err)
			}
		}
	} else {
		errs = append(errs, err)
	}
	c.provider.Close()
	return errors.Join(errs...)
}

// RemoveLeftovers removes containers that a sandcheck run on this machine created and did not
// remove because it was killed: ours by name prefix and owner label, and created by a process
// that no longer lives (or in an earlier boot). Containers of live runs and of other machines
// sharing the engine are left alone. It returns the names removed.
func RemoveLeftovers(ctx context.Context, cli client.APIClient) ([]string, error) {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelOwner+"=sandcheck")})
	if err != nil {
		return nil, fmt.Errorf("list sandcheck containers: %w", err)
	}
	var removed []string
	var errs []error
	for _, s := range list.Items {
		name := ""
		if len(s.Names) > 0 {
			name = strings.TrimPrefix(s.Names[0], "/")
		}
		if !strings.HasPrefix(name, ContainerPrefix) || runnerAlive(s.Labels[LabelRunner]) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, s.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !dockerNotFound(err) {
			errs = append(errs, fmt.Errorf("remove leftover container %s: %w", name, err))
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// runnerID names this process for LabelRunner: machine, boot, pid and the pid's start time (so
// a reused pid is not mistaken for the creator).
func runnerID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%s/%d/%d", host, machineBootID(), os.Getpid(), procStartTicks(os.Getpid()))
}

// runnerAlive reads a LabelRunner value: true when it names a live process of this machine's
// current boot, or another machine (not ours to judge).
func runnerAlive(label string) bool {
	f := strings.Split(label, "/")
	if len(f) != 4 {
		return false // not written by this code: a leftover of ours all the same
	}
	if host, _ := os.Hostname(); f[0] != host {
		return true
	}
	if f[1] != machineBootID() {
		return false
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return false
	}
	st := procStartTicks(pid)
	return st != 0 && strconv.FormatUint(st, 10) == f[3]
}

func machineBootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// procStartTicks is a process's start time in clock ticks since boot (field 22 of /proc/PID/stat), 0
// when there is no such process.
func procStartTicks(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// CheckStatic fails unless path is a statically linked ELF executable, which is what can be
// copied into any container: a dynamic one needs the host's libc there.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("sandcheck binary %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(p.Open())
			return fmt.Errorf("sandcheck binary %s is dynamically linked (interpreter %s), so it cannot be copied into a container; build it with CGO_ENABLED=0 (make build)",
				path, strings.TrimRight(string(interp), "\x00"))
		}
	}
	return nil
}

// maxExecOutput bounds what one exec keeps of each stream; the verdict is at the end of stdout.
const maxExecOutput = 4 << 20

// execTail keeps the last max bytes written.
type execTail struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped bool
}

func (t *execTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.dropped = true
	}
	return len(p), nil
}

func (t *execTail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf)
}
