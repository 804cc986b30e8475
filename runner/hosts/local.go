// Package hosts says where a trial runs. A Host turns the command line of a trial into the
// command line that runs it there, from the runner's machine: identity for the local host,
// `docker exec` for a container, ssh for a remote one. The runner's ProcessExecutor then runs
// that wrapped command in its own process group, so timeouts and kills work the same everywhere.
package hosts

// Host is one place trials run.
type Host interface {
	Name() string
	// Wrap returns the argv and env that run argv with env on this host. A nil env means the
	// runner's environment.
	Wrap(argv, env []string) ([]string, []string)
	// Close releases what the host holds (containers, connections); the runner calls it once.
	Close() error
}

// Local runs trials as child processes of the runner on this machine.
type Local struct{ name string }

// NewLocal returns the local host under the matrix name name ("local" if empty).
func NewLocal(name string) *Local {
	if name == "" {
		name = "local"
	}
	return &Local{name: name}
}

// Name implements Host.
func (l *Local) Name() string { return l.name }

// Wrap implements Host: a local trial runs as is.
func (l *Local) Wrap(argv, env []string) ([]string, []string) { return argv, env }

// Close implements Host.
func (l *Local) Close() error { return nil }
