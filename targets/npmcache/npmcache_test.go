package npmcache

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNPM is a stand-in for npm: `install --prefix DIR ... PKG@VER` lays out what npm would
// (node_modules/PKG/package.json and .bin/BIN) and logs the call; `view PKG ...` prints
// $FAKE_NPM_VIEW. FAKE_NPM_FAIL makes install fail after writing a partial tree, FAKE_NPM_DELAY
// makes it slow (so concurrent callers overlap), FAKE_NPM_WRONG installs another version.
const fakeNPM = `#!/bin/sh
log="$FAKE_NPM_LOG"
cmd=$1; shift
case "$cmd" in
install)
	prefix=; spec=
	while [ $# -gt 0 ]; do
		case "$1" in
		--prefix) prefix=$2; shift 2 ;;
		--*) shift ;;
		*) spec=$1; shift ;;
		esac
	done
	echo "install $spec" >> "$log"
	pkg=${spec%@*}; ver=${spec##*@}
	mkdir -p "$prefix/node_modules/$pkg" "$prefix/node_modules/.bin"
	if [ -n "$FAKE_NPM_FAIL" ]; then echo "npm ERR! code E404 $spec" >&2; exit 1; fi
	[ -n "$FAKE_NPM_WRONG" ] && ver=$FAKE_NPM_WRONG
	printf '{"name":"%s","version":"%s"}\n' "$pkg" "$ver" > "$prefix/node_modules/$pkg/package.json"
	printf '#!/bin/sh\necho %s\n' "$ver" > "$prefix/node_modules/.bin/srt"
	chmod +x "$prefix/node_modules/.bin/srt"
	[ -n "$FAKE_NPM_DELAY" ] && sleep "$FAKE_NPM_DELAY"
	exit 0 ;;
view)
	echo "view $1" >> "$log"
	[ -n "$FAKE_NPM_VIEW" ] || { echo "npm ERR! network unreachable" >&2; exit 1; }
	printf '%s\n' "$FAKE_NPM_VIEW" ;;
esac
`

const pkg = "@anthropic-ai/sandbox-runtime"

func spec(v string) Spec { return Spec{Package: pkg, Version: v, Bin: "srt", IgnoreScripts: true} }

// setup returns a cache in a temporary directory driven by the fake npm, and a function that
// returns the npm calls so far.
func setup(t *testing.T) (*Cache, func() []string) {
	t.Helper()
	dir := t.TempDir()
	npm := filepath.Join(dir, "npm")
	if err := os.WriteFile(npm, []byte(fakeNPM), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "npm.log")
	t.Setenv("FAKE_NPM_LOG", log)
	t.Setenv("FAKE_NPM_VIEW", "")
	calls := func() []string {
		b, _ := os.ReadFile(log)
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
	}
	return &Cache{Dir: filepath.Join(dir, "cache"), NPM: npm}, calls
}

func TestInstallOnceThenFromCache(t *testing.T) {
	c, calls := setup(t)
	ctx := context.Background()
	in, err := c.Install(ctx, spec("0.0.60"))
	if err != nil {
		t.Fatal(err)
	}
	if !in.Fresh || in.Dir != filepath.Join(c.Dir, "@anthropic-ai", "sandbox-runtime@0.0.60") {
		t.Fatalf("first install: fresh=%v dir=%s", in.Fresh, in.Dir)
	}
	if out, err := os.ReadFile(in.BinPath()); err != nil || !strings.Contains(string(out), "0.0.60") {
		t.Fatalf("bin %s: %v", in.BinPath(), err)
	}
	// A second Cache (another run) finds it and runs no npm.
	again := &Cache{Dir: c.Dir, NPM: c.NPM}
	in2, err := again.Install(ctx, spec("0.0.60"))
	if err != nil || in2.Fresh || in2.Dir != in.Dir {
		t.Fatalf("second install: %+v %v", in2, err)
	}
	if got := calls(); !slices.Equal(got, []string{"install_" + pkg + "@0.0.60"}) {
		t.Fatalf("npm calls %v: want exactly one install", got)
	}
	if c.Installs() != 1 || again.Installs() != 0 {
		t.Fatalf("install counts %d, %d", c.Installs(), again.Installs())
	}
	if _, err := os.Stat(filepath.Join(in.Dir, MarkerFile)); err != nil {
		t.Fatal("no completion marker")
	}
	if entries, _ := os.ReadDir(filepath.Join(c.Dir, ".tmp")); len(entries) != 0 {
		t.Fatalf("temporary directories left: %v", entries)
	}
}

