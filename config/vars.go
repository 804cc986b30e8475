package config

// Names of the variables Env holds.
const (
	SRT      = "SANDCHECK_SRT"
	Codex    = "SANDCHECK_CODEX"
	Bwrap    = "SANDCHECK_BWRAP"
	Firejail = "SANDCHECK_FIREJAIL"
	// ClaudeCode is the claude executable (targets/claudecode).
	ClaudeCode = "SANDCHECK_CLAUDE_CODE"

	PassEnv     = "SANDCHECK_PASSENV"
	LinuxBinary = "SANDCHECK_LINUX_BINARY"
	WSLExe      = "SANDCHECK_WSL_EXE"
	VMCache     = "SANDCHECK_VM_CACHE"
	VMLog       = "SANDCHECK_VM_LOG"
	DockerDebug = "SANDCHECK_DOCKER_DEBUG"

	ImageCache   = "SANDCHECK_IMAGE_CACHE"
	DebianMirror = "SANDCHECK_DEBIAN_MIRROR"
	NpmCache     = "SANDCHECK_NPM_CACHE"
	NpmTTL       = "SANDCHECK_NPM_TTL"
	NpmOffline   = "SANDCHECK_NPM_OFFLINE"

	Strict      = "SANDCHECK_STRICT"
	Concurrency = "SANDCHECK_CONCURRENCY"

	Target         = "SANDCHECK_TARGET"
	TargetPath     = "SANDCHECK_TARGET_PATH"
	TargetSettings = "SANDCHECK_TARGET_SETTINGS"
	Fault          = "SANDCHECK_FAULT"
	Settings       = "SANDCHECK_SETTINGS"
	Hostnames      = "SANDCHECK_HOSTNAMES"
	SandboxTimeout = "SANDCHECK_SANDBOX_TIMEOUT"
	TrialBudget    = "SANDCHECK_TRIAL_BUDGET"
	WorkDir        = "SANDCHECK_WORKDIR"
	Keep           = "SANDCHECK_KEEP"
	User           = "SANDCHECK_USER"
)

// Kind says who sets a variable.
type Kind string

const (
	Override Kind = "override" // a user, under what a matrix or a flag says
	Trial    Kind = "trial"    // the runner for one trial (or a user running `go test ./suites`)
	Protocol Kind = "protocol" // sandcheck for its own processes: keys and markers, never a user
	Test     Kind = "test"     // a knob of sandcheck's own tests
)

// Var is one documented variable.
type Var struct {
	Name    string
	Kind    Kind
	Default string // what applies when it is unset ("" = nothing)
	Meaning string
}

