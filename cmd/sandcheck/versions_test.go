//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
	"github.com/sandcheck/sandcheck/targets/npmcache"
	"github.com/sandcheck/sandcheck/wire/journal"
)

func TestVersionedCellsRunTheirInstall(t *testing.T) {
	dir := t.TempDir()
	fakeRegistry(t, "0.0.83")
	p, argv := planAndArgv(t, "--out", dir, "--target", "srt@0.0.83", "--target", "srt@0.0.60")
	if len(p.Runner.Cells) != 2 || p.Runner.Cells[0].Version != "0.0.60" || p.Runner.Cells[1].Version != "0.0.83" {
		t.Fatalf("cells %+v (one per version, oldest first)", p.Runner.Cells)
	}
	// Not installed by the run (the plan alone): the trial is told the version and installs it
	// itself, never running the pinned build under the version's name.
	if !hasPair(argv, "--target", "srt@0.0.60") || slices.Contains(argv, "--target-path") {
		t.Fatalf("argv without an install: %q", argv)
	}
	p.Trial.VersionPaths = map[string]string{"srt@0.0.60": "/cache/srt@0.0.60/node_modules/.bin/srt"}
	p.Trial.TargetPath = "/opt/other/srt"
	argv = orchestrate.TrialArgv("/bin/sandcheck", p.Matrix, runner.Trial{Cell: p.Runner.Cells[0]}, &p.Trial)
	i := slices.Index(argv, "--target-path")
	last := slices.Index(argv[i+1:], "--target-path") + i + 1
	if !hasPair(argv, "--target", "srt") || argv[last+1] != "/cache/srt@0.0.60/node_modules/.bin/srt" {
		t.Fatalf("argv with the install: %q (the version's path must come last)", argv)
	}
	if _, err := os.Stat(filepath.Join(dir, orchestrate.VersionsFile)); err != nil {
		t.Fatalf("the run did not record its versions: %v", err)
	}
}

// fakeNPM stands in for npm: `view` prints a version list whose latest is $FAKE_LATEST,
// `install --prefix DIR PKG@VER` lays out what npm would and logs the call in $FAKE_NPM_LOG.
const fakeNPM = `#!/bin/sh
case "$1" in
view) echo '{"versions": ["0.0.60", "0.0.81", "0.0.82", "0.0.83"], "dist-tags": {"latest": "'"$FAKE_LATEST"'"}}' ;;
install)
	shift; prefix=; spec=
	while [ $# -gt 0 ]; do case "$1" in --prefix) prefix=$2; shift 2 ;; --*) shift ;; *) spec=$1; shift ;; esac; done
	echo "install $spec" >> "$FAKE_NPM_LOG"
	pkg=${spec%@*}; ver=${spec##*@}
	mkdir -p "$prefix/node_modules/$pkg" "$prefix/node_modules/.bin"
	printf '{"name":"%s","version":"%s"}\n' "$pkg" "$ver" > "$prefix/node_modules/$pkg/package.json"
	printf '#!/bin/sh\n' > "$prefix/node_modules/.bin/srt"; chmod +x "$prefix/node_modules/.bin/srt" ;;
esac
`

// fakeRegistry points the process's npm cache at a fresh cache driven by fakeNPM whose latest
// is latest; it returns the cache.
func fakeRegistry(t *testing.T, latest string) *npmcache.Cache {
	t.Helper()
	dir := t.TempDir()
	npm := filepath.Join(dir, "npm")
	os.WriteFile(npm, []byte(fakeNPM), 0o755)
	t.Setenv("FAKE_LATEST", latest)
	t.Setenv("FAKE_NPM_LOG", filepath.Join(dir, "npm.log"))
	saved := orchestrate.NpmCache
	c := &npmcache.Cache{Dir: filepath.Join(dir, "cache"), NPM: npm}
	orchestrate.NpmCache = func() *npmcache.Cache { return c }
	t.Cleanup(func() { orchestrate.NpmCache = saved })
	return c
}

