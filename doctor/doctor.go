// Package doctor collects a host's fingerprint: the facts a sandbox bug report needs and that
// the seed's reporter gathered by hand (kernel, distro, WSL version and networking mode, tool
// versions and where they resolve on PATH, user-namespace sysctls, proxy settings, PID 1 seccomp).
//
// Every file read goes through Options.Root and every command through Options.Run, so tests point
// Collect at fixture trees under testdata/ and fake the version commands.
package doctor

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/config"
)

// Missing is the value of a version, path or sysctl that does not exist on the host.
const Missing = "missing"

// InteropNote marks a tool that resolves into a Windows drive mounted by WSL: a Windows binary
// (or script) shadowing the Linux one, which a sandbox on WSL usually cannot use.
const InteropNote = "Windows PATH interop shadowing"

// UsernsSysctls are the user-namespace sysctls reported, by sysctl name (read from /proc/sys).
var UsernsSysctls = []string{
	"kernel.unprivileged_userns_clone",
	"user.max_user_namespaces",
	"kernel.apparmor_restrict_unprivileged_userns",
}

// Tools whose versions are reported; PathTools are the ones whose PATH resolution is reported.
var (
	versionTools = []string{"bwrap", "socat", "node", "rg"}
	PathTools    = []string{"bwrap", "socat", "node", "rg", "srt", "curl", "git", "wslinfo"}
)

// Fingerprint is one host's facts. The JSON keys are read by reports; keep them stable.
type Fingerprint struct {
	Kernel            string `json:"kernel"`              // uname release (/proc/sys/kernel/osrelease)
	Distro            string `json:"distro"`              // PRETTY_NAME from os-release
	WSLVersion        string `json:"wsl_version"`         // "2", "1", or "" when not WSL
	WSLNetworkingMode string `json:"wsl_networking_mode"` // `wslinfo --networking-mode` (nat, mirrored, ...) or ""
	WSLInterop        bool   `json:"wsl_interop"`         // binfmt_misc WSLInterop or WSLInterop-late registered

	Bwrap   string `json:"bwrap"` // versions; "missing" when not on PATH
	Socat   string `json:"socat"`
	Node    string `json:"node"`
	Rg      string `json:"rg"`
	Sandbox string `json:"sandbox"` // supplied by the caller (e.g. "@anthropic-ai/sandbox-runtime@0.0.66")

	// Paths maps a tool to where it resolves on PATH ("missing" when it does not), with
	// " -> TARGET" for a symlink and " [Windows PATH interop shadowing]" under a Windows mount.
	Paths map[string]string `json:"paths"`
	// Userns maps each of UsernsSysctls to its value, or "missing" when the key does not exist.
	Userns map[string]string `json:"userns"`
	// ProxyEnv holds every *_PROXY / *_proxy variable, credentials in URLs redacted.
	ProxyEnv map[string]string `json:"proxy_env"`
	// CurlRC is keyed by "~/.curlrc" and "/etc/curlrc".
	CurlRC map[string]RCFile `json:"curlrc"`
	// GitProxy maps "global" and "system" to git's http.proxy ("unset" when not set); nil when git
	// is missing (Paths["git"] then says "missing").
	GitProxy map[string]string `json:"git_proxy"`
	// PID1Seccomp is the Seccomp: mode of PID 1 ("0 disabled", "1 strict", "2 filter"), followed by
	// " (N filters)" when the kernel reports Seccomp_filters; "unknown" when unreadable.
	PID1Seccomp string `json:"pid1_seccomp"`
	// WorkDirFS is the file system type (statfs) of the directory trials' workspaces are made in
	// (SANDCHECK_WORKDIR, else TMPDIR, else /tmp): "9p" on a WSL 2 Windows drive, where srt makes
	// its mount points itself instead of leaving them to bubblewrap.
	WorkDirFS   string    `json:"workdir_fs,omitempty"`
	Arch        string    `json:"arch"`
	CollectedAt time.Time `json:"collected_at"`
	// User is who the sandbox runs as (supplied by the caller: a trial knows its user).
	User *User `json:"user,omitempty"`
}

// User is the account a sandbox runs as, as the fingerprint records it.
type User struct {
	Spec   string `json:"spec"`           // as asked: unprivileged, root or an account name
	Name   string `json:"name,omitempty"` // the account; "" when it does not exist (yet)
	UID    int    `json:"uid"`
	GID    int    `json:"gid"`
	Groups []int  `json:"groups,omitempty"`
	Home   string `json:"home,omitempty"`
	Note   string `json:"note,omitempty"` // e.g. "not created yet"
}

