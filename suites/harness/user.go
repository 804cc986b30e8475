//go:build linux

package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/users"
)

// asUser readies the trial for its account (fixtures/users): the session environment the
// account's own login would give it, a trial directory it can reach, and a probe binary it can
// run. Root keeps this process's environment and binary, as before the user axis existed.
func (t *Trial) asUser() error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate probe binary: %w", err)
	}
	t.ProbeBin, t.Env = self, os.Environ()
	if t.Account.IsRoot() {
		return nil
	}
	t.Env = t.Account.Env(t.Env)
	if err := os.Chmod(t.Dir, 0o755); err != nil {
		return err
	}
	// Asked together: each check is a process run as the account, and they come first in
	// every trial.
	tmp := os.Getenv("TMPDIR")
	can := t.Account.CanAll(users.Need{Access: users.Exec, Path: t.Dir}, users.Need{Access: users.Exec, Path: self},
		users.Need{Access: users.Write, Path: tmp})
	// A TMPDIR the account cannot write (a runner's private one) is not its TMPDIR: its session
	// would not have it, and a sandbox putting its sockets there would fail for our reasons.
	if tmp != "" && can[2] != nil {
		t.Env = withoutVar(t.Env, "TMPDIR")
	}
	if err := can[0]; err != nil {
		return fmt.Errorf("the trial directory is out of reach of the sandbox's user: %w; set %s to a directory it can enter (e.g. /tmp)", err, EnvWorkDir)
	}
	if can[1] != nil {
		// A test binary under go's private build directory, or a binary in root's HOME: the
		// account gets its own copy, root's and read-only, inside the trial directory.
		t.ProbeBin = filepath.Join(t.Dir, probeBinDir, "sandcheck")
		if err := copyFile(self, t.ProbeBin); err != nil {
			return fmt.Errorf("copy the probe binary for user %s: %w", t.Account.Name, err)
		}
	}
	return nil
}

// reportSwept writes what the user's ledger removed (processes that outlived their trial,
// entries left in the shared temporary directories) to stderr, where a verbose trial shows it.
func reportSwept(done []string) {
	for _, d := range done {
		fmt.Fprintf(os.Stderr, "sandcheck: cleanup after the sandbox's user: %s\n", d)
	}
}

// Home is the HOME of the sandbox's user: root's is this process's own.
func (t *Trial) Home() string { return HomeOf(t.Account) }

// HomeOf is the HOME of acct as a sandbox run as it has it: root's is this process's own.
func HomeOf(acct *users.Account) string {
	if acct.IsRoot() {
		h, _ := os.UserHomeDir()
		return h
	}
	return acct.Home
}

// probeBinDir holds the probe binary's copy in the trial directory.
const probeBinDir = "probe-bin"

// RootOwned names the trial directory's entries that stay root's when the rest becomes the
// sandbox user's: the fixture's hosts file, resolver and CA (bound over /etc inside, where a
// user finds root's files), the fault shims and PATH farms (installed tools are root's), the
// probe binary's copy.
func RootOwned(name string) bool {
	switch name {
	case "hosts", "resolv.conf", "fixture-ca.pem", "fault-bin", probeBinDir:
		return true
	}
	return strings.HasPrefix(name, "path-without-")
}

func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func withoutVar(env []string, key string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return out
}
