// Package load merges one or many journals (the shards of a run, or a run and its resume) into a
// single stream of records for reports. Parsing, torn tails and schema versions are the journal
// package's job (journal.Scan); this package adds what only a multi-file reader can: directory
// expansion, a stable file order and de-duplication of (cell, trial) pairs.
package load

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// Result says what was read.
type Result struct {
	Files      []string // journals read, in order
	Records    int      // records passed to fn
	Duplicates int      // (cell, trial) pairs seen again and dropped
	Warnings   []string // torn tails, duplicates: worth printing, not worth failing
}

// Journals streams every record of the journals at paths to fn, each (cell ID, trial) once. A path
// that is a directory stands for the *.jsonl files directly inside it, so CI can hand over a
// folder of downloaded shard artifacts. The first copy of a duplicate wins; files are read in
// the order given (directories sorted), so the choice is reproducible.
//
// Memory: one bit per trial index per cell for the de-duplication, never a record.
func Journals(paths []string, fn func(model.Record) error) (Result, error) {
	var res Result
	files, err := expand(paths)
	if err != nil {
		return res, err
	}
	if len(files) == 0 {
		return res, fmt.Errorf("load: no journals in %s", strings.Join(paths, ", "))
	}
	seen := map[string]*bitset{}
	dupPerFile := 0
	for _, f := range files {
		res.Files = append(res.Files, f)
		dupPerFile = 0
		warnings, err := journal.Scan(f, func(r model.Record) error {
			if r.Trial < 0 {
				return fmt.Errorf("%s: cell %s has negative trial index %d", f, r.Cell.ID, r.Trial)
			}
			b := seen[r.Cell.ID]
			if b == nil {
				b = &bitset{}
				seen[r.Cell.ID] = b
			}
			if b.testAndSet(r.Trial) {
				dupPerFile++
				return nil
			}
			res.Records++
			return fn(r)
		})
		res.Warnings = append(res.Warnings, warnings...)
		if dupPerFile > 0 {
			res.Duplicates += dupPerFile
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: dropped %d (cell, trial) pairs already read from an earlier journal", f, dupPerFile))
		}
		if err != nil {
			return res, fmt.Errorf("load: %w", err)
		}
	}
	return res, nil
}

func expand(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("load: %s: %w", p, err)
		}
		sort.Strings(matches)
		out = append(out, matches...)
	}
	return out, nil
}

// bitset is a growable set of small non-negative ints (trial indexes are dense from 0).
type bitset struct{ words []uint64 }

// testAndSet reports whether i was already present, and adds it.
func (b *bitset) testAndSet(i int) bool {
	w, bit := i/64, uint64(1)<<(uint(i)%64)
	for len(b.words) <= w {
		b.words = append(b.words, 0)
	}
	was := b.words[w]&bit != 0
	b.words[w] |= bit
	return was
}
