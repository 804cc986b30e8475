package runner

// EnvResultKeyFD names the descriptor a trial process reads Trial.Key from: one line, the first
// thing it reads, and it unsets the variable so that nothing it starts inherits it. Executors
// set it to 0 and write the key to the trial's stdin, then end of file, on every host kind: the
// key is in no process's command line or environment, which anything on the host, the
// sandboxed command included, may read in /proc.
const EnvResultKeyFD = "SANDCHECK_RESULT_KEY_FD"

// KeyInput is what an executor writes to the stdin of a trial keyed key, and env the variable
// it adds to the trial's environment; nothing for a trial without a key.
func KeyInput(key string) (stdin []byte, env []string) {
	if key == "" {
		return nil, nil
	}
	return []byte(key + "\n"), []string{EnvResultKeyFD + "=0"}
}
