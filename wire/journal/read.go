package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/sandcheck/sandcheck/model"
)

// MaxLineBytes bounds one journal line; a longer one is reported as corrupt instead of being
// buffered without limit.
const MaxLineBytes = 64 << 20

// Reader streams Records from a journal, one line at a time, so reading a 100000-trial journal
// costs one record of memory, not the whole file.
type Reader struct {
	br       *bufio.Reader
	name     string
	line     int
	warnings []string
	done     bool
}

// NewReader reads journal lines from r; name (usually the file path) prefixes every error.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), name: name}
}

// Next returns the next record, or io.EOF after the last one.
//
// A last line without its newline that does not parse is what a crash mid-write leaves: it is
// skipped and noted in Warnings. Any other line that does not parse is corruption and an error
// naming name:line, as is a record with a schema version newer than SchemaVersion.
func (r *Reader) Next() (model.Record, error) {
	for !r.done {
		raw, complete, err := r.readLine()
		if err != nil {
			return model.Record{}, err
		}
		if raw == nil {
			r.done = true
			break
		}
		r.line++
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var rec model.Record
		if err := json.Unmarshal(raw, &rec); err != nil {
			if !complete {
				r.done = true
				r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: ignored a torn last line (%d bytes) left by an interrupted write", r.name, r.line, len(raw)))
				break
			}
			return model.Record{}, fmt.Errorf("%s:%d: corrupt journal line: %w", r.name, r.line, err)
		}
		switch {
		case rec.V > SchemaVersion:
			return model.Record{}, fmt.Errorf("%s:%d: record schema v%d is newer than this sandcheck reads (v%d); use a newer sandcheck", r.name, r.line, rec.V, SchemaVersion)
		case rec.V <= 0:
			return model.Record{}, fmt.Errorf("%s:%d: record has no schema version (\"v\")", r.name, r.line)
		}
		return rec, nil
	}
	return model.Record{}, io.EOF
}

// readLine returns one line without its newline and whether the newline was there; nil at EOF.
func (r *Reader) readLine() ([]byte, bool, error) {
	var line []byte
	for {
		frag, err := r.br.ReadSlice('\n')
		if len(line)+len(frag) > MaxLineBytes {
			return nil, false, fmt.Errorf("%s:%d: journal line longer than %d bytes", r.name, r.line+1, MaxLineBytes)
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, false, nil
			}
			return line, false, nil
		default:
			return nil, false, fmt.Errorf("%s:%d: read journal: %w", r.name, r.line+1, err)
		}
	}
}

// Warnings lists what was skipped so far (a torn last line).
func (r *Reader) Warnings() []string { return r.warnings }

// Scan calls fn for every record of the journal at path, streaming. It returns the reader's
// warnings; an error from fn stops the scan and is returned as is.
func Scan(path string, fn func(model.Record) error) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	r := NewReader(f, path)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Warnings(), nil
		}
		if err != nil {
			return r.Warnings(), err
		}
		if err := fn(rec); err != nil {
			return r.Warnings(), err
		}
	}
}

// Done returns, per cell ID, the trial indexes the journal at path already holds: what a resumed
// run must not run again. A missing journal holds nothing. Warnings (a torn last line) go to the
// standard logger; use Scan to handle them yourself.
func Done(path string) (map[string]map[int]bool, error) {
	done := map[string]map[int]bool{}
	warnings, err := Scan(path, func(rec model.Record) error {
		m := done[rec.Cell.ID]
		if m == nil {
			m = map[int]bool{}
			done[rec.Cell.ID] = m
		}
		m[rec.Trial] = true
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return done, nil
	}
	for _, w := range warnings {
		log.Printf("warning: %s", w)
	}
	if err != nil {
		return nil, err
	}
	return done, nil
}
