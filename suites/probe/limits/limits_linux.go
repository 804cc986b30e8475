package limits

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sandcheck/sandcheck/suites/probe/errno"
)

// MaybeRun runs the memory child and exits when argv asks for it.
func MaybeRun() {
	if len(os.Args) == 3 && os.Args[1] == AllocArg {
		os.Exit(allocChild(os.Args[2]))
	}
}

// Measure takes the measurements s asks for, one after the other.
func Measure(s Spec) Result {
	var r Result
	if s.Processes > 0 {
		r.Processes, r.ProcessEnd = processes(s.Processes)
	}
	if s.MemoryMiB > 0 {
		r.MemoryMiB, r.MemoryEnd = memory(s.MemoryMiB)
	}
	if s.DiskMiB > 0 && s.DiskPath != "" {
		r.DiskMiB, r.DiskEnd = disk(s.DiskPath, s.DiskMiB)
	}
	return r
}

// processes starts children that wait on their stdin (sleep, single-threaded, so a child is one
// task for every limit that counts tasks) until one cannot be started or capAt are up, then
// ends them all.
func processes(capAt int) (int, string) {
	bin, err := exec.LookPath("sleep")
	if err != nil {
		return 0, "no sleep binary: " + err.Error()
	}
	var started []*os.Process
	defer func() {
		for _, p := range started {
			p.Kill()
			p.Wait()
		}
	}()
	for len(started) < capAt {
		p, err := os.StartProcess(bin, []string{"sleep", "60"}, &os.ProcAttr{})
		if err != nil {
			return len(started), why(err)
		}
		started = append(started, p)
	}
	return len(started), Cap
}

// memory starts the child that takes memory and reads how far it got: a line per chunk.
func memory(capMiB int) (int, string) {
	cmd := exec.Command("/proc/self/exe", AllocArg, strconv.Itoa(capMiB))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err.Error()
	}
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, "start the memory child: " + why(err)
	}
	got := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, err := strconv.Atoi(sc.Text()); err == nil {
			got = n
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return got, Cap
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return got, "killed by " + unix.SignalName(ws.Signal())
		}
		if s := stderr.String(); s != "" {
			return got, s
		}
	}
	return got, err.Error()
}

// allocChild maps and touches ChunkMiB at a time up to capMiB, printing the MiB held after
// each (the mappings stay until it exits: nothing unmaps them); a refused mapping ends it with
// the errno on stderr and exit 1.
func allocChild(arg string) int {
	capMiB, err := strconv.Atoi(arg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	page := os.Getpagesize()
	for got := 0; got+ChunkMiB <= capMiB; {
		b, err := unix.Mmap(-1, 0, ChunkMiB<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mmap: %s", why(err))
			return 1
		}
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		got += ChunkMiB
		fmt.Println(got)
	}
	return 0
}

// disk writes path ChunkMiB at a time up to capMiB, then removes it.
func disk(path string, capMiB int) (int, string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, "open: " + why(err)
	}
	defer os.Remove(path)
	defer f.Close()
	chunk := make([]byte, ChunkMiB<<20)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	written := 0
	for written < capMiB<<20 {
		n, err := f.Write(chunk)
		written += n
		if err != nil {
			return written >> 20, why(err)
		}
	}
	if err := f.Sync(); err != nil {
		return written >> 20, why(err)
	}
	return written >> 20, Cap
}

// limitedBuffer keeps the first line of what the child said.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b) < 200 {
		l.b = append(l.b, p[:min(len(p), 200-len(l.b))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }

// why is err's errno name, or its text when it carries none.
func why(err error) string {
	if n := errno.Name(err); n != "" {
		return n
	}
	return err.Error()
}
