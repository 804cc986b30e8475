// Package keyscan is the tests' stand-in for a sandboxed command hunting for its trial's result
// key: run where a trial runs (in its place, on any host kind), it reads every
// /proc/PID/cmdline and /proc/PID/environ it can and reports those holding the key; then it
// reads the key as a trial does and prints a keyed result line, to show that the key arrived.
package keyscan

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/trialresult"
	"github.com/sandcheck/sandcheck/wire/frame"
)

// Found starts a line of the scan's output naming a process that holds the key.
const Found = "KEYSCAN-FOUND "

// script scans twice: before the trial's reading of the key and after it. The key comes in two
// halves, so that no command line holds it whole; the pattern file is removed at once. Then it
// checks that stdin ends after the key.
const script = `scan() {
  pat=$(mktemp) || exit 1
  printf '%s%s\n' "$1" "$2" > "$pat"
  found=$(grep -lsFf "$pat" /proc/[0-9]*/cmdline /proc/[0-9]*/environ)
  rm -f "$pat"
  for f in $found; do
    d=${f%/*}
    echo "` + Found + `$3 $f: $(tr '\0' ' ' < "$d/cmdline" 2>/dev/null | cut -c1-300)"
  done
}
scan "$1" "$2" before-read
[ "$` + runner.EnvResultKeyFD + `" = 0 ] && read -r key
scan "$1" "$2" after-read
# What follows the key: nothing, then end of file (a child reading stdin must not hang).
if rest=$(timeout 10 cat); then echo "KEYSCAN-EOF ${#rest}"; fi
echo "KEYSCAN-DONE $(ls -d /proc/[0-9]* 2>/dev/null | wc -l) processes"
printf '\n` + frame.ResultPrefix + `%s {"outcome":"correct","hint":"keyscan"}\n' "$key"
`

// Argv is the scan's command line for a trial keyed key.
func Argv(key string) []string {
	h := len(key) / 2
	return []string{"sh", "-c", script, "keyscan", key[:h], key[h:]}
}

// Scan is the scan run as a trial: Parse, the executor's parser, keeps what the trial left and
// reads it as the runner does (trialresult.Parse); Check judges it.
type Scan struct{ res runner.ProcResult }

// Parse records res and reads it as the runner does.
func (s *Scan) Parse(t runner.Trial, res runner.ProcResult) (model.Record, error) {
	s.res = res
	return trialresult.Parse(t, res)
}

// Trials are the scan's prefixes of frames to keep (process.Executor.FramePrefixes,
// hosts.Trials.Frames): Check wants the executor to have kept the trial's result line.
var Trials = trialresult.Prefixes

// Check fails t when the trial keyed key left a process holding the key, or its record rec
// does not show the trial's own keyed result, read from the frames its executor kept.
func (s *Scan) Check(t testing.TB, key string, rec model.Record) {
	t.Helper()
	CheckOutput(t, key, s.res.Stdout)
	if rec.Outcome != model.Correct || rec.Hint != "keyscan" {
		t.Errorf("the trial's keyed result was not taken: %+v", rec)
	}
	if !strings.Contains(string(s.res.Frames), frame.ResultPrefix+key+" ") {
		t.Errorf("the executor kept no keyed result frame: %q", s.res.Frames)
	}
}

// CheckOutput fails t when the scan's stdout shows a process holding key, the scan did not
// finish, the key did not reach the trial (no result line keyed with it), or stdin went on
// after the key.
func CheckOutput(t testing.TB, key string, stdout []byte) {
	t.Helper()
	done, eof := false, false
	for _, l := range strings.Split(string(stdout), "\n") {
		if s, ok := strings.CutPrefix(l, Found); ok {
			t.Errorf("the trial's key is readable: %s", s)
		}
		done = done || strings.HasPrefix(l, "KEYSCAN-DONE ")
		eof = eof || l == "KEYSCAN-EOF 0"
	}
	if !done {
		t.Fatalf("the key scan did not finish: %q", stdout)
	}
	if !strings.Contains(string(stdout), frame.ResultPrefix+key+" ") {
		t.Errorf("the key did not reach the trial: %q", stdout)
	}
	if !eof {
		t.Errorf("the trial's stdin did not end after the key: %q", stdout)
	}
}
