package main

import (
	"bytes"
	"debug/pe"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
)

// TestWindowsBuild keeps the Windows runner compiling: a Windows user drives WSL distributions
// with it (wsl hosts), and nothing else here would notice a Unix-only call creeping in.
func TestWindowsBuild(t *testing.T) {
	skip.Short(t, "cross-compiles the whole command")
	out := filepath.Join(t.TempDir(), "sandcheck.exe")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows go build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("MZ")) {
		t.Fatalf("%s does not start with MZ: % x", out, b[:min(len(b), 16)])
	}
	f, err := pe.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PE file: %v", err)
	}
	defer f.Close()
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		t.Fatalf("PE machine %#x, want amd64", f.Machine)
	}
}
