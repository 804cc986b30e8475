// Package rundir guards a run directory against a second runner and against a killed one: an
// exclusive lock, so two runners never append to one journal, and a log of the process groups of
// running trials, from which the next start kills what a kill -9 of the runner left behind.
package rundir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

// Files inside a run directory.
const (
	PgidFile = "running.pgids"
	LockFile = "lock"
)

// PgidLog keeps the process groups of running trials on disk, so the next start can kill what a
// kill -9 of this runner left behind (its children survive it: they are in their own groups).
// Each entry carries the leader's start time and the file the boot id, so a recycled pid or a
// reboot never gets an unrelated process killed.
//
// The file is a log: "+pgid starttime" when a group starts, "-pgid" when it is gone, one small
// O_APPEND write each. Rewriting the whole file per event (write + rename) cost ~2.5ms a trial
// on ext4; no fsync either, since only a crash of this process, not of the machine, matters.
type PgidLog struct {
	mu       sync.Mutex
	path     string
	boot     string
	f        *os.File
	size     int
	live     map[int]uint64 // pgid -> leader start time (clock ticks since boot)
	firstErr error
}

// compactAt is the log size past which it is rewritten with only the live groups.
const compactAt = 64 << 10

// NewPgidLog returns the log at path; Init starts it afresh.
func NewPgidLog(path string) *PgidLog { return &PgidLog{path: path} }

// Init writes an empty log (after KillLeftovers has read the last run's).
func (p *PgidLog) Init() error {
	p.boot = procfs.BootID()
	p.live = map[int]uint64{}
	return p.rewrite()
}

// rewrite replaces the log with a header and the live groups (atomically, by rename).
func (p *PgidLog) rewrite() error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "boot %s\n", p.boot)
	pgids := make([]int, 0, len(p.live))
	for g := range p.live {
		pgids = append(pgids, g)
	}
	sort.Ints(pgids)
	for _, g := range pgids {
		fmt.Fprintf(&b, "+%d %d\n", g, p.live[g])
	}
	tmp := p.path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("runner: pgid file: %w", err)
	}
	if err := os.Rename(tmp, p.path); err != nil {
		return fmt.Errorf("runner: pgid file: %w", err)
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("runner: pgid file: %w", err)
	}
	if p.f != nil {
		p.f.Close()
	}
	p.f, p.size = f, b.Len()
	return nil
}

func (p *PgidLog) log(line string) {
	if p.f == nil {
		return
	}
	n, err := p.f.WriteString(line)
	p.size += n
	if err != nil {
		p.keep(fmt.Errorf("runner: pgid file: %w", err))
		return
	}
	if p.size > compactAt {
		p.keep(p.rewrite())
	}
}

// Started implements runner.ProcTracker.
func (p *PgidLog) Started(pgid int) {
	st, _ := procfs.StartTicks(pgid) // 0 if it already exited: then there is nothing to verify or kill
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live[pgid] = st
	p.log(fmt.Sprintf("+%d %d\n", pgid, st))
}

// Exited implements runner.ProcTracker.
func (p *PgidLog) Exited(pgid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live, pgid)
	p.log(fmt.Sprintf("-%d\n", pgid))
}

func (p *PgidLog) keep(err error) {
	if err != nil && p.firstErr == nil {
		p.firstErr = err
	}
}

// Err is the first error writing the log met, if any.
func (p *PgidLog) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstErr
}

// Remove closes and removes the log, at the end of a run.
func (p *PgidLog) Remove() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
	os.Remove(p.path)
}

// KillLeftovers SIGKILLs the groups an earlier run's pgid log leaves running that are still
// alive and still ours, and returns how many it signalled.
func KillLeftovers(path string) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("runner: leftovers: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	live := map[int]uint64{}
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if ln == 1 {
			f := strings.Fields(line)
			if len(f) != 2 || f[0] != "boot" {
				return 0, fmt.Errorf("runner: leftovers: %s:1: not a pgid file", path)
			}
			if f[1] != procfs.BootID() {
				os.Remove(path)
				return 0, nil // written before a reboot: those processes are gone
			}
			continue
		}
		f := strings.Fields(line[min(1, len(line)):])
		switch {
		case strings.HasPrefix(line, "+") && len(f) == 2:
			pgid, err1 := strconv.Atoi(f[0])
			st, err2 := strconv.ParseUint(f[1], 10, 64)
			if err1 == nil && err2 == nil && pgid > 1 {
				live[pgid] = st
				continue
			}
		case strings.HasPrefix(line, "-") && len(f) == 1:
			if pgid, err := strconv.Atoi(f[0]); err == nil {
				delete(live, pgid)
				continue
			}
		}
		return 0, fmt.Errorf("runner: leftovers: %s:%d: expected \"+pgid starttime\" or \"-pgid\", got %q", path, ln, line)
	}
	killed := 0
	for pgid, want := range live {
		if st, err := procfs.StartTicks(pgid); err == nil && st != want {
			continue // the leader's pid was recycled by an unrelated process
		}
		// Leader alive and ours, or leader gone: members still in the group are our trial's
		// (the kernel does not reuse a pid while a group of that id exists).
		if killGroup(pgid) == nil {
			killed++
		}
	}
	os.Remove(path)
	return killed, nil
}