func TestSecondSweepInstallsNothing(t *testing.T) {
	c := fakeRegistry(t, "0.0.83")
	sweep := func() (installs int, paths map[string]string, log string) {
		t.Helper()
		p, code := planRun([]string{"--out", t.TempDir(), "--target", "srt@>=0.0.60", "--target", "srt@latest"}, io.Discard)
		if p == nil {
			t.Fatalf("plan: exit %d", code)
		}
		var stderr bytes.Buffer
		if err := orchestrate.InstallVersions(context.Background(), p.Matrix, &p.Trial, &stderr); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(os.Getenv("FAKE_NPM_LOG"))
		return strings.Count(string(b), "install "), p.Trial.VersionPaths, stderr.String()
	}
	n, paths, log := sweep()
	if n != 4 || len(paths) != 4 || !strings.Contains(log, "srt 0.0.60 .. 0.0.83 (4 versions): 4 installed") {
		t.Fatalf("first sweep: %d installs, paths %v\n%s", n, paths, log)
	}
	n2, paths2, log := sweep()
	if n2 != n || !strings.Contains(log, "0 installed") || !strings.Contains(log, "4 from the cache") || paths2["srt@0.0.81"] != paths["srt@0.0.81"] {
		t.Fatalf("second sweep ran npm install %d more times\n%s", n2-n, log)
	}
	if paths["srt@0.0.81"] != filepath.Join(c.Dir, "@anthropic-ai", "sandbox-runtime@0.0.81", "node_modules", ".bin", "srt") {
		t.Fatalf("path %s", paths["srt@0.0.81"])
	}
}

func TestResumeRunsWhatTheRunResolved(t *testing.T) {
	dir := t.TempDir()
	fakeRegistry(t, "0.0.82")
	p, _ := planAndArgv(t, "--out", dir, "--target", "srt@latest", "--target", "srt@0.0.81")
	if got := []string{p.Runner.Cells[0].Version, p.Runner.Cells[1].Version}; !slices.Equal(got, []string{"0.0.81", "0.0.82"}) {
		t.Fatalf("versions %v", got)
	}
	// latest moves on; the resumed run keeps what it started with, a new run takes the new one.
	fakeRegistry(t, "0.0.83")
	p, _ = planAndArgv(t, "--out", dir, "--resume", "--target", "srt@latest", "--target", "srt@0.0.81")
	if v := p.Runner.Cells[1].Version; v != "0.0.82" {
		t.Fatalf("resumed run runs %s, want what it resolved at its start (0.0.82)", v)
	}
	p, _ = planAndArgv(t, "--out", t.TempDir(), "--target", "srt@latest")
	if v := p.Runner.Cells[0].Version; v != "0.0.83" {
		t.Fatalf("new run runs %s, want latest 0.0.83", v)
	}
	// Planning a run into that directory without --resume (the runner will refuse it) leaves
	// the record of what the run resolved alone.
	os.WriteFile(filepath.Join(dir, runner.JournalFile), []byte("{}\n"), 0o644)
	planAndArgv(t, "--out", dir, "--target", "srt@latest", "--target", "srt@0.0.81")
	if b, _ := os.ReadFile(filepath.Join(dir, orchestrate.VersionsFile)); !strings.Contains(string(b), `"0.0.82"`) {
		t.Fatalf("versions.json of the started run was overwritten:\n%s", b)
	}
	var stderr bytes.Buffer
	if p, code := planRun([]string{"--out", t.TempDir(), "--target", "srt@0.0.99"}, &stderr); p != nil || code != cli.ExitUsage ||
		!strings.Contains(stderr.String(), "--target srt@0.0.99: 0.0.99 is not a published version") {
		t.Fatalf("unpublished version: exit %d: %s", code, stderr.String())
	}
}

func TestBisectUsageErrors(t *testing.T) {
	fakeRegistry(t, "0.0.83")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "srt"}, "--label-filter is required"},
		{[]string{"--target", "srt@0.0.60", "--label-filter", "network"}, "name the target only; the versions are --good and --bad"},
		{[]string{"--target", "bwrap", "--label-filter", "network"}, "bwrap is not installed from a registry"},
		{[]string{"--label-filter", "network", "--good", "0.0.83", "--bad", "0.0.60"}, "good must be the older one"},
		{[]string{"--label-filter", "network", "--good", "0.0.59"}, "--good: 0.0.59 is not a published version"},
		{[]string{"--label-filter", "network", "--bad", "last:2"}, "--bad last:2 selects 2 versions; name one"},
		{[]string{"--label-filter", "network", "--resume"}, "--resume needs --out DIR"},
		{[]string{"--label-filter", "network", "-n", "1"}, "-n must be at least 2"},
	} {
		var stderr bytes.Buffer
		if code := bisectCmd(c.args, &bytes.Buffer{}, &stderr); code != cli.ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("bisect %q: exit %d, %s\nwant %q", c.args, code, stderr.String(), c.want)
		}
	}
}

