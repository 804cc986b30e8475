package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

func rec(cell string, trial int) model.Record {
	return model.Record{Cell: model.Cell{ID: cell, Target: "srt", Host: "local"}, Trial: trial, Outcome: model.Correct, RunID: "r1"}
}

func writeAll(t *testing.T, path string, recs ...model.Record) {
	t.Helper()
	w, err := OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, path string) ([]model.Record, []string, error) {
	t.Helper()
	var out []model.Record
	warn, err := Scan(path, func(r model.Record) error { out = append(out, r); return nil })
	return out, warn, err
}

func TestRoundTripSetsVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	writeAll(t, path, rec("a", 0), rec("a", 1), rec("b", 0))
	got, warn, err := readAll(t, path)
	if err != nil || len(warn) != 0 {
		t.Fatalf("err=%v warn=%v", err, warn)
	}
	if len(got) != 3 || got[2].Cell.ID != "b" || got[1].Trial != 1 {
		t.Fatalf("got %+v", got)
	}
	for _, r := range got {
		if r.V != SchemaVersion {
			t.Fatalf("v=%d, want %d", r.V, SchemaVersion)
		}
	}
	// Reopening appends rather than truncating.
	writeAll(t, path, rec("c", 0))
	got, _, _ = readAll(t, path)
	if len(got) != 4 {
		t.Fatalf("after reopen: %d records, want 4", len(got))
	}
}

func TestConcurrentAppendsStayWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	w, err := OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				r := rec(fmt.Sprintf("cell%d", g), i)
				r.Hint = strings.Repeat("x", 1000*(i%5)) // lines of different sizes
				if err := w.Append(r); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	done, err := Done(path)
	if err != nil {
		t.Fatal(err)
	}
	for g := range 8 {
		if n := len(done[fmt.Sprintf("cell%d", g)]); n != 50 {
			t.Fatalf("cell%d: %d trials, want 50", g, n)
		}
	}
	if err := w.Append(rec("z", 0)); err == nil {
		t.Fatal("append after close succeeded")
	}
}

func TestTornLastLineSkippedWithWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	writeAll(t, path, rec("a", 0), rec("a", 1))
	appendRaw(t, path, `{"v":1,"run_id":"r1","cell":{"id":"a","tar`)

	got, warn, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d records, want 2", len(got))
	}
	if len(warn) != 1 || !strings.Contains(warn[0], path+":3: ignored a torn last line") {
		t.Fatalf("warnings = %q", warn)
	}
	done, err := Done(path)
	if err != nil || len(done["a"]) != 2 {
		t.Fatalf("Done = %v, %v", done, err)
	}
}

func TestWriterTrimsTornTailBeforeAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	writeAll(t, path, rec("a", 0))
	appendRaw(t, path, `{"v":1,"cell":{"id":"a"},"tri`)
	w, err := OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.Repaired(), "dropped a torn last line (29 bytes)") {
		t.Fatalf("Repaired() = %q", w.Repaired())
	}
	if err := w.Append(rec("a", 1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, warn, err := readAll(t, path)
	if err != nil || len(warn) != 0 || len(got) != 2 || got[1].Trial != 1 {
		t.Fatalf("got %+v warn %v err %v", got, warn, err)
	}
}

func TestWriterTrimsFileThatIsOnlyAFragment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	appendRaw(t, path, `{"v":1,`)
	w, err := OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if st, _ := os.Stat(path); st.Size() != 0 {
		t.Fatalf("size %d, want 0", st.Size())
	}
}

func TestTornLineInMiddleIsError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	writeAll(t, path, rec("a", 0))
	appendRaw(t, path, "{\"v\":1,\"cell\":{\"id\":\n")
	writeAll(t, path, rec("a", 2))
	// OpenWriter saw a clean tail (the bad line has its newline), so the corruption stays put.
	_, _, err := readAll(t, path)
	if err == nil || !strings.Contains(err.Error(), path+":2: corrupt journal line") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Done(path); err == nil {
		t.Fatal("Done accepted a corrupt journal")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	writeAll(t, path, rec("a", 0))
	appendRaw(t, path, fmt.Sprintf("{\"v\":%d,\"cell\":{\"id\":\"a\"},\"trial\":1}\n", SchemaVersion+1))
	_, _, err := readAll(t, path)
	want := fmt.Sprintf("%s:2: record schema v%d is newer than this sandcheck reads (v%d)", path, SchemaVersion+1, SchemaVersion)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestMissingVersionRefused(t *testing.T) {
	r := NewReader(strings.NewReader("{\"cell\":{\"id\":\"a\"}}\n"), "x.jsonl")
	_, err := r.Next()
	if err == nil || !strings.Contains(err.Error(), `x.jsonl:1: record has no schema version ("v")`) {
		t.Fatalf("err = %v", err)
	}
}

func TestReaderSkipsBlankLinesAndHandlesLongLines(t *testing.T) {
	long := rec("a", 1)
	long.Hint = strings.Repeat("y", 300<<10) // longer than the bufio buffer
	path := filepath.Join(t.TempDir(), "j.jsonl")
	writeAll(t, path, rec("a", 0))
	appendRaw(t, path, "\n")
	writeAll(t, path, long)
	f, _ := os.Open(path)
	defer f.Close()
	r := NewReader(f, path)
	var n int
	for {
		got, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.Trial == 1 && len(got.Hint) != 300<<10 {
			t.Fatalf("long hint truncated to %d", len(got.Hint))
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d records, want 2", n)
	}
}

func TestDoneMissingFileIsEmpty(t *testing.T) {
	done, err := Done(filepath.Join(t.TempDir(), "nope.jsonl"))
	if err != nil || len(done) != 0 {
		t.Fatalf("Done = %v, %v", done, err)
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}
