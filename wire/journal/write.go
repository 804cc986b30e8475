package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/sandcheck/sandcheck/model"
)

// Writer appends Records to a journal file, one JSON line each, fsynced before Append returns.
// It is safe for concurrent use: workers share one Writer and each line is written whole.
type Writer struct {
	mu       sync.Mutex
	f        *os.File
	path     string
	buf      bytes.Buffer // reused under mu so 100000 appends do not churn the heap
	repaired string
}

// OpenWriter opens path for appending, creating it (and fsyncing its directory) if needed.
//
// A journal whose last line was torn by a crash (no trailing newline) is trimmed back to its last
// complete line first: appending after the fragment would glue the next record to it and turn a
// harmless torn tail into a corrupt middle line. Repaired says what was trimmed.
func OpenWriter(path string) (*Writer, error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	w := &Writer{f: f, path: path}
	if created {
		// The new directory entry must survive a crash too, or the fsynced lines vanish with it.
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := w.trimTornTail(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// trimTornTail truncates a trailing partial line, if any.
func (w *Writer) trimTornTail() error {
	r, err := os.Open(w.path)
	if err != nil {
		return fmt.Errorf("journal: check tail of %s: %w", w.path, err)
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return fmt.Errorf("journal: check tail of %s: %w", w.path, err)
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	// Scan backwards in chunks for the last newline; records can be large (evidence).
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	end := size
	lastNL := int64(-1)
	for end > 0 && lastNL < 0 {
		start := max(end-chunk, 0)
		n, err := r.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("journal: check tail of %s: %w", w.path, err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			lastNL = start + int64(i)
		}
		if end == size && lastNL == size-1 {
			return nil // ends cleanly
		}
		end = start
	}
	keep := lastNL + 1 // 0 when the file holds only a fragment
	if err := w.f.Truncate(keep); err != nil {
		return fmt.Errorf("journal: trim torn tail of %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("journal: trim torn tail of %s: %w", w.path, err)
	}
	w.repaired = fmt.Sprintf("%s: dropped a torn last line (%d bytes) left by an interrupted write", w.path, size-keep)
	return nil
}

// Repaired describes a torn tail that OpenWriter trimmed, or is "" when the journal was clean.
func (w *Writer) Repaired() string { return w.repaired }

// Path is the journal file being written.
func (w *Writer) Path() string { return w.path }

// Append writes r as one line and fsyncs (in its compact form when r.Compact, see Compacted).
// A zero r.V is set to SchemaVersion. When Append
// returns nil the record is durable; callers count a trial done only after that.
func (w *Writer) Append(r model.Record) error {
	if r.V == 0 {
		r.V = SchemaVersion
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("journal: append to %s: writer closed", w.path)
	}
	w.buf.Reset()
	// One Write call below keeps the line whole for O_APPEND.
	if err := Encode(&w.buf, r); err != nil {
		return err
	}
	if _, err := w.f.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("journal: write %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("journal: fsync %s: %w", w.path, err)
	}
	if w.buf.Cap() > 1<<20 {
		w.buf = bytes.Buffer{} // one huge evidence blob should not pin memory for the whole run
	}
	return nil
}

// Encode writes r as one journal line (newline included), in its compact form when r.Compact.
// Writer.Append is Encode plus fsync; tools that build journals in bulk use it directly.
func Encode(w io.Writer, r model.Record) error {
	var v any = r
	if r.Compact {
		v = compactForm(r)
	}
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return fmt.Errorf("journal: encode record %s/%d: %w", r.Cell.ID, r.Trial, err)
	}
	return nil
}

// Close closes the file. Appends after Close fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("journal: close %s: %w", w.path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: fsync dir %s: %w", dir, err)
	}
	return nil
}
