package remote

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

// Markers in a remote trial's environment: every trial carries its run's and its own.
const (
	MarkRun   = "SANDCHECK_HOST_RUN"
	MarkTrial = "SANDCHECK_HOST_TRIAL"
	pgidTag   = "SANDCHECK-PGID "
)

// TrialLine is the command line of a trial on the host: in a new session when setsid -w works
// there, a shell that reports its pid (= the process group) on stderr (see PgidWriter) and
// becomes `env ENV... MARKERS... ARGV...`.
func (r *Run) TrialLine(trial string, env []string, argv []string) []string {
	r.mu.Lock()
	setsid := r.setsid
	r.mu.Unlock()
	var line []string
	if setsid {
		line = append(line, "setsid", "-w")
	}
	line = append(line, "sh", "-c", `echo "`+pgidTag+`$$" >&2; exec "$@"`, "sh", "env")
	line = append(line, env...)
	line = append(line, MarkRun+"="+r.ID, MarkTrial+"="+trial)
	return append(line, argv...)
}

// KillTrial is the shell that ends a trial: TERM to its process group, KILL after 3 s, then
// KILL to anything still carrying its marker (a process that left the group).
func KillTrial(pgid int, trial string) string {
	p := strconv.Itoa(pgid)
	s := ""
	if pgid > 1 {
		s = `kill -s TERM -- -` + p + ` 2>/dev/null; i=0; while kill -s 0 -- -` + p + ` 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done; kill -s KILL -- -` + p + ` 2>/dev/null; `
	}
	return s + killMarked(MarkTrial, trial)
}

// KillRun is the shell that kills everything the run started on the host.
func (r *Run) KillRun() string { return killMarked(MarkRun, r.ID) }

// CloseScript is the shell that ends the run on the host: what it started killed, the
// sandbox's users cleaned up after (`sandcheck user --sweep SPEC`), the run directory removed.
// "" when Prepare made no directory.
func (r *Run) CloseScript(specs []string) string {
	dir := r.Dir()
	if dir == "" {
		return ""
	}
	var sweep []string
	for _, s := range specs {
		if s != model.UserRoot {
			sweep = append(sweep, Shq(dir+"/sandcheck")+" user --sweep "+Shq(s)+" >/dev/null 2>&1; ")
		}
	}
	return r.KillRun() + "; " + strings.Join(sweep, "") + "rm -rf -- " + Shq(dir)
}

// killMarked kills every process whose environment holds NAME=VALUE exactly.
func killMarked(name, value string) string {
	return `for f in $(grep -lsxzF ` + Shq(name+"="+value) + ` /proc/[0-9]*/environ 2>/dev/null); do p=${f#/proc/}; kill -s KILL "${p%/environ}" 2>/dev/null; done; true`
}

// Shq quotes s for a POSIX shell.
func Shq(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// PgidWriter is a trial's stderr: it takes the first line if it is TrialLine's pgid report.
type PgidWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first bool // first line consumed
	line  []byte
	pgid  int
	got   chan struct{}
}

// NewPgidWriter returns an empty writer.
func NewPgidWriter() *PgidWriter { return &PgidWriter{got: make(chan struct{})} }

func (w *PgidWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if !w.first {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			return n, nil
		}
		w.line = append(w.line, p[:i+1]...)
		p = p[i+1:]
		w.first = true
		if s, ok := strings.CutPrefix(strings.TrimSpace(string(w.line)), strings.TrimSpace(pgidTag)); ok {
			w.pgid, _ = strconv.Atoi(strings.TrimSpace(s))
		} else {
			w.buf.Write(w.line)
		}
		close(w.got)
	}
	w.buf.Write(p)
	return n, nil
}

// Bytes is stderr without the pgid report.
func (w *PgidWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := bytes.Clone(w.buf.Bytes())
	if !w.first {
		b = append(b, w.line...)
	}
	return b
}

// WaitPgid waits up to d for the pgid report and returns the pgid (0: none came).
func (w *PgidWriter) WaitPgid(d time.Duration) int {
	select {
	case <-w.got:
	case <-time.After(d):
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pgid
}
