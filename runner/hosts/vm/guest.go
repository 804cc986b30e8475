//go:build linux

package vm

// One boot of a vm host: a QEMU process whose guest runs the job agent (vmagent) on its second
// serial port, wired to QEMU's stdin and stdout. The host sends a job, reads the job's output as
// it streams, and takes the guest back once the job's exit is reported.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/hosts/vmagent"
)

// BootTimeout bounds a boot until the agent says it is ready. TCG boots take 3-5 s on a quiet
// machine; several guests booting at once on two cores take many times that.
const BootTimeout = 3 * time.Minute

// exitGrace is how long past a job's deadline the host waits for the guest to report the job
// killed (the guest's deadline is a little earlier: guestTimeout) before it takes the guest for
// wedged.
const exitGrace = vmagent.KillGrace + 15*time.Second

// guest is one booted VM.
type guest struct {
	nonce   string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	frames  chan vmagent.Frame // closed when QEMU's output ends
	exited  chan struct{}      // closed when QEMU has exited
	dir     string             // console log and nonce
	qemuOut bytes.Buffer       // QEMU's own stderr
	initErr string             // what init said before the agent could start, if it failed
	jobs    int
	started time.Time

	mu      sync.Mutex
	waitErr error
}

func randomNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// qemuArgs is QEMU's command line for one guest: the kernel and initrd to boot, the root
// filesystem image (read-only), the nonce file, the guest's directory (its console log) and the
// host's shape (its CPUs' and memory's devices). Under KVM the guest gets the host's CPU; under
// TCG the emulated one with every feature QEMU has.
func (v *Host) qemuArgs(kernel, initrd, rootfs, nonceFile, gd string, shape []string) []string {
	cpu := "max"
	if v.cfg.Accel == "kvm" {
		cpu = "host"
	}
	args := []string{
		"-accel", v.cfg.Accel, "-machine", "pc", "-cpu", cpu,
		"-m", strconv.Itoa(v.cfg.MemoryMiB), "-smp", strconv.Itoa(v.cfg.CPUs),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		"-append", "console=ttyS0 panic=-1 quiet loglevel=3",
		"-drive", "file=" + rootfs + ",if=virtio,format=raw,readonly=on",
		"-fw_cfg", "name=opt/sandcheck/nonce,file=" + nonceFile,
		"-serial", "file:" + filepath.Join(gd, "console.log"), "-serial", "stdio",
		"-nic", "none",
	}
	return append(args, shape...)
}

// boot starts a guest and waits for its agent.
func (v *Host) boot(ctx context.Context) (*guest, error) {
	v.mu.Lock()
	k, rootfs, dir, initrd, shape := v.kernel, v.rootfs, v.dir, v.initrd, v.shape
	v.mu.Unlock()
	gd, err := os.MkdirTemp(dir, "boot-")
	if err != nil {
		return nil, err
	}
	g := &guest{nonce: randomNonce(), dir: gd, frames: make(chan vmagent.Frame, 1024), exited: make(chan struct{}), started: time.Now()}
	nonceFile := filepath.Join(gd, "nonce")
	if err := os.WriteFile(nonceFile, []byte(g.nonce), 0o600); err != nil {
		return nil, err
	}
	g.cmd = exec.Command(QEMU, v.qemuArgs(k.Boot, initrd, rootfs.Image, nonceFile, gd, shape)...)
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	g.cmd.Stderr = &g.qemuOut
	if g.stdin, err = g.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := g.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", QEMU, err)
	}
	go g.read(out)
	go func() {
		err := g.cmd.Wait()
		g.mu.Lock()
		g.waitErr = err
		g.mu.Unlock()
		close(g.exited)
	}()
	timer := time.NewTimer(BootTimeout)
	defer timer.Stop()
	for {
		select {
		case f, ok := <-g.frames:
			if !ok {
				g.kill()
				return nil, g.failure("ended before its agent started")
			}
			if f.Kind == vmagent.Ready {
				return g, nil
			}
		case <-timer.C:
			g.kill()
			return nil, g.failure(fmt.Sprintf("agent not ready after %s", BootTimeout))
		case <-ctx.Done():
			g.kill()
			return nil, ctx.Err()
		}
	}
}

// read turns QEMU's stdout (the guest's second serial port) into frames. A line that is not a
// frame of this boot is ignored, except init's report of a failure.
func (g *guest) read(r io.Reader) {
	defer close(g.frames)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if i := strings.Index(line, "SC-INIT-ERROR "); i >= 0 && g.initErr == "" {
				g.initErr = strings.TrimSpace(line[i+len("SC-INIT-ERROR "):])
			}
			f, ok, perr := vmagent.Parse(line, g.nonce)
			switch {
			case perr != nil:
				g.frames <- vmagent.Frame{Kind: vmagent.Log, Data: []byte(perr.Error())}
			case ok:
				g.frames <- f
			}
		}
		if err != nil {
			return
		}
	}
}

