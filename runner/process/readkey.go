package process

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/sandcheck/sandcheck/runner"
)

// ReadKey is the trial process's side of runner.KeyInput: the runner's key for the trial's
// frames, read from the descriptor named in runner.EnvResultKeyFD (through stdin, the process's
// one buffered reader of its standard input, for 0), which it unsets so that nothing the trial
// starts inherits it; "" without the variable (a trial started by hand frames its lines
// unkeyed). Call it before anything starts a process.
func ReadKey(stdin *bufio.Reader) (string, error) {
	v, ok := os.LookupEnv(runner.EnvResultKeyFD)
	if !ok {
		return "", nil
	}
	os.Unsetenv(runner.EnvResultKeyFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 0 {
		return "", fmt.Errorf("%s=%q: want a descriptor number", runner.EnvResultKeyFD, v)
	}
	r := stdin
	if fd != 0 {
		f := os.NewFile(uintptr(fd), "result-key")
		defer f.Close()
		r = bufio.NewReader(f)
	}
	line, err := r.ReadString('\n')
	key := strings.TrimRight(line, "\r\n")
	if key == "" || strings.ContainsAny(key, " \t") {
		return "", fmt.Errorf("no result key on descriptor %d (%s): %q %v", fd, runner.EnvResultKeyFD, line, err)
	}
	return key, nil
}
