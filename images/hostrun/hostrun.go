//go:build linux

// Package hostrun runs this host's tools for a build (debootstrap, tar, npm): a command's output
// goes to a log file and an error carries the log's tail; the command runs in its own process
// group, which the context's end kills whole; a missing tool is installed from the host's own
// Debian packages.
package hostrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Logged runs a command with its output in logFile (made, with its directory, afresh), in its own
// process group so that ctx's end kills all of it; an error carries the log's tail.
func Logged(ctx context.Context, logFile, name string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return err
	}
	f, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# %s %s\n", name, strings.Join(args, " "))
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	if err != nil {
		b, _ := os.ReadFile(logFile)
		return fmt.Errorf("%w; last lines of %s:\n%s", err, logFile, tail(b, 1500))
	}
	return nil
}

// EnsureTool installs a Debian package when its command is missing (as root only), saying so
// with logf.
func EnsureTool(ctx context.Context, command, pkg string, logf func(format string, args ...any)) error {
	if _, err := exec.LookPath(command); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s is missing (apt-get install %s, as root)", command, pkg)
	}
	logf("installing %s (apt-get)", pkg)
	for _, argv := range [][]string{{"apt-get", "update", "-qq"}, {"apt-get", "install", "-y", "-qq", "--no-install-recommends", pkg}} {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, tail(out, 600))
		}
	}
	if _, err := exec.LookPath(command); err != nil {
		return fmt.Errorf("%s still missing after installing %s", command, pkg)
	}
	return nil
}

// tail is the last n bytes of a command's output, marked as cut when it is.
func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
