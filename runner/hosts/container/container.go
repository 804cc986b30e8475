//go:build linux

// Package container is the container host kind: trials in Docker containers built by package
// images (or any local image), through testcontainers-go. Nothing is ever pulled.
package container

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/sandcheck/sandcheck/config"
	"github.com/sandcheck/sandcheck/images"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/targets/npmcache"
)

// Kind is the matrix kind of container hosts.
const Kind = "container"

// Container security profiles.
const (
	ProfileBwrapReady    = "bwrap-ready"    // seccomp relaxed, no masked/readonly paths: bwrap can work
	ProfileDockerDefault = "docker-default" // shows what a stock container does to the sandbox
)

func init() {
	hosts.Register(hosts.Kind{Name: Kind, NpmCache: true, HostKind: matrix.HostKind{
		Keys: []string{"image", "profile", "per_trial_container"},
		Settings: func(s *matrix.HostSettings) any {
			cfg := Config{Image: s.Required("image", "an image name"), Profile: ProfileBwrapReady,
				PerTrial: s.Bool("per_trial_container")}
			if s.Has("profile") {
				p := s.Optional("profile", ProfileBwrapReady+" or "+ProfileDockerDefault)
				if p != ProfileBwrapReady && p != ProfileDockerDefault {
					s.Errorf("profile", "unknown profile %q (expected %s or %s)", p, ProfileBwrapReady, ProfileDockerDefault)
				}
				cfg.Profile = p
			}
			return cfg
		},
	}, New: func(h matrix.Host, _ hosts.Options) (hosts.Host, error) {
		cfg, _ := h.Settings.(Config)
		cfg.Name, cfg.Users = h.Name, h.Users
		return New(cfg)
	}})
}