// Vars documents every SANDCHECK_* variable (docs/configuration.md's table is this one; a test keeps them equal
// and finds any SANDCHECK_ name in the code that is not here).
var Vars = []Var{
	{SRT, Override, ".tools/npm, then PATH", "the srt executable"},
	{Codex, Override, ".tools/npm-codex, then PATH", "the codex executable"},
	{Bwrap, Override, "PATH", "the bwrap executable"},
	{Firejail, Override, "PATH", "the firejail executable"},
	{ClaudeCode, Override, "the pinned version in the npm cache", "the claude executable (Claude Code)"},
	{PassEnv, Override, "", "comma-separated names of the runner's variables given to every trial on ssh, wsl and vm hosts"},
	{LinuxBinary, Override, "the runner's own binary", "a linux/amd64 sandcheck to copy to Linux hosts when the runner is not one"},
	{WSLExe, Override, "wsl.exe", "the wsl.exe that wsl hosts drive"},
	{VMCache, Override, "/var/cache/sandcheck/vm", "where VM kernels and root filesystems are built and kept"},
	{VMLog, Override, "", "1: VM artifact builds report progress on stderr"},
	{DockerDebug, Override, "", "any value: testcontainers' own log lines on stderr"},
	{ImageCache, Override, "/var/cache/sandcheck", "container images' build cache (rootfs tarballs, logs)"},
	{DebianMirror, Override, "this host's Debian apt source", "the mirror debootstrap uses"},
	{NpmCache, Override, "/var/cache/sandcheck/npm", "installed versions of npm sandboxes"},
	{NpmTTL, Override, "6h", "how long a fetched version list is fresh"},
	{NpmOffline, Override, "", "1: never fetch version lists (installed versions still serve)"},
	{Strict, Override, "", "1: a spec the healthy sandbox fails by a known finding fails instead of skipping"},
	{Concurrency, Override, "4", "sessions the concurrency scenario runs at once"},

	{Target, Trial, "srt", "the target a trial runs"},
	{TargetPath, Trial, "", "the sandbox executable, when not found by default"},
	{TargetSettings, Trial, "", "the target's settings as one JSON object"},
	{Fault, Trial, "", "the fault injected, NAME[:k=v,...]"},
	{Settings, Trial, "", "the user's own sandbox settings file"},
	{Hostnames, Trial, "name", "name or ip: how probes address the fixture hosts"},
	{SandboxTimeout, Trial, "30s", "deadline of one sandboxed run"},
	{TrialBudget, Trial, "", "the trial process's whole budget, from its start"},
	{WorkDir, Trial, "$TMPDIR", "parent of trial directories"},
	{Keep, Trial, "", "1: keep the trial directory"},
	{User, Trial, "unprivileged", "who the sandbox runs as: unprivileged, root or an account"},

	{"SANDCHECK_RESULT_KEY_FD", Protocol, "", "where a trial reads the key that signs its result lines: a descriptor, 0 (stdin) from the runner"},
	{"SANDCHECK_TRIAL_COOKIE", Protocol, "", "marks every process of a trial, to kill whatever left its group"},
	{"SANDCHECK_HOST_RUN", Protocol, "", "marks every process a run started on a remote host"},
	{"SANDCHECK_HOST_TRIAL", Protocol, "", "marks every process one trial started on a remote host"},
	{"SANDCHECK_EXEC_ID", Protocol, "", "marks every process one exec started in a container"},
	{"SANDCHECK_VM_JOB_COOKIE", Protocol, "", "marks every process one job started in a VM guest"},

	{"SANDCHECK_LONG", Test, "", "1: the long tier of the tests"},
	{"SANDCHECK_BENCH_N", Test, "", "trials per benchmark round"},
	{"SANDCHECK_BENCH_ROUNDS", Test, "7", "rounds of the trial-vs-bare benchmark (TrialVsBareSRT)"},
	{"SANDCHECK_NODE_MODULES", Test, "", "node modules for the report consumer tests"},
	{"SANDCHECK_RECORD", Test, "", "1: re-record the classifier's test runs"},
	{"SANDCHECK_USERS_TRIALS", Test, "", "trials per cell of the e2e tests' shared run of the default matrix as both users (default: 5, 20 in the long tier)"},
	{"SANDCHECK_USERS_TABLE", Test, "", "file to write the users e2e table to"},
	{"SANDCHECK_CLAUDE_TRIALS", Test, "20", "trials per cell in the Claude Code e2e tests"},
	{"SANDCHECK_CLAUDE_SETTINGS_TRIALS", Test, "1", "trials per cell in the claude-settings e2e test"},
	{"SANDCHECK_CLAUDE_TABLES", Test, "", "file to write the claude-settings e2e tables to"},
	{"SANDCHECK_LEFTOVERS_PLACES", Test, "/tmp /var/tmp /dev/shm /run/user, root's and sandcheck's HOME", "where the leftover checks look for anything new"},
	{"SANDCHECK_LEFTOVERS_IGNORE", Test, "", "globs of paths the leftover checks do not blame (another program's files on a shared machine)"},
	{"SANDCHECK_TEST_RUNNER", Test, "", "a runner test's child runner"},
	{"SANDCHECK_FAKE_TRIAL", Test, "", "a runner test's fake trial"},
	{"SANDCHECK_BYPASS_BAD", Test, "", "N: the bypass known-bads e2e test runs only the Nth known-bad"},
	{"SANDCHECK_SECCOMP_TEST_CHILD", Test, "", "the seccomp stand-in test's child process"},
	{"SANDCHECK_PROBE_TEST_TIOCSTI", Test, "", "the probe's TIOCSTI test's child process"},
}
