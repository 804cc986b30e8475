// Package vmagent is the job channel of a vm host: one QEMU boot serves trial after trial. Inside
// the guest, `sandcheck __sandcheck_vm_agent` (Main) owns the second serial port and runs each job
// it is sent in a fresh mount namespace (its own /tmp, /var/tmp and /root), streaming the job's
// stdout and stderr back as they come, killing the job by process group and cookie at its
// deadline, and reporting its exit; the host side (hosts.VM) speaks the other end.
//
// The channel carries lines only, each framed with the boot's nonce:
//
//	guest -> host  SC-READY <nonce>                        waiting for a job
//	               SC-OUT <nonce> <job> <base64>           a chunk of the job's stdout
//	               SC-ERR <nonce> <job> <base64>           a chunk of its stderr
//	               SC-EXIT <nonce> <job> <code> <timedout> the job ended (timedout 0 or 1)
//	               SC-LOG <nonce> <text>                   the agent's own trouble
//	host -> guest  SC-JOB <nonce> <job> <timeout-ms> <base64 of Job as JSON>
//	               SC-QUIT <nonce>                         power off
//
// The job's output is base64 in its frames, so nothing a job prints can pass for a frame.
package vmagent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Arg is the argv[1] that makes the sandcheck binary the guest agent.
const Arg = "__sandcheck_vm_agent"

// Frame kinds.
const (
	Ready = "SC-READY"
	Out   = "SC-OUT"
	Err   = "SC-ERR"
	Exit  = "SC-EXIT"
	Log   = "SC-LOG"
	JobF  = "SC-JOB"
	Quit  = "SC-QUIT"
)

// CookieVar marks every process of a job, whatever session or group it moves to: the agent
// kills what carries the job's cookie when the job ends.
const CookieVar = "SANDCHECK_VM_JOB_COOKIE"

// Job is one command for the guest to run.
type Job struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env,omitempty"` // K=V added to the agent's environment
	// Stdin is all the job reads on its standard input (a trial's key), then end of file.
	Stdin []byte `json:"stdin,omitempty"`
}

// Frame is one parsed line of the channel.
type Frame struct {
	Kind     string
	ID       int           // job frames
	Data     []byte        // Out, Err: the decoded chunk; Log: the text
	Code     int           // Exit
	TimedOut bool          // Exit
	Timeout  time.Duration // Job
	Job      Job           // Job
}

// JobLine is the host's line sending job id with the guest-side deadline timeout.
func JobLine(nonce string, id int, timeout time.Duration, j Job) (string, error) {
	b, err := json.Marshal(j)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s %d %d %s\n", JobF, nonce, id, timeout.Milliseconds(), base64.StdEncoding.EncodeToString(b)), nil
}

// QuitLine asks the guest to power off.
func QuitLine(nonce string) string { return Quit + " " + nonce + "\n" }

// ReadyLine says the guest waits for a job.
func ReadyLine(nonce string) string { return Ready + " " + nonce + "\n" }

// ChunkLine frames a chunk of a job's stdout (kind Out) or stderr (kind Err).
func ChunkLine(kind, nonce string, id int, b []byte) string {
	return fmt.Sprintf("%s %s %d %s\n", kind, nonce, id, base64.StdEncoding.EncodeToString(b))
}

// ExitLine reports a job's end.
func ExitLine(nonce string, id, code int, timedOut bool) string {
	t := 0
	if timedOut {
		t = 1
	}
	return fmt.Sprintf("%s %s %d %d %d\n", Exit, nonce, id, code, t)
}

// LogLine carries a line of the agent's own diagnostics.
func LogLine(nonce, text string) string {
	return Log + " " + nonce + " " + strings.ReplaceAll(text, "\n", " ") + "\n"
}

// Parse reads one line of the channel. ok is false for a line that is not a frame of this
// nonce (console noise, another boot's frames); err for a frame of this nonce that is malformed.
func Parse(line, nonce string) (f Frame, ok bool, err error) {
	line = strings.TrimRight(line, "\r\n")
	kind, rest, _ := strings.Cut(line, " ")
	n, rest, _ := strings.Cut(rest, " ")
	if n != nonce || !strings.HasPrefix(kind, "SC-") {
		return f, false, nil
	}
	f.Kind = kind
	fields := strings.Fields(rest)
	bad := func(what string) (Frame, bool, error) {
		return f, true, fmt.Errorf("vmagent: malformed %s frame: %s: %.120q", kind, what, line)
	}
	switch kind {
	case Ready, Quit:
		return f, true, nil
	case Log:
		f.Data = []byte(rest)
		return f, true, nil
	case Out, Err:
		if len(fields) != 2 {
			return bad("want job and data")
		}
		if f.ID, err = strconv.Atoi(fields[0]); err != nil {
			return bad("job id")
		}
		if f.Data, err = base64.StdEncoding.DecodeString(fields[1]); err != nil {
			return bad("data")
		}
		return f, true, nil
	case Exit:
		if len(fields) != 3 {
			return bad("want job, code and timedout")
		}
		var e1, e2 error
		f.ID, e1 = strconv.Atoi(fields[0])
		f.Code, e2 = strconv.Atoi(fields[1])
		if e1 != nil || e2 != nil || (fields[2] != "0" && fields[2] != "1") {
			return bad("numbers")
		}
		f.TimedOut = fields[2] == "1"
		return f, true, nil
	case JobF:
		if len(fields) != 3 {
			return bad("want job, timeout and job")
		}
		var e1, e2 error
		var ms int64
		f.ID, e1 = strconv.Atoi(fields[0])
		ms, e2 = strconv.ParseInt(fields[1], 10, 64)
		if e1 != nil || e2 != nil || ms <= 0 {
			return bad("numbers")
		}
		f.Timeout = time.Duration(ms) * time.Millisecond
		b, err := base64.StdEncoding.DecodeString(fields[2])
		if err != nil || json.Unmarshal(b, &f.Job) != nil || len(f.Job.Argv) == 0 {
			return bad("job")
		}
		return f, true, nil
	}
	return f, false, nil
}