// failure describes a guest that died or never came up.
func (g *guest) failure(what string) error {
	if g.initErr != "" {
		what = "init failed: " + g.initErr
	}
	con, _ := os.ReadFile(filepath.Join(g.dir, "console.log"))
	g.mu.Lock()
	werr := g.waitErr
	g.mu.Unlock()
	return fmt.Errorf("VM %s (qemu: %v %s); console: %s", what, werr, strings.TrimSpace(g.qemuOut.String()), hosts.Tail(con, 600))
}

// jobResult is what a job left: its output, its exit, and whether the guest can take another.
type jobResult struct {
	hosts.Result
	healthy bool
}

// run sends one job and collects it, its stdout also to tee when set. The guest kills the job at
// guestTimeout; the host waits for that until its own deadline (ctx, timeout) plus exitGrace,
// then takes the guest for wedged.
func (g *guest) run(ctx context.Context, id int, job vmagent.Job, tee io.Writer, timeout time.Duration) jobResult {
	start := time.Now()
	var r jobResult
	var stdout bytes.Buffer
	stderr := tailBuffer{max: 1 << 20}
	finish := func() jobResult {
		r.Stdout, r.Stderr, r.Duration = stdout.Bytes(), stderr.bytes(), time.Since(start)
		return r
	}
	line, err := vmagent.JobLine(g.nonce, id, guestTimeout(timeout), job)
	if err == nil {
		_, err = io.WriteString(g.stdin, line)
	}
	if err != nil {
		r.Exit, r.Err = -1, fmt.Errorf("send job to the guest: %w", err)
		return finish()
	}
	g.jobs++
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var grace <-chan time.Time
	for {
		select {
		case f, ok := <-g.frames:
			if !ok {
				r.Exit, r.Err = -1, g.failure("died during the trial")
				return finish()
			}
			switch {
			case f.Kind == vmagent.Out && f.ID == id:
				stdout.Write(f.Data)
				if tee != nil {
					tee.Write(f.Data)
				}
			case f.Kind == vmagent.Err && f.ID == id:
				stderr.Write(f.Data)
			case f.Kind == vmagent.Log:
				stderr.Write([]byte("vm agent: " + string(f.Data) + "\n"))
			case f.Kind == vmagent.Exit && f.ID == id:
				r.Exit, r.healthy = f.Code, true
				r.TimedOut = r.TimedOut || f.TimedOut
				return finish()
			}
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// Interrupted: the run is ending; the guest goes with it.
				g.kill()
				r.Exit, r.TimedOut = -1, true
				return finish()
			}
			if grace == nil {
				r.TimedOut, grace = true, time.After(exitGrace)
			}
			ctx = context.Background() // seen; wait for the guest's report or the grace
		case <-deadline.C:
			if grace == nil {
				r.TimedOut, grace = true, time.After(exitGrace)
			}
		case <-grace:
			g.kill()
			r.Exit = -1
			r.Err = fmt.Errorf("guest wedged: no report of job %d %s after its %s deadline; VM killed, the next trial boots a fresh one", id, exitGrace, timeout)
			return finish()
		}
	}
}

// guestTimeout is the guest's deadline for a job whose host deadline is timeout: early enough
// for the guest to kill the job (SIGTERM, grace, SIGKILL) and report before the host gives up.
func guestTimeout(timeout time.Duration) time.Duration {
	guard := min(max(timeout/20, time.Second), 10*time.Second)
	return max(timeout-guard, timeout/2)
}

// quit asks the agent to power the guest off, and kills QEMU if it has not within a few seconds.
func (g *guest) quit() {
	_, _ = io.WriteString(g.stdin, vmagent.QuitLine(g.nonce))
	select {
	case <-g.exited:
	case <-time.After(5 * time.Second):
	}
	g.kill()
}

// kill ends QEMU (its process group) and waits for it.
func (g *guest) kill() {
	if g.cmd.Process != nil {
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-g.exited
	g.stdin.Close()
	os.RemoveAll(g.dir)
}

// alive says QEMU still runs.
func (g *guest) alive() bool {
	select {
	case <-g.exited:
		return false
	default:
		return true
	}
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) bytes() []byte {
	if len(b.buf) > b.max {
		return b.buf[len(b.buf)-b.max:]
	}
	return b.buf
}
