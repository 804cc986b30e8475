//go:build linux

package procfs

import (
	"os"
	"os/exec"
	"testing"
)

func TestStartTicksTellsProcessesApart(t *testing.T) {
	self, err := StartTicks(os.Getpid())
	if err != nil || self == 0 {
		t.Fatalf("self: %d %v", self, err)
	}
	if _, err := StartTicks(1 << 30); err == nil {
		t.Fatal("a pid that cannot exist has a start time")
	}
	if id := BootID(); len(id) != 36 {
		t.Fatalf("boot id %q", id)
	}
}

// A process carrying the marker is found and killed; one carrying a longer value, or the
// marker's name with another value, is left alone.
func TestKillEnvKillsExactlyTheMarked(t *testing.T) {
	start := func(kv string) *exec.Cmd {
		c := exec.Command("sleep", "60")
		c.Env = append(os.Environ(), kv)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	marked := start("PROCFS_TEST_MARK=a1")
	other := start("PROCFS_TEST_MARK=a12")
	if !HasEnv(marked.Process.Pid, "PROCFS_TEST_MARK=a1") || HasEnv(other.Process.Pid, "PROCFS_TEST_MARK=a1") {
		t.Fatal("HasEnv does not match the entry exactly")
	}
	if n := KillEnv("PROCFS_TEST_MARK=a1", 3, nil); n != 1 {
		t.Fatalf("killed %d, want 1", n)
	}
	if err := marked.Wait(); err == nil {
		t.Fatal("the marked process exited normally")
	}
	if !HasEnv(other.Process.Pid, "PROCFS_TEST_MARK=a12") {
		t.Fatal("the other process is gone")
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/var/cache/a\040b`: "/var/cache/a b",
		`C:\134`:            `C:\`,
		`/plain`:            "/plain",
		`/not\9zz`:          `/not\9zz`, // not an octal escape: kept
		`/end\04`:           `/end\04`,  // cut short: kept
		`/tab\011`:          "/tab\t",
		`/back\134slash`:    `/back\slash`,
	} {
		if got := UnescapeMount(in); got != want {
			t.Errorf("UnescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNSpid: this process's own pid in its namespace, read from /proc, and PidIn's rule: a
// process has a pid in the caller's namespace only when its NSpid reaches as deep.
func TestNSpid(t *testing.T) {
	self := NSpid("self")
	if len(self) == 0 || self[len(self)-1] != os.Getpid() {
		t.Fatalf("NSpid(self) = %v, pid %d", self, os.Getpid())
	}
	if argv := Argv(os.Getpid()); len(argv) == 0 || argv[0] != os.Args[0] {
		t.Errorf("Argv = %q, want %q first", argv, os.Args[0])
	}
	// /proc may number processes in an outer pid namespace; ptrace and kill take the caller's
	// own numbers, and a process outside its namespace has none.
	for _, c := range []struct {
		self, other []int
		want        int
		ok          bool
	}{
		{[]int{9, 3}, []int{2}, 0, false},       // a relay in the outer namespace only
		{[]int{9, 3}, []int{5, 1}, 1, true},     // the nested namespace's init
		{[]int{9, 3}, []int{12, 4, 2}, 4, true}, // deeper still: numbered in ours too
		{[]int{7}, []int{8}, 8, true},           // one namespace
		{[]int{42}, []int{901, 6}, 901, true},   // one below the caller's
		{nil, []int{1}, 0, false},
	} {
		if got, ok := PidIn(c.self, c.other); got != c.want || ok != c.ok {
			t.Errorf("PidIn(%v, %v) = %d, %v; want %d, %v", c.self, c.other, got, ok, c.want, c.ok)
		}
	}
	if ParseNSpid("\t900\t5") == nil || ParseNSpid("\t900\t5")[1] != 5 {
		t.Error("ParseNSpid")
	}
}
