package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"

	"github.com/sandcheck/sandcheck/knownfindings"
	"github.com/sandcheck/sandcheck/runner/process"
)

// stdinLines is the process's one reader of stdin: a spare's request and then the trial's key
// (process.ReadKey) come on it line after line, and a reader of its own for each would swallow
// the next one's line.
var stdinLines = bufio.NewReader(os.Stdin)

// awaitTrial is a spare's wait (process.Executor.Spare): started ahead of its trial, the
// process reads the trial's arguments and added environment from stdin, then runs it as if
// started with them. Its clocks (the trial's budget, its phases) start now, not at the process's
// start. No request (the runner stopped): exit quietly.
func awaitTrial() []string {
	warm()
	line, err := stdinLines.ReadString('\n')
	if err != nil {
		os.Exit(0)
	}
	var req process.SpareRequest
	if err := json.Unmarshal([]byte(line), &req); err != nil || len(req.Args) == 0 {
		os.Stderr.WriteString("sandcheck: a spare got no trial: " + strings.TrimSpace(line) + "\n")
		os.Exit(2)
	}
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			os.Setenv(k, v)
		}
	}
	restartClocks()
	return req.Args
}

// warm does, while the spare waits, the work every trial does and that no trial's arguments
// change: parsing the known findings (embedded YAML, ~4 ms in a fresh process here). A trial that
// comes first waits for it (sync.Once), as it would have done it itself.
func warm() {
	go knownfindings.Load()
}
