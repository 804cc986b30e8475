package firejail

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

// TestRealFirejail runs a command under the real firejail with the adapter's options: the
// workspace and the session's TMPDIR are writable, the rest is not, the denied directory and file
// are blacklisted, and the network namespace is not the host's.
func TestRealFirejail(t *testing.T) {
	if _, err := exec.LookPath("firejail"); err != nil {
		skip.Missing(t, "firejail not installed (run `make deps`; Debian package firejail)")
	}
	tg, err := targets.New(Name, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if !targets.DenyAll(tg) || !targets.Has(tg, model.CapDenyRead) || targets.Has(tg, model.CapProxyAllowList) {
		t.Errorf("capabilities %v, reach %v: want deny-all with deny-read, no proxy", tg.Capabilities(), tg.Reach())
	}
	if !strings.Contains(tg.Version(), "firejail") {
		t.Errorf("version %q", tg.Version())
	}
	dir := t.TempDir()
	ws, secretDir, secretFile := filepath.Join(dir, "ws"), filepath.Join(dir, "secret"), filepath.Join(dir, "key")
	for _, d := range []string{ws, secretDir} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(secretDir, "id"), []byte("canary-dir"), 0o644)
	os.WriteFile(secretFile, []byte("canary-file"), 0o644)
	hostNet, _ := os.Readlink("/proc/self/ns/net")
	script := `readlink /proc/self/ns/net; echo hi > ok && echo WROTE; echo t > "$TMPDIR/t" && echo TMP-OK; echo x > /etc/sandcheck-firejail-test 2>/dev/null && echo ESCAPED-ETC;
echo x > ` + filepath.Join(dir, "outside") + ` 2>/dev/null && echo ESCAPED-PARENT; cat ` + filepath.Join(secretDir, "id") + ` ` + secretFile + ` 2>/dev/null; true`
	s := &targets.Session{Dir: dir, Workspace: ws, Env: os.Environ(), Command: []string{"sh", "-c", script},
		Policy: targets.Policy{WritablePaths: []string{ws}, DenyRead: []string{secretDir, secretFile}}}
	inv, err := tg.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env, cmd.Dir = inv.Env, inv.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", inv.Argv, err, out)
	}
	o := string(out)
	t.Logf("argv %q\n%s", inv.Argv, o)
	if strings.Contains(o, hostNet) || !strings.Contains(o, "net:[") {
		t.Errorf("network namespace is the host's (%s):\n%s", hostNet, o)
	}
	for _, bad := range []string{"ESCAPED", "canary"} {
		if strings.Contains(o, bad) {
			t.Errorf("saw %q:\n%s", bad, o)
		}
	}
	if !strings.Contains(o, "WROTE") || !strings.Contains(o, "TMP-OK") {
		t.Errorf("workspace or TMPDIR write failed:\n%s", o)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "ok")); err != nil || string(b) != "hi\n" {
		t.Errorf("workspace write did not reach the host: %q %v", b, err)
	}
	os.Remove("/etc/sandcheck-firejail-test")
}
