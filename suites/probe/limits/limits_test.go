package limits

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	MaybeRun() // the memory child is this test binary
	os.Exit(m.Run())
}

// Unlimited, each measurement reaches its cap and says so.
func TestMeasureReachesCaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fill")
	r := Measure(Spec{Processes: 6, MemoryMiB: 32, DiskMiB: 24, DiskPath: path})
	want := Result{Processes: 6, ProcessEnd: Cap, MemoryMiB: 32, MemoryEnd: Cap, DiskMiB: 24, DiskEnd: Cap}
	if r != want {
		t.Errorf("Measure = %+v, want %+v", r, want)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the disk measurement left %s behind (%v)", path, err)
	}
}

// A file size limit ends the disk measurement with EFBIG where it stands (the probe ignores
// SIGXFSZ, as Go does by default), not at the cap.
func TestDiskStopsAtFileSizeLimit(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := unix.Rlimit{Cur: 16 << 20, Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_FSIZE, &old)
	got, end := disk(filepath.Join(t.TempDir(), "fill"), 64)
	if got != 16 || end != "EFBIG" {
		t.Errorf("disk under a 16 MiB file size limit = %d MiB, %q; want 16, EFBIG", got, end)
	}
}

// A data limit ends the memory child's mappings with ENOMEM, reported on its stderr, before its
// cap (the Go runtime's own reservations count too: under 256 MiB it holds ~144 MiB here).
func TestAllocChildStopsAtDataLimit(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatalf("prlimit (util-linux) is needed: %v", err)
	}
	cmd := exec.Command(prlimit, "--data=268435456", os.Args[0], AllocArg, "1024")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil || stderr.String() != "mmap: ENOMEM" {
		t.Fatalf("the memory child under a 256 MiB data limit: %v, stderr %q; want exit 1 with mmap: ENOMEM", err, stderr.String())
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		t.Fatal("the memory child reported no chunk before the limit")
	}
	if last, _ := strconv.Atoi(lines[len(lines)-1]); last >= 256 || last < ChunkMiB {
		t.Errorf("the memory child held %d MiB under a 256 MiB data limit", last)
	}
}