// Config describes a container host.
type Config struct {
	Name    string
	Image   string // a recipe of package images (built when missing) or an image in Docker
	Profile string // ProfileBwrapReady (default) or ProfileDockerDefault
	// PerTrial gives every trial a fresh container instead of one per host.
	PerTrial bool
	// Users are who the sandbox runs as (matrix user:); each container readies each account.
	Users []string
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

// Host runs trials in Docker containers built by package images (or any local image), via
// testcontainers-go. By default one container per host entry is started in Prepare and reused by
// every trial of that host's cells (in matrix/examples/containers.yaml each host has one cell, so
// that is a container per cell); per_trial_container gives every trial a fresh one. Containers
// run with network mode none, an init process, CAP_NET_ADMIN and CAP_SYS_ADMIN (trials build
// their fixture network namespaces inside), and, for profile bwrap-ready, seccomp unconfined and
// no masked or read-only /proc paths, which bubblewrap needs. Profile docker-default keeps
// Docker's own seccomp profile and masked paths, to show what a stock container does to the
// sandbox. Nothing is ever pulled.
type Host struct {
	cfg      Config
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

// New builds a container host. It connects to Docker
// ($DOCKER_HOST or the default socket) and fails when no engine answers: start one with
// scripts/start-dockerd.sh.
func New(h Config) (*Host, error) {
	if h.Image == "" {
		return nil, fmt.Errorf("container host %q: no image", h.Name)
	}
	switch h.Profile {
	case "":
		h.Profile = ProfileBwrapReady
	case ProfileBwrapReady, ProfileDockerDefault:
	default:
		return nil, fmt.Errorf("container host %q: unknown profile %q", h.Name, h.Profile)
	}
	// Ryuk, testcontainers' reaper, is an image from a registry: there is none here. Prepare
	// and Close (and the next run's Prepare, after a kill) do its job.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	if !config.Get().DockerDebug {
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
	return &Host{cfg: h, perTrial: h.PerTrial, runID: hex.EncodeToString(id[:]),
		provider: p, cli: p.Client(), boxes: map[*ctrBox]bool{}}, nil
}

// Name implements hosts.Host.
func (c *Host) Name() string { return c.cfg.Name }

// Isolation implements hosts.Host.
func (c *Host) Isolation() string {
	if c.perTrial {
		return "container per trial (" + c.cfg.Profile + ")"
	}
	return "container per host (" + c.cfg.Profile + ")"
}

// Prepare implements hosts.Host: it removes what killed runs left behind, makes sure the image exists
// (building one of package images' when missing: minutes the first time), starts a container,
// copies the sandcheck binary in, and checks that it runs there and, for profile bwrap-ready,
// that bubblewrap can create its namespaces.
func (c *Host) Prepare(ctx context.Context, localBinary string) (string, error) {
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

func (c *Host) ensureImage(ctx context.Context) error {
	if distro, ok := images.DistroOf(c.cfg.Image); ok {
		bld := &images.Builder{Docker: c.cli} // the engine testcontainers found
		defer bld.Close()
		if _, err := bld.Ensure(ctx, distro); err != nil {
			return fmt.Errorf("image %s: %w", c.cfg.Image, err)
		}
		return nil
	}
	if _, err := c.cli.ImageInspect(ctx, c.cfg.Image); err != nil {
		return fmt.Errorf("image %s is not in Docker and no recipe of package images builds it (recipes: %s:%s); nothing is pulled here: %w",
			c.cfg.Image, images.Repo, strings.Join(images.Distros, "|"), err)
	}
	return nil
}

// check runs the binary and bubblewrap in a fresh container.
func (c *Host) check(ctx context.Context, b *ctrBox) error {
	out, code, err := c.run(ctx, b, []string{RemoteBinary, "version"}, 30*time.Second)
	if err != nil || code != 0 {
		return fmt.Errorf("sandcheck does not run in %s (exit %d, %v): %s", c.cfg.Image, code, err, hosts.Tail(out, 300))
	}
	bw := []string{"bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--proc", "/proc", "--dev", "/dev", "true"}
	out, code, err = c.run(ctx, b, bw, 30*time.Second)
	if err != nil {
		return fmt.Errorf("bwrap check in %s: %w", c.cfg.Image, err)
	}
	if code != 0 {
		c.BwrapCheck = strings.TrimSpace(string(out))
		if c.BwrapCheck == "" {
			c.BwrapCheck = fmt.Sprintf("exit %d", code)
		}
		if c.cfg.Profile == ProfileBwrapReady {
			return fmt.Errorf("bwrap cannot create its namespaces in %s with profile %s: %s", c.cfg.Image, c.cfg.Profile, c.BwrapCheck)
		}
		// docker-default: expected; the trials will show what the sandbox does about it.
	}
	return nil
}

// run executes argv in b and returns its combined output.
func (c *Host) run(ctx context.Context, b *ctrBox, argv []string, timeout time.Duration) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := c.execIn(ctx, b, hosts.Cmd(argv...), nil)
	return append(r.Stdout, r.Stderr...), r.Exit, r.Err
}

var unsafeContainerName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// start creates and starts one container and copies the binary in.
func (c *Host) start(ctx context.Context, localBinary string) (*ctrBox, error) {
	name := fmt.Sprintf("%s%s-%s-%d", ContainerPrefix, unsafeContainerName.ReplaceAllString(c.cfg.Name, "_"), c.runID, c.seq.Add(1))
	bwrapReady := c.cfg.Profile == ProfileBwrapReady
	req := testcontainers.ContainerRequest{
		Image:  c.cfg.Image,
		Name:   name,
		Cmd:    []string{"sleep", "infinity"},
		Labels: map[string]string{LabelOwner: "sandcheck", LabelRunner: runnerID(), LabelRun: c.runID, LabelHost: c.cfg.Name},
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
		return nil, fmt.Errorf("create container %s from %s: %w", name, c.cfg.Image, err)
	}
	if err := ctr.Start(ctx); err != nil {
		c.remove(b)
		return nil, fmt.Errorf("start container %s: %w", name, err)
	}
	if _, ours := images.DistroOf(c.cfg.Image); !ours {
		// Another image: make the directories ours have.
		r := c.execIn(ctx, b, hosts.Cmd("mkdir", "-p", images.BinDir, images.TmpDir), nil)
		if r.Err != nil || r.Exit != 0 {
			c.remove(b)
			return nil, fmt.Errorf("prepare %s in %s: exit %d %v: %s", images.BinDir, c.cfg.Image, r.Exit, r.Err, hosts.Tail(r.Stderr, 300))
		}
	}
	if err := c.copyBinary(ctx, b.id, localBinary); err != nil {
		c.remove(b)
		return nil, fmt.Errorf("copy %s into %s: %w", localBinary, name, err)
	}
	if err := hosts.EnsureUsers(c.cfg.Users, func(argv []string) ([]byte, int, error) {
		r := c.execIn(ctx, b, hosts.Cmd(append([]string{RemoteBinary}, argv...)...), nil)
		return append(r.Stdout, r.Stderr...), r.Exit, r.Err
	}); err != nil {
		c.remove(b)
		return nil, fmt.Errorf("container %s: %w", name, err)
	}
	return b, nil
}

// copyBinary streams the binary into the container as an uncompressed tar (testcontainers'
// CopyFileToContainer gzips it in memory first, which costs a second per container).
func (c *Host) copyBinary(ctx context.Context, id, localBinary string) error {
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
func (c *Host) remove(b *ctrBox) error {
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

// Close implements hosts.Host: it removes every container this host created, and nothing else.
func (c *Host) Close() error {
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
