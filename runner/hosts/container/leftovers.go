//go:build linux

package container

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/moby/moby/client"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

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
	st, _ := procfs.StartTicks(os.Getpid())
	return fmt.Sprintf("%s/%s/%d/%d", host, procfs.BootID(), os.Getpid(), st)
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
	if f[1] != procfs.BootID() {
		return false
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return false
	}
	st, err := procfs.StartTicks(pid)
	return err == nil && strconv.FormatUint(st, 10) == f[3]
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
