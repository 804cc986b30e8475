package orchestrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/npmcache"
	"github.com/sandcheck/sandcheck/versions"
)

// Versions of npm-installed sandboxes: NAME@SELECTOR on the command line, versions: in a matrix.
// A run resolves its selectors once (the registry's list, cached with a TTL), records the result
// in its directory (versions.json, so --resume runs what the run started with even if "latest"
// moved), installs each version once into the npm cache, and hands every versioned cell's trial
// that version's executable as --target-path.

// NpmCache is this process's cache: version lists are fetched at most once per run.
var NpmCache = sync.OnceValue(npmcache.New)

// VersionsFile records a run's resolved versions in its directory.
const VersionsFile = "versions.json"

// SplitTarget reads NAME or NAME@SELECTOR (names never hold '@').
func SplitTarget(s string) (name, sel string) {
	name, sel, _ = strings.Cut(strings.TrimSpace(s), "@")
	return name, sel
}

// VersionedCheck is matrix.Registry.Versioned: only npm-installed sandboxes take versions.
func VersionedCheck(name string) error {
	if _, ok := targets.NPMOf(name); ok {
		return nil
	}
	var npm []string
	for _, n := range targets.Names() {
		if _, ok := targets.NPMOf(n); ok {
			npm = append(npm, n)
		}
	}
	return fmt.Errorf("%s is not installed from a registry, so sandcheck cannot choose its version (targets with versions: %s); "+
		"run another build with settings.path, or another distribution's with a container host", name, strings.Join(npm, ", "))
}

