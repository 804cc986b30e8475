//go:build linux

package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/sandcheck/sandcheck/images"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

var _ hosts.Execer = (*Host)(nil)

// Exec implements hosts.Execer. The command runs under `setsid -w sh` in a new session whose id is
// recorded inside the container, with TMPDIR at images.TmpDir, SANDCHECK_SRT at the image's srt
// (images of package images; another image needs srt on its PATH, and sh and setsid), and an exec
// id in the environment of everything it starts; its input comes through the exec's attached
// stdin. On the deadline or ctx's end, a second exec kills the session and every process carrying
// the exec id, then Exec returns TimedOut.
func (c *Host) Exec(ctx context.Context, cmd hosts.Command, timeout time.Duration) hosts.Result {
	start := time.Now()
	b, err := c.boxForTrial(ctx)
	if err != nil {
		return hosts.Result{Exit: -1, Err: err, Duration: time.Since(start)}
	}
	if c.perTrial {
		defer c.remove(b)
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env := []string{"TMPDIR=" + images.TmpDir}
	if _, ours := images.DistroOf(c.cfg.Image); ours {
		env = append(env, "SANDCHECK_SRT="+images.SRTPath)
	}
	r := c.execIn(tctx, b, cmd, env)
	r.Duration = time.Since(start)
	return r
}

// boxForTrial returns the container a trial runs in: the shared one (restarted if it died), or
// a fresh one per trial (started outside the lock, so parallel trials start theirs at once).
func (c *Host) boxForTrial(ctx context.Context) (*ctrBox, error) {
	c.mu.Lock()
	if c.closed || !c.prepared {
		c.mu.Unlock()
		return nil, errors.New("container host closed or not prepared")
	}
	local := c.local
	if !c.perTrial {
		defer c.mu.Unlock()
		if c.shared == nil || c.shared.dead.Load() {
			c.remove(c.shared)
			b, err := c.start(ctx, local)
			if err != nil {
				return nil, err
			}
			c.shared = b
		}
		return c.shared, nil
	}
	c.mu.Unlock()
	b, err := c.start(ctx, local)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed { // Close ran meanwhile and could not see this one
		c.remove(b)
		return nil, errors.New("container host closed")
	}
	return b, nil
}

// execWrapper runs "$@" in a new session, recording the session id in $0 for the execKiller.
const execWrapper = `echo $$ > "$0"; "$@"; rc=$?; rm -f "$0"; exit $rc`

// execKiller SIGKILLs the session recorded in $1 and every process whose environment has exec id $2,
// twice over (a dying process may have been forking).
const execKiller = `for round in 1 2 3; do
  pg=$(cat "$1" 2>/dev/null); [ -n "$pg" ] && kill -9 -"$pg" 2>/dev/null
  for p in /proc/[0-9]*; do
    grep -qsz "^$2\$" "$p/environ" && kill -9 "${p#/proc/}" 2>/dev/null
  done
  sleep 0.1
done
rm -f "$1"`

// execIn runs c in b. ctx's end (deadline or cancel) kills what it started and sets TimedOut.
func (c *Host) execIn(ctx context.Context, b *ctrBox, command hosts.Command, env []string) hosts.Result {
	start := time.Now()
	if b.dead.Load() {
		return hosts.Result{Exit: -1, Err: fmt.Errorf("container %s is gone", b.name)}
	}
	id := fmt.Sprintf("%s-%d", c.runID, c.execSeq.Add(1))
	pidFile := "/tmp/.sandcheck-exec-" + id + ".sid" // /tmp: every image has it
	marker := execIDVar + "=" + id
	cmd := append([]string{"setsid", "-w", "sh", "-c", execWrapper, pidFile}, command.Argv...)
	withInput := command.Stdin != nil
	// The exec is created and attached with contexts that outlive ctx: the stream must stay
	// readable until the kill below has run.
	bg := context.WithoutCancel(ctx)
	createCtx, cancelCreate := context.WithTimeout(bg, 30*time.Second)
	defer cancelCreate()
	streamCtx, cancelStream := context.WithCancel(bg)
	defer cancelStream()
	created, err := c.cli.ExecCreate(createCtx, b.id, client.ExecCreateOptions{
		Cmd: cmd, Env: append(append([]string{}, env...), marker), WorkingDir: "/",
		AttachStdin: withInput, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		c.markIfGone(b)
		return hosts.Result{Exit: -1, Err: fmt.Errorf("docker exec in %s: %w", b.name, err), Duration: time.Since(start)}
	}
	att, err := c.cli.ExecAttach(streamCtx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		c.markIfGone(b)
		return hosts.Result{Exit: -1, Err: fmt.Errorf("docker exec attach in %s: %w", b.name, err), Duration: time.Since(start)}
	}
	defer att.Close()
	if withInput {
		// A few bytes, then end of file: the engine closes the command's stdin.
		_, err := att.Conn.Write(command.Stdin)
		if err == nil {
			err = att.CloseWrite()
		}
		if err != nil {
			c.kill(b, pidFile, marker)
			c.markIfGone(b)
			return hosts.Result{Exit: -1, Err: fmt.Errorf("docker exec stdin in %s: %w", b.name, err), Duration: time.Since(start)}
		}
	}
	stdout, stderr := &execTail{max: maxExecOutput}, &execTail{max: maxExecOutput}
	copied := make(chan error, 1)
	var out io.Writer = stdout
	if command.Stdout != nil {
		out = io.MultiWriter(stdout, command.Stdout)
	}
	go func() {
		_, err := stdcopy.StdCopy(out, stderr, att.Reader)
		copied <- err
	}()
	r := hosts.Result{}
	var copyErr error
	select {
	case copyErr = <-copied:
	case <-ctx.Done():
		r.TimedOut = true
		c.kill(b, pidFile, marker)
		select {
		case copyErr = <-copied:
		case <-time.After(5 * time.Second):
			// Something escaped both the session and the marker and holds the stream: let go.
			att.Close()
			copyErr = <-copied
		}
	}
	r.Stdout, r.Stderr = stdout.Bytes(), stderr.Bytes()
	var inspectErr error
	r.Exit, inspectErr = c.exitCode(bg, created.ID)
	switch {
	case r.TimedOut:
		r.Exit = -1
	case copyErr != nil:
		c.markIfGone(b)
		r.Exit, r.Err = -1, fmt.Errorf("docker exec stream from %s: %w", b.name, copyErr)
	case inspectErr != nil:
		// The engine did not say how the exec ended: the connection or the container is gone.
		c.markIfGone(b)
		r.Exit, r.Err = -1, fmt.Errorf("docker exec in %s: %w", b.name, inspectErr)
	case r.Exit < 0 || r.Exit == 137:
		// Killed from outside: if the container went with it, that is harness trouble. Docker
		// reports the container stopped a moment after the stream ends, so look for a while.
		if c.goneWithin(b, 2*time.Second) {
			r.Err = fmt.Errorf("container %s stopped during the exec (exit %d)", b.name, r.Exit)
			r.Exit = -1
		}
	}
	r.Duration = time.Since(start)
	return r
}

// kill runs the execKiller in a second exec.
func (c *Host) kill(b *ctrBox, pidFile, marker string) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	created, err := c.cli.ExecCreate(ctx, b.id, client.ExecCreateOptions{
		Cmd: []string{"sh", "-c", execKiller, "sandcheck-kill", pidFile, marker},
	})
	if err != nil {
		c.markIfGone(b)
		return
	}
	if _, err := c.cli.ExecStart(ctx, created.ID, client.ExecStartOptions{}); err != nil {
		return
	}
	for ctx.Err() == nil {
		st, err := c.cli.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
		if err != nil || !st.Running {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exitCode waits briefly for Docker to mark the exec finished and returns its exit code.
func (c *Host) exitCode(ctx context.Context, execID string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		st, err := c.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil {
			return -1, err
		}
		if !st.Running {
			return st.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, errors.New("the exec's output ended but Docker still reports it running")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// goneWithin polls markIfGone for up to d.
func (c *Host) goneWithin(b *ctrBox, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if c.markIfGone(b) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// markIfGone marks b dead when its container no longer runs, and says so.
func (c *Host) markIfGone(b *ctrBox) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if (err != nil && dockerNotFound(err)) || (err == nil && (st.Container.State == nil || !st.Container.State.Running)) {
		b.dead.Store(true)
		return true
	}
	return false
}

// maxExecOutput bounds what one exec keeps of each stream; the verdict is at the end of stdout.
const maxExecOutput = 4 << 20

// execTail keeps the last max bytes written.
type execTail struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped bool
}

func (t *execTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.dropped = true
	}
	return len(p), nil
}

func (t *execTail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf)
}