func TestConcurrentInstallsOfOneVersionRunNPMOnce(t *testing.T) {
	c, calls := setup(t)
	t.Setenv("FAKE_NPM_DELAY", "0.3") // the first install is still running when the others ask
	const n = 8
	var wg sync.WaitGroup
	dirs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			// A Cache each, as separate runs would have: only the file lock serialises them.
			cc := &Cache{Dir: c.Dir, NPM: c.NPM}
			in, err := cc.Install(context.Background(), spec("0.0.70"))
			dirs[i], errs[i] = in.Dir, err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("caller %d: %s %v", i, dirs[i], errs[i])
		}
	}
	if got := calls(); len(got) != 1 {
		t.Fatalf("npm ran %d times for one version: %v", len(got), got)
	}
}

func TestIncompleteInstallIsNeverUsed(t *testing.T) {
	c, calls := setup(t)
	ctx := context.Background()
	// A tree with the package but no completion marker: killed between npm and the marker, or
	// copied in by hand.
	dir := c.Path(pkg, "0.0.50")
	os.MkdirAll(filepath.Join(dir, "node_modules", pkg), 0o755)
	os.WriteFile(filepath.Join(dir, "node_modules", pkg, "package.json"), []byte(`{"name":"`+pkg+`","version":"0.0.50"}`), 0o644)
	if _, ok := c.Lookup(spec("0.0.50")); ok {
		t.Fatal("Lookup accepted an install without its marker")
	}
	// Leftovers of a killed install of the same version in the temporary area.
	stale := filepath.Join(c.Dir, ".tmp", "@anthropic-ai+sandbox-runtime@0.0.50.dead")
	os.MkdirAll(stale, 0o755)
	in, err := c.Install(ctx, spec("0.0.50"))
	if err != nil || !in.Fresh {
		t.Fatalf("reinstall: %+v %v", in, err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a killed install's temporary directory was left")
	}
	if len(calls()) != 1 {
		t.Fatalf("npm calls %v", calls())
	}
	// A marker that names another version is not this version's.
	os.WriteFile(filepath.Join(in.Dir, MarkerFile), []byte(`{"package":"`+pkg+`","version":"0.0.49"}`), 0o644)
	if _, ok := c.Lookup(spec("0.0.50")); ok {
		t.Fatal("Lookup accepted a marker for another version")
	}
}

func TestFailedInstallLeavesNothing(t *testing.T) {
	c, _ := setup(t)
	t.Setenv("FAKE_NPM_FAIL", "1")
	_, err := c.Install(context.Background(), spec("0.0.9"))
	if err == nil || !strings.Contains(err.Error(), "E404") {
		t.Fatalf("error %v: want npm's message", err)
	}
	if _, err := os.Stat(c.Path(pkg, "0.0.9")); err == nil {
		t.Fatal("a failed install left a directory in the cache")
	}
	t.Setenv("FAKE_NPM_FAIL", "")
	t.Setenv("FAKE_NPM_WRONG", "0.0.8") // npm "succeeds" but resolves another version
	if _, err := c.Install(context.Background(), spec("0.0.9")); err == nil || !strings.Contains(err.Error(), "not "+pkg+"@0.0.9") {
		t.Fatalf("wrong version installed: %v", err)
	}
	if _, err := os.Stat(c.Path(pkg, "0.0.9")); err == nil {
		t.Fatal("a mismatched install was moved into the cache")
	}
}

func TestSpecsAreChecked(t *testing.T) {
	c, calls := setup(t)
	for _, s := range []Spec{{Package: pkg, Version: "latest"}, {Package: pkg, Version: "../x"}, {Package: "../evil", Version: "1.0.0"},
		{Package: "Upper", Version: "1.0.0"}, {Package: pkg, Version: ">=0.0.1"}} {
		if _, err := c.Install(context.Background(), s); err == nil {
			t.Errorf("Install(%+v) accepted", s)
		}
	}
	if len(calls()) != 0 {
		t.Fatalf("npm ran for invalid specs: %v", calls())
	}
}

const viewJSON = `{"versions": ["0.0.1", "0.0.2", "0.0.83"], "dist-tags": {"latest": "0.0.83"}}`

func TestVersionListFetchedOnceAndKeptForTTL(t *testing.T) {
	c, calls := setup(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c.Now = func() time.Time { return now }
	c.TTL = time.Hour
	t.Setenv("FAKE_NPM_VIEW", viewJSON)
	ctx := context.Background()
	x, err := c.Published(ctx, pkg)
	if err != nil || x.Source != "registry" || !slices.Equal(x.Versions, []string{"0.0.1", "0.0.2", "0.0.83"}) || x.Tags["latest"] != "0.0.83" {
		t.Fatalf("first: %+v %v", x, err)
	}
	if _, err := c.Published(ctx, pkg); err != nil || len(calls()) != 1 {
		t.Fatalf("the same Cache asked again: %v", calls())
	}
	// Another run within the TTL reads the saved list.
	next := &Cache{Dir: c.Dir, NPM: c.NPM, TTL: time.Hour, Now: func() time.Time { return now.Add(30 * time.Minute) }}
	if x, err := next.Published(ctx, pkg); err != nil || x.Source != "cache" || len(calls()) != 1 {
		t.Fatalf("within TTL: %+v %v, calls %v", x, err, calls())
	}
	// After the TTL it asks the registry again.
	later := &Cache{Dir: c.Dir, NPM: c.NPM, TTL: time.Hour, Now: func() time.Time { return now.Add(2 * time.Hour) }}
	if x, err := later.Published(ctx, pkg); err != nil || x.Source != "registry" || len(calls()) != 2 {
		t.Fatalf("after TTL: %+v %v, calls %v", x, err, calls())
	}
	// The registry gone: the stale list serves, with a warning.
	t.Setenv("FAKE_NPM_VIEW", "")
	gone := &Cache{Dir: c.Dir, NPM: c.NPM, TTL: time.Hour, Now: func() time.Time { return now.Add(30 * time.Hour) }}
	x, err = gone.Published(ctx, pkg)
	if err != nil || x.Source != "stale cache" || !strings.Contains(x.Warning, "network unreachable") {
		t.Fatalf("stale: %+v %v", x, err)
	}
	// Offline never asks, whatever the age.
	n := len(calls())
	off := &Cache{Dir: c.Dir, NPM: c.NPM, Offline: true, Now: func() time.Time { return now.Add(1000 * time.Hour) }}
	if x, err := off.Published(ctx, pkg); err != nil || x.Source != "cache" || len(calls()) != n {
		t.Fatalf("offline: %+v %v", x, err)
	}
	if _, err := off.Published(ctx, "other-package"); err == nil {
		t.Fatal("offline with nothing saved must fail")
	}
}

func TestVersionListOfOneVersion(t *testing.T) {
	c, _ := setup(t)
	t.Setenv("FAKE_NPM_VIEW", `{"versions": "1.0.0", "dist-tags": {"latest": "1.0.0"}}`)
	x, err := c.Published(context.Background(), "solo")
	if err != nil || !slices.Equal(x.Versions, []string{"1.0.0"}) {
		t.Fatalf("%+v %v", x, err)
	}
}

func TestSizeCountsInstalls(t *testing.T) {
	c, _ := setup(t)
	if n, err := c.Size(); err != nil || n != 0 {
		t.Fatalf("empty cache: %d %v", n, err)
	}
	c.Install(context.Background(), spec("0.0.1"))
	if n, err := c.Size(); err != nil || n == 0 {
		t.Fatalf("after an install: %d %v", n, err)
	}
}

// An install leaves nothing in the caller's HOME: npm's download cache is under ours and it
// writes no debug log (npm 11 wrote ~/.npm/_logs/*-debug-0.log for every install, which the
// leftover check blamed on the versions tests of a fresh machine).
func TestInstallKeepsNPMOutOfHome(t *testing.T) {
	c, _ := setup(t)
	envLog := filepath.Join(t.TempDir(), "env")
	npm := c.NPM
	os.WriteFile(npm, []byte(strings.Replace(fakeNPM, "cmd=$1; shift", "env > \""+envLog+"\"\ncmd=$1; shift", 1)), 0o755)
	if _, err := c.Install(context.Background(), spec("0.0.83")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(envLog)
	env := string(b)
	for _, want := range []string{"npm_config_cache=" + filepath.Join(c.Dir, ".npm") + "\n", "npm_config_logs_max=0\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("npm ran without %q", strings.TrimSpace(want))
		}
	}
}