// FlagTargets turns --target values into matrix targets, one per adapter name in order of first
// mention: srt@0.0.60 and srt@latest become one target with two versions; a bare srt beside
// them is its pinned install, alone it is the target without versions.
func FlagTargets(vals []string) ([]matrix.Target, error) {
	var names []string
	given := map[string][]string{} // name -> the values naming it
	for _, v := range vals {
		name, _ := SplitTarget(v)
		if err := targets.Known(name); err != nil { // its settings are checked once they are all given
			return nil, fmt.Errorf("--target %s: %w", v, err)
		}
		if _, ok := given[name]; !ok {
			names = append(names, name)
		}
		given[name] = append(given[name], v)
	}
	var out []matrix.Target
	for _, name := range names {
		t := matrix.Target{ID: name, Name: name, Settings: map[string]any{}}
		if slices.ContainsFunc(given[name], func(v string) bool { return strings.Contains(v, "@") }) {
			if err := VersionedCheck(name); err != nil {
				return nil, fmt.Errorf("--target %s: %w", given[name][0], err)
			}
			for _, v := range given[name] {
				_, text := SplitTarget(v)
				if !strings.Contains(v, "@") {
					text = versions.PinnedWord
				}
				sel, err := versions.ParseSelector(text)
				if err != nil {
					return nil, fmt.Errorf("--target %s: %w", v, err)
				}
				t.Versions = append(t.Versions, matrix.VersionSel{Selector: sel, Field: "--target " + v})
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// PinnedVersion is the version of the target's own install (what it runs without a version).
func PinnedVersion(t matrix.Target) (string, error) {
	settings := map[string]string{}
	for k, v := range t.Settings {
		if s, ok := v.(string); ok {
			settings[k] = s
		}
	}
	tg, err := targets.New(t.Name, settings)
	if err != nil {
		return "", err
	}
	v := versions.Extract(tg.Version())
	if v == "" {
		return "", fmt.Errorf("%s: cannot tell the version of its pinned install (%q)", t.Name, tg.Version())
	}
	return v, nil
}

// Resolver resolves selectors through the npm cache's version lists, warning on stale ones.
func Resolver(ctx context.Context, stderr io.Writer) matrix.Resolver {
	warned := map[string]bool{}
	return func(t matrix.Target, sel versions.Selector) ([]string, error) {
		npm, ok := targets.NPMOf(t.Name)
		if !ok {
			return nil, VersionedCheck(t.Name)
		}
		pinned := ""
		if sel.Kind == versions.Pinned {
			p, err := PinnedVersion(t)
			if err != nil {
				return nil, err
			}
			pinned = p
		}
		pub := versions.Published{Package: npm.Package}
		need := sel.NeedsIndex()
		if sel.Kind == versions.Exact {
			// Installed already: no registry needed (offline works). Else the list says at once
			// whether it exists, before anything runs.
			_, have := NpmCache().Lookup(npmcache.Spec{Package: npm.Package, Version: sel.Version.String(), Bin: npm.Bin})
			need = !have
		}
		if need {
			idx, err := NpmCache().Published(ctx, npm.Package)
			if err != nil {
				return nil, err
			}
			if idx.Warning != "" && !warned[npm.Package] {
				warned[npm.Package] = true
				fmt.Fprintf(stderr, "warning: %s\n", idx.Warning)
			}
			pub = idx.Published
		}
		return sel.Resolve(pub, pinned)
	}
}

// savedVersions is versions.json: per target id, the selectors as written and what they resolved to.
type savedVersions struct {
	ResolvedAt time.Time                 `json:"resolved_at"`
	Targets    map[string]savedSelection `json:"targets"`
}

type savedSelection struct {
	Name      string   `json:"name"`
	Selectors []string `json:"selectors"`
	Versions  []string `json:"versions"`
}

func selectorTexts(t matrix.Target) []string {
	var s []string
	for _, v := range t.Versions {
		s = append(s, v.Text)
	}
	return s
}

// ResolveVersions resolves the matrix's versions. Resuming a run reuses what the run resolved at
// its start (versions.json in dir) for every target whose selectors are unchanged.
func ResolveVersions(ctx context.Context, m *matrix.Matrix, dir string, resume bool, stderr io.Writer) error {
	any := slices.ContainsFunc(m.Targets, func(t matrix.Target) bool { return len(t.Versions) > 0 })
	if !any {
		return nil
	}
	file := filepath.Join(dir, VersionsFile)
	var saved savedVersions
	if resume {
		if b, err := os.ReadFile(file); err == nil {
			json.Unmarshal(b, &saved)
		}
	}
	res := Resolver(ctx, stderr)
	reuse := func(t matrix.Target, sel versions.Selector) ([]string, error) {
		if s, ok := saved.Targets[t.ID]; ok && s.Name == t.Name && slices.Equal(s.Selectors, selectorTexts(t)) {
			return s.Versions, nil // the union, recorded at the run's start
		}
		return res(t, sel)
	}
	if err := m.ResolveVersions(reuse); err != nil {
		return err
	}
	out := savedVersions{ResolvedAt: time.Now().UTC(), Targets: map[string]savedSelection{}}
	for _, t := range m.Targets {
		if len(t.Versions) > 0 {
			out.Targets[t.ID] = savedSelection{Name: t.Name, Selectors: selectorTexts(t), Versions: t.Resolved}
		}
	}
	if st, err := os.Stat(filepath.Join(dir, runner.JournalFile)); !resume && err == nil && st.Size() > 0 {
		return nil // the runner refuses this directory; its record stays that run's
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// installJobs is how many versions install at once (npm waits on the network more than the CPU).
const installJobs = 4

// InstallVersions installs every version the matrix runs (once per machine: later runs find them
// in the cache) and records each one's executable for the trials. It prints one line per target.
func InstallVersions(ctx context.Context, m *matrix.Matrix, o *Trial, stderr io.Writer) error {
	c := NpmCache()
	for _, t := range m.Targets {
		if len(t.Resolved) == 0 {
			continue
		}
		npm, ok := targets.NPMOf(t.Name)
		if !ok {
			return VersionedCheck(t.Name)
		}
		start := time.Now()
		ins := make([]npmcache.Install, len(t.Resolved))
		errs := make([]error, len(t.Resolved))
		sem := make(chan struct{}, installJobs)
		var wg sync.WaitGroup
		for i, v := range t.Resolved {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				ins[i], errs[i] = c.Install(ctx, npmcache.Spec{Package: npm.Package, Version: v, Bin: npm.Bin, IgnoreScripts: npm.IgnoreScripts})
			})
		}
		wg.Wait()
		fresh := 0
		for i, v := range t.Resolved {
			if errs[i] != nil {
				return errs[i]
			}
			if ins[i].Fresh {
				fresh++
			}
			if o.VersionPaths == nil {
				o.VersionPaths = map[string]string{}
			}
			o.VersionPaths[t.ID+"@"+v] = ins[i].BinPath()
		}
		fmt.Fprintf(stderr, "versions: %s %s: %d installed (%.1fs), %d from the cache %s\n", t.ID, VersionSpan(t.Resolved),
			fresh, time.Since(start).Seconds(), len(t.Resolved)-fresh, c.Root())
	}
	return nil
}

// VersionSpan is "0.0.60" or "0.0.21 .. 0.0.83 (17 versions)".
func VersionSpan(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	return fmt.Sprintf("%s .. %s (%d versions)", vs[0], vs[len(vs)-1], len(vs))
}

// Pin makes a single trial's target NAME@VERSION concrete: the version is resolved (exactly
// one), installed if needed; it returns the target's name and that version's executable ("" and
// no error when target names no version).
func Pin(ctx context.Context, target string, stderr io.Writer) (name, path string, err error) {
	name, _ = SplitTarget(target)
	if !strings.Contains(target, "@") {
		return name, "", nil
	}
	ts, err := FlagTargets([]string{target})
	if err != nil {
		return "", "", err
	}
	m := &matrix.Matrix{Targets: ts}
	if err := m.ResolveVersions(Resolver(ctx, stderr)); err != nil {
		return "", "", err
	}
	if n := len(m.Targets[0].Resolved); n != 1 {
		return "", "", fmt.Errorf("--target %s selects %d versions; a single trial runs one (use run for several)", target, n)
	}
	var t Trial
	if err := InstallVersions(ctx, m, &t, io.Discard); err != nil {
		return "", "", err
	}
	return name, t.VersionPaths[name+"@"+m.Targets[0].Resolved[0]], nil
}

// VersionsOnHosts refuses versioned targets on hosts the npm cache does not reach (the kind
// says, hosts.Kind.NpmCache): local trials run the cache's installs, container hosts mount the
// cache read-only at the same path, vm and wsl2-like guests over a read-only 9p share at the same
// path; ssh and wsl hosts run the sandbox installed there.
func VersionsOnHosts(m *matrix.Matrix) error {
	var versioned []string
	for _, t := range m.Targets {
		if len(t.Versions) > 0 {
			versioned = append(versioned, t.ID)
		}
	}
	if len(versioned) == 0 {
		return nil
	}
	for _, h := range m.Hosts {
		if k, ok := hosts.Lookup(h.Kind); !ok || !k.NpmCache {
			return fmt.Errorf("host %s (%s): %s chooses versions, which run from this machine's npm cache; a %s host does not see it "+
				"(run versions on local, container, vm or wsl2-like hosts, or give the target settings.path of an install on that host)",
				h.Name, h.Kind, strings.Join(versioned, ", "), h.Kind)
		}
	}
	return nil
}