func TestVersionsOnlyWhereTheCacheReaches(t *testing.T) {
	fakeRegistry(t, "0.0.83")
	dir := t.TempDir()
	mf := filepath.Join(dir, "m.yaml")
	os.WriteFile(mf, []byte("targets:\n  - name: srt\n    versions: [\"0.0.83\"]\nhosts:\n  - {name: here, kind: local}\n  - {name: box, kind: container, image: sandcheck/debian:bookworm}\n  - {name: vm61, kind: vm, image: bookworm}\n  - {name: wsl, kind: wsl2-like, image: bookworm}\n  - {name: win, kind: wsl, distro: Debian}\n"), 0o644)
	var stderr bytes.Buffer
	if p, code := planRun([]string{"--out", dir, "--matrix", mf}, &stderr); p != nil || code != cli.ExitUsage ||
		!strings.Contains(stderr.String(), "host win (wsl): srt chooses versions, which run from this machine's npm cache") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

func TestVersionsCommandListsAndMarksInstalled(t *testing.T) {
	c := fakeRegistry(t, "0.0.83")
	if _, err := c.Install(context.Background(), npmcache.Spec{Package: "@anthropic-ai/sandbox-runtime", Version: "0.0.82", Bin: "srt"}); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := command("versions")([]string{"srt@>=0.0.81"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "  0.0.81\n* 0.0.82\n  0.0.83  (latest)\n"
	if !strings.HasSuffix(out.String(), want) || !strings.Contains(out.String(), "3 version(s), 1 installed") {
		t.Fatalf("output:\n%s\nwant it to end with:\n%s", out.String(), want)
	}
	if code := command("versions")([]string{"bwrap"}, &out, &errb); code != cli.ExitUsage {
		t.Fatalf("bwrap: exit %d", code)
	}
}

func TestCompareVersionsOfOneReport(t *testing.T) {
	dir := t.TempDir()
	w, err := journal.OpenWriter(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0.0.42", "0.0.43"} {
		o := model.Correct
		if v == "0.0.43" {
			o = model.AllowedBlocked
		}
		cell := model.Cell{ID: "srt-" + v, Target: "srt", Version: v, Host: "local"}
		for i := range 4 {
			w.Append(model.Record{V: 1, RunID: "r", Cell: cell, Trial: i, Outcome: o,
				Scenarios: []model.Scenario{{Name: "untrusted/proxy-env-dead", Outcome: o, Pass: o == model.Correct}}})
		}
	}
	w.Close()
	if code := command("report")([]string{filepath.Join(dir, "journal.jsonl"), "--out", dir}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("report: exit %d", code)
	}
	var out, errb bytes.Buffer
	code := command("compare")([]string{filepath.Join(dir, "report.json"), "--versions", "all"}, &out, &errb)
	if code != 1 || !strings.Contains(out.String(), "srt 0.0.42 (baseline) vs 0.0.43") ||
		!strings.Contains(out.String(), "REGRESSION srt 0.0.43@local untrusted/proxy-env-dead: failures 0/4 (0.0%) -> 4/4 (100.0%)") {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
	for _, bad := range [][]string{{"--versions", "0.0.42"}, {"--versions", "0.0.42,0.0.99"}} {
		if code := command("compare")(append([]string{filepath.Join(dir, "report.json")}, bad...), io.Discard, io.Discard); code != cli.ExitUsage {
			t.Errorf("compare %v: exit %d", bad, code)
		}
	}
}

// command is a registered command, as dispatch finds it.
func command(name string) cli.Func {
	f, _ := cli.Lookup(name)
	return f
}