// RCFile says whether a curl config file exists and which of its lines configure a proxy
// (credentials redacted).
type RCFile struct {
	Exists     bool     `json:"exists"`
	ProxyLines []string `json:"proxy_lines"`
}

// Options says where Collect looks. The zero value inspects this host.
type Options struct {
	Root     string                               // filesystem root for every file read; default "/"
	Env      []string                             // environment (PATH, proxies, WSL_DISTRO_NAME); default os.Environ()
	Home     string                               // home directory (relative to Root); default $HOME from Env
	LookPath func(name string) (string, error)    // default: search Env's PATH under Root
	Run      func(argv ...string) (string, error) // default: exec with a 2 s timeout, Env as environment
	Now      func() time.Time                     // default time.Now

	SandboxVersion string // reported as Fingerprint.Sandbox; "" means "missing"
	User           *User  // reported as Fingerprint.User
	SandboxPath    string // where the caller found the sandbox; default: "srt" looked up on PATH
	// SandboxName is the sandbox's name (the target's): its path is reported under it. "" or
	// "srt": in srt's own slot.
	SandboxName string
}

// RunTimeout bounds each command the default Run starts.
const RunTimeout = 2 * time.Second

// Collect gathers the fingerprint. It never fails: what it cannot read it reports as such.
func Collect(opts Options) Fingerprint {
	c := newCollector(opts)
	f := Fingerprint{
		Kernel:   c.kernel(),
		Distro:   c.distro(),
		Paths:    map[string]string{},
		Userns:   map[string]string{},
		ProxyEnv: proxyEnv(c.env),
		CurlRC:   c.curlrc(),
		Sandbox:  opts.SandboxVersion,
		User:     opts.User,
	}
	if f.Sandbox == "" {
		f.Sandbox = Missing
	}
	f.WSLInterop = c.exists("/proc/sys/fs/binfmt_misc/WSLInterop") || c.exists("/proc/sys/fs/binfmt_misc/WSLInterop-late")
	f.WSLVersion = wslVersion(f.Kernel, c.getenv("WSL_DISTRO_NAME") != "" || f.WSLInterop)
	interop := c.interopMounts(f.WSLVersion != "")

	resolved := map[string]string{}
	own := opts.SandboxName == "" || opts.SandboxName == "srt"
	if !own && opts.SandboxPath != "" {
		f.Paths[opts.SandboxName] = c.describePath(opts.SandboxPath, interop)
	}
	for _, t := range PathTools {
		p := ""
		if t == "srt" && own && opts.SandboxPath != "" {
			p = opts.SandboxPath
		} else if lp, err := c.lookPath(t); err == nil {
			p = lp
		}
		if p == "" {
			f.Paths[t] = Missing
			continue
		}
		resolved[t] = p
		f.Paths[t] = c.describePath(p, interop)
	}

	vers := map[string]*string{"bwrap": &f.Bwrap, "socat": &f.Socat, "node": &f.Node, "rg": &f.Rg}
	for _, t := range versionTools {
		*vers[t] = c.version(t, resolved[t])
	}

	if p, ok := resolved["wslinfo"]; ok {
		out, err := c.run(c.exe(p), "--networking-mode")
		mode := firstLine(out)
		switch {
		case err == nil && mode != "":
			f.WSLNetworkingMode = mode
		case mode != "":
			f.WSLNetworkingMode = "unknown (" + mode + ")"
		default:
			f.WSLNetworkingMode = "unknown"
		}
	}

	for _, k := range UsernsSysctls {
		f.Userns[k] = c.sysctl(k)
	}
	if p, ok := resolved["git"]; ok {
		f.GitProxy = c.gitProxy(c.exe(p))
	}
	f.PID1Seccomp = c.pid1Seccomp()
	f.WorkDirFS = fsType(c.rooted(c.workDir()))
	f.Arch = c.arch()
	f.CollectedAt = c.now().UTC().Truncate(time.Second)
	return f
}

type collector struct {
	root string
	env  []string
	home string
	look func(string) (string, error)
	run  func(argv ...string) (string, error)
	now  func() time.Time
}

// workDir is where trials make their workspaces, as the harness chooses it.
func (c *collector) workDir() string {
	for _, k := range []string{config.WorkDir, "TMPDIR"} {
		if v := c.getenv(k); v != "" {
			return v
		}
	}
	return "/tmp"
}

