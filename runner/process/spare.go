package process

// Processes started for a trial, and spares started ahead of one (Executor.Spare).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"

	"github.com/sandcheck/sandcheck/runner"
)

// SpareArg is the argv[1] of a spare sandcheck process: it waits for a SpareRequest.
const SpareArg = "__sandcheck_spare"

// SpareRequest is what a spare process reads, as one JSON line on stdin, before it does anything:
// its trial's arguments (argv without argv[0]) and the environment to add to its own. The
// trial's key follows on the next line (runner.KeyInput), read by the trial as a fresh trial
// process reads it.
type SpareRequest struct {
	Args []string `json:"args"`
	Env  []string `json:"env,omitempty"`
}

// proc is a started trial process and the read ends of its stdout and stderr.
type proc struct {
	cmd        *exec.Cmd
	outR, errR *os.File
	stdin      *os.File // spares: the write end of stdin, for the SpareRequest
}

// spawn starts argv with stdout and stderr on pipes of our own (exec.Cmd.Wait would block until
// every grandchild holding them exits, and we want to kill the group first); with a stdin pipe
// kept open when spare, else one holding input (none when nil).
func spawn(argv, env []string, dir string, input []byte, spare bool) (*proc, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	p := &proc{outR: outR, errR: errR}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = groupAttr()
	var inR *os.File
	if spare || input != nil {
		if inR, p.stdin, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			return nil, fmt.Errorf("stdin pipe: %w", err)
		}
		cmd.Stdin = inR
	}
	if !spare && input != nil {
		// A few bytes: the pipe holds them until the trial reads them, then it reads EOF.
		_, err = p.stdin.Write(input)
		p.stdin.Close()
		p.stdin = nil
		if err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			inR.Close()
			return nil, fmt.Errorf("stdin: %w", err)
		}
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		if p.stdin != nil {
			p.stdin.Close()
		}
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p.cmd = cmd
	return p, nil
}

// start starts a trial's process, with key on its stdin (runner.KeyInput): a waiting spare when
// one fits, handed the trial's arguments, else a new process; either way the next spare is
// started in the background.
func (e *Executor) start(argv, env []string, dir, key string) (*proc, error) {
	input, extra := runner.KeyInput(key) // extra: environment on top of env (nil: the runner's)
	if len(e.Spare) == 0 || env != nil || dir != "" || argv[0] != e.Spare[0] {
		if extra != nil {
			if env == nil {
				env = os.Environ()
			}
			env = append(slices.Clip(env), extra...) // last one wins in exec
		}
		return spawn(argv, env, dir, input, false)
	}
	defer e.refill()
	if p := e.takeSpare(); p != nil {
		req, _ := json.Marshal(SpareRequest{Args: argv[1:], Env: extra})
		_, werr := p.stdin.Write(append(append(req, '\n'), input...))
		p.stdin.Close()
		if werr == nil {
			return p, nil
		}
		// The spare died waiting (killed from outside): reap it, start the trial anew.
		killProc(p)
	}
	return spawn(argv, append(os.Environ(), extra...), "", input, false)
}

// maxSpares bounds the spares waiting at once (trials that found none each start one).
const maxSpares = 4

// takeSpare returns a waiting spare, or nil.
func (e *Executor) takeSpare() *proc {
	e.spareMu.Lock()
	defer e.spareMu.Unlock()
	if len(e.spares) == 0 {
		return nil
	}
	p := e.spares[0]
	e.spares = e.spares[1:]
	return p
}

// refill starts one spare in the background (one per trial taken keeps as many waiting as
// trials run at once).
func (e *Executor) refill() {
	e.spareMu.Lock()
	enough := e.closed || len(e.spares) >= maxSpares
	e.spareMu.Unlock()
	if enough {
		return
	}
	go func() {
		p, err := spawn(e.Spare, nil, "", nil, true)
		if err != nil {
			return // the next trial starts its own process
		}
		e.spareMu.Lock()
		defer e.spareMu.Unlock()
		if e.closed {
			killProc(p)
			return
		}
		e.spares = append(e.spares, p)
	}()
}

// Close stops the spares waiting for a trial. Safe to call more than once; a trial run after
// Close starts its own process.
func (e *Executor) Close() error {
	e.spareMu.Lock()
	e.closed = true
	spares := e.spares
	e.spares = nil
	e.spareMu.Unlock()
	for _, p := range spares {
		killProc(p)
	}
	return nil
}

// killProc kills a process that never ran a trial and collects it.
func killProc(p *proc) {
	_ = signalGroup(p.cmd.Process, true)
	if p.stdin != nil {
		p.stdin.Close()
	}
	_ = p.cmd.Wait()
	p.outR.Close()
	p.errR.Close()
}
