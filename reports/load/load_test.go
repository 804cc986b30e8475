package load

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/wire/journal"
)

func write(t *testing.T, path string, recs []model.Record, tail string) {
	t.Helper()
	w, err := journal.OpenWriter(path)
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
	if tail != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(tail)
		f.Close()
	}
}

func rec(cell string, trial int, o model.Outcome) model.Record {
	return model.Record{RunID: "r", Cell: model.Cell{ID: cell, Target: "srt", Host: "h"}, Trial: trial, Outcome: o}
}

func TestMergeShardsDedupeAndTornTail(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	os.Mkdir(shards, 0o755)
	// Shard 1 holds a:0..1, shard 2 holds b:0 and (again, from a resumed run) a:1.
	write(t, filepath.Join(shards, "1.jsonl"), []model.Record{rec("a", 0, model.Correct), rec("a", 1, model.ProxyDead)}, "")
	write(t, filepath.Join(shards, "2.jsonl"), []model.Record{rec("b", 0, model.Correct), rec("a", 1, model.Correct)}, `{"v":1,"cell":{"id":"b"`)
	os.WriteFile(filepath.Join(shards, "notes.txt"), []byte("not a journal"), 0o644)
	extra := filepath.Join(dir, "extra.jsonl")
	write(t, extra, []model.Record{rec("b", 200, model.Timeout)}, "")

	var got []string
	res, err := Journals([]string{shards, extra}, func(r model.Record) error {
		got = append(got, r.Cell.ID+"/"+string(r.Outcome))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "a/correct a/proxy-dead b/correct b/timeout"
	if strings.Join(got, " ") != want {
		t.Fatalf("records = %v, want %s (first copy of a:1 wins)", got, want)
	}
	if res.Records != 4 || res.Duplicates != 1 || len(res.Files) != 3 {
		t.Fatalf("result = %+v", res)
	}
	joined := strings.Join(res.Warnings, "\n")
	if !strings.Contains(joined, "torn") || !strings.Contains(joined, "dropped 1") {
		t.Fatalf("warnings = %q", joined)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.jsonl")
	os.WriteFile(newer, []byte(`{"v":99,"cell":{"id":"a"},"trial":0,"outcome":"correct"}`+"\n"), 0o644)
	if _, err := Journals([]string{newer}, func(model.Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer schema: err = %v", err)
	}
	if _, err := Journals([]string{filepath.Join(dir, "missing.jsonl")}, func(model.Record) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err = %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Journals([]string{empty}, func(model.Record) error { return nil }); err == nil {
		t.Fatal("a directory without journals must be an error: a report of nothing hides a broken CI download")
	}
}

func TestBitset(t *testing.T) {
	var b bitset
	for _, i := range []int{0, 63, 64, 1999} {
		if b.testAndSet(i) {
			t.Fatalf("%d reported present before set", i)
		}
		if !b.testAndSet(i) {
			t.Fatalf("%d not present after set", i)
		}
	}
	if b.testAndSet(1) {
		t.Fatal("1 was never set")
	}
}
