package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"

	"github.com/sandcheck/sandcheck/runner/process"
)

// awaitTrial is a spare's wait (process.Executor.Spare): started ahead of its trial, the
// process reads the trial's arguments and added environment from stdin, then runs it as if
// started with them. Its clocks (the trial's budget, its phases) start now, not at the process's
// start. No request (the runner stopped): exit quietly.
func awaitTrial() []string {
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
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