func newCollector(o Options) *collector {
	c := &collector{root: o.Root, env: o.Env, home: o.Home, look: o.LookPath, run: o.Run, now: o.Now}
	if c.root == "" {
		c.root = "/"
	}
	if abs, err := filepath.Abs(c.root); err == nil {
		c.root = abs
	}
	if c.env == nil {
		c.env = os.Environ()
	}
	if c.home == "" {
		c.home = c.getenv("HOME")
	}
	if c.home == "" && c.root == "/" {
		c.home, _ = os.UserHomeDir()
	}
	if c.look == nil {
		c.look = c.defaultLookPath
	}
	if c.run == nil {
		c.run = c.defaultRun
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

func (c *collector) getenv(k string) string {
	v := ""
	for _, kv := range c.env { // last one wins, as in the kernel's execve
		if key, val, ok := strings.Cut(kv, "="); ok && key == k {
			v = val
		}
	}
	return v
}

// rooted maps a host path (as a process on the host would see it) into Root.
func (c *collector) rooted(p string) string {
	if c.root == "/" {
		return p
	}
	return filepath.Join(c.root, p)
}

// exe is the file to execute for a tool found at host path p: its symlinks resolved inside Root.
func (c *collector) exe(p string) string {
	if c.root == "/" {
		return p
	}
	return c.rooted(c.resolveLinks(p))
}

func (c *collector) read(p string) (string, error) {
	b, err := os.ReadFile(c.rooted(p))
	return string(b), err
}

func (c *collector) exists(p string) bool {
	_, err := os.Lstat(c.rooted(p))
	return err == nil
}

func (c *collector) lookPath(name string) (string, error) { return c.look(name) }

// defaultLookPath searches Env's PATH (not this process's) for an executable, under Root.
func (c *collector) defaultLookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(c.getenv("PATH")) {
		if dir == "" || !path.IsAbs(dir) {
			continue // relative PATH entries depend on a cwd we do not have
		}
		p := path.Join(dir, name)
		st, err := os.Stat(c.rooted(c.resolveLinks(p))) // absolute links stay inside Root
		if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func (c *collector) defaultRun(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = c.env
	cmd.WaitDelay = 500 * time.Millisecond // a child holding the pipe must not hang doctor
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.String(), err
}

func (c *collector) kernel() string {
	if s, err := c.read("/proc/sys/kernel/osrelease"); err == nil && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s)
	}
	if c.root == "/" {
		if release, _, err := uname(); err == nil {
			return release
		}
	}
	return "unknown"
}

func (c *collector) arch() string {
	if s, err := c.read("/proc/sys/kernel/arch"); err == nil && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s)
	}
	if c.root == "/" {
		if _, machine, err := uname(); err == nil && machine != "" {
			return machine
		}
	}
	return runtime.GOARCH
}

// version asks a tool for its version: "missing" when not on PATH, the version when it answered
// with one, else "unknown (...)" with the first line it printed or the error.
func (c *collector) version(tool, p string) string {
	if p == "" {
		return Missing
	}
	arg := "--version"
	if tool == "socat" {
		arg = "-V"
	}
	out, err := c.run(c.exe(p), arg)
	if tool == "socat" { // "socat by Gerhard Rieger ...\nsocat version 1.7.4.4 on ..."
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "socat version") {
				out = l
				break
			}
		}
	}
	if v := versionRE.FindString(out); v != "" {
		return v
	}
	if l := firstLine(out); l != "" {
		return "unknown (" + l + ")"
	}
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return "unknown"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	l, _, _ := strings.Cut(s, "\n")
	l = strings.TrimSpace(l)
	if len(l) > 120 {
		l = l[:120] + "..."
	}
	return l
}

func (c *collector) sysctl(name string) string {
	s, err := c.read("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	switch {
	case err == nil:
		return strings.TrimSpace(s)
	case errors.Is(err, fs.ErrNotExist):
		return Missing
	default:
		return "unreadable (" + err.Error() + ")"
	}
}

var seccompModes = map[string]string{"0": "disabled", "1": "strict", "2": "filter"}

func (c *collector) pid1Seccomp() string {
	s, err := c.read("/proc/1/status")
	if err != nil {
		return "unknown"
	}
	mode, filters := "", ""
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "Seccomp":
			mode = strings.TrimSpace(v)
		case "Seccomp_filters":
			filters = strings.TrimSpace(v)
		}
	}
	if mode == "" {
		return "unknown"
	}
	r := mode
	if name, ok := seccompModes[mode]; ok {
		r += " " + name
	}
	if mode == "2" && filters != "" {
		r += " (" + filters + " filters)"
	}
	return r
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
