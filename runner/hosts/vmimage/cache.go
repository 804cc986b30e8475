//go:build linux

package vmimage

// Cached artifacts. Each (a kernel, a root filesystem) is a directory of its own in the cache,
// holding its files and a JSON manifest naming them. It is built in a temporary directory beside
// its place and renamed into place whole, so a directory whose manifest reads and whose files
// exist is complete; builders of one artifact take turns on a lock.

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// artifact is where one cached artifact lives and how to tell it is complete.
type artifact[T any] struct {
	dir      string            // its directory in the cache
	manifest string            // the JSON file in dir describing it (kernel.json, rootfs.json)
	lock     string            // the Builder lock its builds take
	files    func(*T) []string // the files the manifest names, which must exist
}

// load reads the artifact's manifest and checks that the files it names exist.
func (a artifact[T]) load() (*T, error) {
	data, err := os.ReadFile(filepath.Join(a.dir, a.manifest))
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	for _, f := range a.files(&v) {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	return &v, nil
}

// get returns the cached artifact or, when the cache lacks it, what build returns; build runs
// holding the artifact's lock, unless another builder made the artifact while we waited for it.
func (a artifact[T]) get(b *Builder, build func() (*T, error)) (*T, error) {
	if v, err := a.load(); err == nil {
		return v, nil
	}
	unlock, err := b.lock(a.lock)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if v, err := a.load(); err == nil {
		return v, nil // built while we waited
	}
	return build()
}

// build makes the artifact of suite: fill puts its files in out (tmp, which holds out, is its
// scratch space) and returns its manifest, whose paths name them in a.dir. The manifest is
// written to out, and out renamed to a.dir, replacing whatever was there.
func (a artifact[T]) build(suite string, fill func(tmp, out string) (*T, error)) (*T, error) {
	if err := os.MkdirAll(filepath.Dir(a.dir), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(a.dir), ".build-"+suite+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "out")
	os.MkdirAll(out, 0o755)
	v, err := fill(tmp, out)
	if err != nil {
		return nil, err
	}
	data, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(filepath.Join(out, a.manifest), data, 0o644); err != nil {
		return nil, err
	}
	os.RemoveAll(a.dir)
	if err := os.Rename(out, a.dir); err != nil {
		return nil, err
	}
	return v, nil
}
