//go:build linux

package process

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/sandcheck/sandcheck/runner"
)

// The key is read from the descriptor named, and the variable is gone before anything starts:
// nothing the trial starts learns where a key was.
func TestReadKeyFromItsDescriptor(t *testing.T) {
	keyOn := func(s string) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString(s)
		w.Close()
		fd, err := syscall.Dup(int(r.Fd())) // ReadKey closes its descriptor
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(runner.EnvResultKeyFD, strconv.Itoa(fd))
	}
	keyOn("k3y\n")
	if key, err := ReadKey(nil); key != "k3y" || err != nil {
		t.Fatalf("ReadKey = %q, %v", key, err)
	}
	if v, ok := os.LookupEnv(runner.EnvResultKeyFD); ok {
		t.Fatalf("%s=%s left for the trial's children", runner.EnvResultKeyFD, v)
	}
	if key, err := ReadKey(nil); key != "" || err != nil {
		t.Fatalf("without the variable (by hand): %q, %v", key, err)
	}
	for _, bad := range []string{"", "\n", "two words\n"} {
		keyOn(bad)
		if key, err := ReadKey(nil); err == nil {
			t.Errorf("key line %q: got %q, want an error", bad, key)
		}
	}
	t.Setenv(runner.EnvResultKeyFD, "stdin")
	if _, err := ReadKey(nil); err == nil {
		t.Error("a descriptor that is no number was taken")
	}
}
