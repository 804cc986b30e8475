// Package config is sandcheck's one environment layer. Every SANDCHECK_* variable is listed in
// Vars, with what it means and who it is for, and the ones sandcheck reads are read here, once,
// at first use, into Env; no other package reads them itself. Overrides (tool paths, caches,
// host defaults) sit under what a matrix or a flag says; the trial settings are how the runner,
// `go test ./suites` and ginkgo hand one trial its target and fault. Standard library only.
package config

import (
	"os"
	"strings"
	"sync"
)

// Env is the environment sandcheck reads, as read once. Values are as set ("" when unset);
// durations and numbers are checked by the packages that use them, whose errors name the
// variable and say what they expected.
type Env struct {
	// Sandbox executables (targets): an explicit path wins over the project's tools and PATH.
	SRT, Codex, Bwrap, Firejail, ClaudeCode string

	// ssh, wsl and vm hosts.
	PassEnv     []string // SANDCHECK_PASSENV: the runner's variables passed to remote trials
	LinuxBinary string   // SANDCHECK_LINUX_BINARY: a Linux sandcheck to copy where the runner is not one
	WSLExe      string   // SANDCHECK_WSL_EXE: the wsl.exe to drive
	VMCache     string   // SANDCHECK_VM_CACHE: where VM kernels and root filesystems are kept
	VMLog       bool     // SANDCHECK_VM_LOG=1: VM artifact builds report progress
	DockerDebug bool     // SANDCHECK_DOCKER_DEBUG (any value): testcontainers' own logging

	// Caches and mirrors.
	ImageCache   string // SANDCHECK_IMAGE_CACHE: container images' build cache
	DebianMirror string // SANDCHECK_DEBIAN_MIRROR: the mirror debootstrap uses
	NpmCache     string // SANDCHECK_NPM_CACHE: installed npm sandbox versions
	NpmTTL       string // SANDCHECK_NPM_TTL: how long a fetched version list is fresh
	NpmOffline   bool   // SANDCHECK_NPM_OFFLINE=1: never fetch version lists

	// The specs.
	Strict      bool   // SANDCHECK_STRICT=1: a known finding fails its spec instead of skipping
	Concurrency string // SANDCHECK_CONCURRENCY: sessions of the concurrency scenario

	// Trial settings: what one trial runs (harness.Config).
	Target, TargetPath, TargetSettings string
	Fault, Settings, Hostnames         string
	SandboxTimeout, TrialBudget        string
	WorkDir                            string
	Keep                               bool
	User                               string
}

// read fills an Env from getenv.
func read(getenv func(string) string) Env {
	list := func(v, sep string) []string {
		var out []string
		for _, s := range strings.Split(v, sep) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	on := func(name string) bool { return getenv(name) == "1" }
	return Env{
		SRT: getenv(SRT), Codex: getenv(Codex), Bwrap: getenv(Bwrap), Firejail: getenv(Firejail), ClaudeCode: getenv(ClaudeCode),

		PassEnv: list(getenv(PassEnv), ","), LinuxBinary: getenv(LinuxBinary),
		WSLExe:  getenv(WSLExe),
		VMCache: getenv(VMCache),
		VMLog:   on(VMLog), DockerDebug: getenv(DockerDebug) != "",

		ImageCache: getenv(ImageCache), DebianMirror: getenv(DebianMirror),
		NpmCache: getenv(NpmCache), NpmTTL: getenv(NpmTTL), NpmOffline: on(NpmOffline),

		Strict: on(Strict), Concurrency: getenv(Concurrency),

		Target: getenv(Target), TargetPath: getenv(TargetPath), TargetSettings: getenv(TargetSettings),
		Fault: getenv(Fault), Settings: getenv(Settings), Hostnames: getenv(Hostnames),
		SandboxTimeout: getenv(SandboxTimeout), TrialBudget: getenv(TrialBudget),
		WorkDir: getenv(WorkDir), Keep: on(Keep), User: getenv(User),
	}
}

// Tool is the path a sandbox executable's variable names (SRT, Codex, Bwrap, Firejail).
func (e Env) Tool(name string) string {
	switch name {
	case SRT:
		return e.SRT
	case Codex:
		return e.Codex
	case Bwrap:
		return e.Bwrap
	case Firejail:
		return e.Firejail
	case ClaudeCode:
		return e.ClaudeCode
	}
	return ""
}

var (
	mu     sync.Mutex
	loaded bool
	env    Env
)

// Get returns the environment as read at the first call: once per process, so every part of a
// run sees the same values however long it runs. (A spare trial process sets its environment
// before its first call.)
func Get() Env {
	mu.Lock()
	defer mu.Unlock()
	if !loaded {
		env, loaded = read(os.Getenv), true
	}
	return env
}

// Set replaces what Get returns and returns the function that restores it: for tests, which
// cannot change a process's environment once it has been read.
func Set(e Env) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	old, wasLoaded := env, loaded
	env, loaded = e, true
	return func() {
		mu.Lock()
		defer mu.Unlock()
		env, loaded = old, wasLoaded
	}
}

// With changes what Get returns by f, and returns the function that restores it (tests).
func With(f func(*Env)) (restore func()) {
	e := Get()
	f(&e)
	return Set(e)
}
