package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/targets"
	_ "github.com/sandcheck/sandcheck/targets/adapters" // every adapter's npm package
	"github.com/sandcheck/sandcheck/targets/npmcache"
)

// cachedReleases are the complete installs in the npm cache, as package@version.
func cachedReleases() map[string]bool {
	root := npmcache.New().Root()
	out := map[string]bool{}
	markers, _ := filepath.Glob(filepath.Join(root, "*", npmcache.MarkerFile))
	scoped, _ := filepath.Glob(filepath.Join(root, "@*", "*", npmcache.MarkerFile))
	for _, m := range append(markers, scoped...) {
		rel, err := filepath.Rel(root, filepath.Dir(m))
		if err == nil {
			out[filepath.ToSlash(rel)] = true
		}
	}
	return out
}

// listedReleases reads e2e/releases.txt as package@version (its lines say target@version).
func listedReleases() (map[string]bool, error) {
	f, err := os.Open("releases.txt")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, version, ok := strings.Cut(line, "@")
		p, known := targets.NPMOf(name)
		if !ok || !known {
			return nil, fmt.Errorf("releases.txt:%d: %q: want TARGET@VERSION of a target installed from npm", n, line)
		}
		out[p.Package+"@"+version] = true
	}
	return out, sc.Err()
}

// unlistedInstalls are the releases the e2e tests installed (not in the cache before, in it now)
// that releases.txt does not list, so make deps-test did not install them first. The long tier
// installs what it likes (every release of a history).
func unlistedInstalls(before map[string]bool) []string {
	if os.Getenv(skip.LongTierVar) != "" {
		return nil
	}
	listed, err := listedReleases()
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for r := range cachedReleases() {
		if !before[r] && !listed[r] {
			out = append(out, r)
		}
	}
	return out
}
