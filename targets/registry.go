package targets

import (
	"maps"
	"slices"
	"sync"
)

// byName holds what adapters register from init, by target name (their factories, known
// findings, npm packages); safe for concurrent use.
type byName[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

func (r *byName[T]) set(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]T{}
	}
	r.m[name] = v
}

func (r *byName[T]) get(name string) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[name]
	return v, ok
}

// all is a copy of every entry.
func (r *byName[T]) all() map[string]T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.m)
}

// names lists the names, sorted.
func (r *byName[T]) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.m))
}
