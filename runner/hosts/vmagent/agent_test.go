//go:build linux

package vmagent

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/keyscan"
	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/runner"
)

// frameLog collects what an agent sends.
type frameLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *frameLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// frames parses everything sent so far; out and errOut are job id's stdout and stderr.
func (l *frameLog) frames(t *testing.T, nonce string, id int) (fs []Frame, out, errOut string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.SplitAfter(l.buf.String(), "\n") {
		if line == "" {
			continue
		}
		f, ok, err := Parse(line, nonce)
		if err != nil || !ok {
			t.Fatalf("agent sent %q: ok=%v err=%v", line, ok, err)
		}
		fs = append(fs, f)
		switch {
		case f.Kind == Out && f.ID == id:
			out += string(f.Data)
		case f.Kind == Err && f.ID == id:
			errOut += string(f.Data)
		}
	}
	return fs, out, errOut
}

func requireRoot(t *testing.T) {
	t.Helper()
	skip.UnlessRoot(t, "jobs run in a mount namespace of their own")
}

// A job runs with the job's environment, in a mount namespace of its own with an empty /tmp;
// its output and exit come back framed.
func TestAgentRunsAJob(t *testing.T) {
	requireRoot(t)
	log := &frameLog{}
	a := &agent{nonce: "n1", w: log}
	code, timedOut := a.run(7, 10*time.Second, Job{Argv: []string{"sh", "-c",
		`echo "out $FOO"; ls -A /tmp | wc -l; touch /tmp/left-by-job; echo err >&2; exit 4`}, Env: []string{"FOO=bar"}})
	if code != 4 || timedOut {
		t.Fatalf("code %d timedOut %v", code, timedOut)
	}
	_, out, errOut := log.frames(t, "n1", 7)
	if out != "out bar\n0\n" || errOut != "err\n" {
		t.Fatalf("stdout %q stderr %q", out, errOut)
	}
	if _, err := os.Stat("/tmp/left-by-job"); err == nil {
		os.Remove("/tmp/left-by-job")
		t.Fatal("the job's /tmp was this host's /tmp")
	}
}

// Past its deadline a job is killed with everything it started, including a process that left
// its group; what it printed before is kept.
func TestAgentKillsAtDeadline(t *testing.T) {
	requireRoot(t)
	log := &frameLog{}
	a := &agent{nonce: "n2", w: log}
	start := time.Now()
	code, timedOut := a.run(1, 500*time.Millisecond, Job{Argv: []string{"sh", "-c",
		`setsid sleep 300 & echo "escaped $!"; echo early; exec sleep 300`}})
	if !timedOut || code == 0 || time.Since(start) > KillGrace+5*time.Second {
		t.Fatalf("code %d timedOut %v after %s", code, timedOut, time.Since(start))
	}
	_, out, _ := log.frames(t, "n2", 1)
	if !strings.Contains(out, "early") {
		t.Fatalf("output before the deadline lost: %q", out)
	}
	var pid int
	for _, l := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(l, "escaped "); ok {
			pid, _ = strconv.Atoi(p)
		}
	}
	if pid <= 0 {
		t.Fatalf("no pid in %q", out)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] != "Z" {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d that left the job's group survived it", pid)
		}
	}
}

// The serve loop: ready, a job, its exit, ready again, until quit; a frame of another nonce is
// ignored.
func TestAgentServeLoop(t *testing.T) {
	requireRoot(t)
	log := &frameLog{}
	a := &agent{nonce: "n3", w: log}
	l1, _ := JobLine("n3", 1, 5*time.Second, Job{Argv: []string{"echo", "one"}})
	l2, _ := JobLine("other", 2, 5*time.Second, Job{Argv: []string{"echo", "forged"}})
	l3, _ := JobLine("n3", 3, 5*time.Second, Job{Argv: []string{"sh", "-c", "exit 2"}})
	in := strings.NewReader(l1 + l2 + "kernel noise\n" + l3 + QuitLine("n3"))
	if code := a.serve(bufio.NewReader(in)); code != 0 {
		t.Fatalf("serve: %d", code)
	}
	fs, out, _ := log.frames(t, "n3", 1)
	var kinds []string
	for _, f := range fs {
		k := f.Kind
		if f.Kind == Exit {
			k += "/" + strconv.Itoa(f.ID) + "/" + strconv.Itoa(f.Code)
		}
		kinds = append(kinds, k)
	}
	want := "SC-READY SC-OUT SC-EXIT/1/0 SC-READY SC-EXIT/3/2 SC-READY"
	if strings.Join(kinds, " ") != want || out != "one\n" {
		t.Fatalf("frames %v (want %s), job 1 stdout %q", kinds, want, out)
	}
	if code := a.serve(bufio.NewReader(io.LimitReader(strings.NewReader(""), 0))); code != 1 {
		t.Fatalf("serve on a closed port: %d", code)
	}
}

func TestParseFrames(t *testing.T) {
	j, _ := JobLine("n", 5, 1500*time.Millisecond, Job{Argv: []string{"a", "b c"}, Env: []string{"K=V"}})
	f, ok, err := Parse(j, "n")
	if !ok || err != nil || f.Kind != JobF || f.ID != 5 || f.Timeout != 1500*time.Millisecond || f.Job.Argv[1] != "b c" || f.Job.Env[0] != "K=V" {
		t.Fatalf("job: %+v %v %v", f, ok, err)
	}
	f, ok, err = Parse(ChunkLine(Out, "n", 5, []byte("SC-EXIT n 5 0 0\n")), "n")
	if !ok || err != nil || f.Kind != Out || string(f.Data) != "SC-EXIT n 5 0 0\n" {
		t.Fatalf("a chunk carrying a frame's text is data: %+v %v", f, err)
	}
	f, ok, err = Parse(ExitLine("n", 5, -1, true)+"\r", "n")
	if !ok || err != nil || f.Code != -1 || !f.TimedOut {
		t.Fatalf("exit: %+v %v", f, err)
	}
	if _, ok, _ := Parse(ReadyLine("other"), "n"); ok {
		t.Fatal("a frame of another boot was taken")
	}
	for _, bad := range []string{"SC-OUT n x AAAA", "SC-OUT n 1 !!!", "SC-EXIT n 1 0 2", "SC-JOB n 1 0 e30=", "SC-JOB n 1 100 bm90IGpzb24="} {
		if _, ok, err := Parse(bad, "n"); !ok || err == nil {
			t.Errorf("%q: ok=%v err=%v, want a malformed-frame error", bad, ok, err)
		}
	}
}

// A job's input reaches its stdin and no process's command line or environment: the vm host's
// way of handing a trial its key.
func TestAgentJobInputStaysOffProc(t *testing.T) {
	requireRoot(t)
	log := &frameLog{}
	a := &agent{nonce: "n4", w: log}
	key := runner.NewKey()
	stdin, env := runner.KeyInput(key)
	if code, timedOut := a.run(1, 30*time.Second, Job{Argv: keyscan.Argv(key), Env: env, Stdin: stdin}); code != 0 || timedOut {
		t.Fatalf("code %d timedOut %v", code, timedOut)
	}
	_, out, errOut := log.frames(t, "n4", 1)
	if errOut != "" {
		t.Logf("stderr: %s", errOut)
	}
	keyscan.CheckOutput(t, key, []byte(out))
	j, _ := JobLine("n4", 2, time.Second, Job{Argv: []string{"true"}, Stdin: stdin})
	if f, ok, err := Parse(j, "n4"); !ok || err != nil || string(f.Job.Stdin) != key+"\n" {
		t.Fatalf("a job's input over the channel: %+v %v", f.Job, err)
	}
}
