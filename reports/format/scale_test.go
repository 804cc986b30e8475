package format

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format/htmlpage"
	"github.com/sandcheck/sandcheck/reports/format/markdown"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// scaleShape is a report's shape: its cells and scenarios, and how many trials each cell ran.
type scaleShape struct {
	name                      string
	cells, scenarios, perCell int
}

// The shapes a nightly produces: the default matrix (every scenario) on 20 hosts x versions,
// 10^5 trials in all; one cell of every scenario; many cells of the network scenario.
var scaleShapes = []scaleShape{
	{"nightly-20x52", 20, 52, 5000},
	{"one-cell-52", 1, 52, 1000},
	{"cells-300x9", 300, 9, 50},
}

var scenarioGroups = []string{"network", "filesystem", "failclosed", "untrusted", "concurrency"}

// scaleReport aggregates a synthetic run of that shape as the runner journals it: every
// scenario mostly passing, one flaky (failing 2% of trials, with evidence), one known fail-open
// finding and one known fail-closed one in every trial (compact records), evidence on each
// cell's first trial.
func scaleReport(tb testing.TB, sh scaleShape) *schema.Report {
	tb.Helper()
	a, err := aggregate.New(aggregate.Options{SandcheckVersion: "scale", Now: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		tb.Fatal(err)
	}
	names := make([]string, sh.scenarios)
	for i := range names {
		names[i] = fmt.Sprintf("%s/scenario-with-a-longish-name-%02d", scenarioGroups[i%len(scenarioGroups)], i)
	}
	evidence := json.RawMessage(fmt.Sprintf(`{"observation":{"stderr":%q}}`, strings.Repeat("curl: (7) Failed to connect\n", 3000)))
	for c := range sh.cells {
		cell := model.Cell{ID: fmt.Sprintf("srt-%03d", c), Target: "srt", Host: fmt.Sprintf("debian-%02d", c%8), Fault: fmt.Sprintf("version-%d", c/8)}
		for i := range sh.perCell {
			r := model.Record{V: journal.SchemaVersion, RunID: "nightly", Cell: cell, Trial: i, Outcome: model.Correct, DurationMS: 900}
			r.Scenarios = make([]model.Scenario, len(names))
			flaky := rand.New(rand.NewPCG(uint64(c), uint64(i))).Float64() < 0.02
			for j, n := range names {
				s := model.Scenario{Name: n, Outcome: model.Correct, Pass: true}
				switch {
				case j == 1 && sh.scenarios > 2:
					s = model.Scenario{Name: n, Outcome: model.NonEnforcing, Breaches: []model.Breach{{Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit", Known: "srt:" + n + "#hooks"}}}
				case j == 2 && sh.scenarios > 2:
					s = model.Scenario{Name: n, Outcome: model.AllowedBlocked, Breaches: []model.Breach{{Outcome: model.AllowedBlocked, What: "write /tmp/claude/x: ENOENT", Known: "srt:" + n + "#tmpdir"}}}
				case j == 0 && flaky:
					s = model.Scenario{Name: n, Outcome: model.ProxyDead, Hint: "in-sandbox bridge not listening on 127.0.0.1:3128"}
					r.Outcome = model.ProxyDead
				}
				r.Scenarios[j] = s
			}
			if i == 0 || flaky {
				r.Evidence = evidence
			} else {
				r = journal.Compacted(r)
			}
			a.Add(r)
		}
	}
	return a.Report()
}

// chromium is Debian's Chromium, or "" (then the caller skips, saying so).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromiumCmd is Chromium with args, its HOME and XDG directories under dir: whatever
// --user-data-dir says, it keeps its crash reports in ~/.config/chromium and dconf's in
// ~/.cache, which a test must not leave in the caller's HOME.
func chromiumCmd(ctx context.Context, bin, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
	return cmd
}

var renderedMS = regexp.MustCompile(`data-rendered-ms="(\d+)"`)

// renderInChromium loads page in headless Chromium and returns the DOM after its scripts ran and
// the page's own measurement of load and first layout (data-rendered-ms), plus the wall time.
func renderInChromium(tb testing.TB, bin, page string) (dom string, rendered time.Duration, wall time.Duration) {
	tb.Helper()
	dir := tb.TempDir()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1400,1000", "--dump-dom", "file://" + page}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	out, err := chromiumCmd(ctx, bin, dir, args...).Output()
	wall = time.Since(start)
	if err != nil {
		tb.Fatalf("chromium: %v", err)
	}
	m := renderedMS.FindSubmatch(out)
	if m == nil {
		tb.Fatalf("page did not record data-rendered-ms (its script did not run?)")
	}
	ms, _ := strconv.Atoi(string(m[1]))
	return string(out), time.Duration(ms) * time.Millisecond, wall
}

// TestHTMLAtScale renders nightly-sized reports in headless Chromium: the page loads and lays
// out fast, the heat map puts the longer of cells and scenarios down the page, and known
// findings stay marked.
func TestHTMLAtScale(t *testing.T) {
	skip.Short(t, "a large report rendered in chromium, about 20 s")
	bin := chromium()
	if bin == "" {
		skip.Missing(t, "chromium is not installed (make deps-test); report.html was not measured in a browser")
	}
	for _, sh := range scaleShapes {
		t.Run(sh.name, func(t *testing.T) {
			sh.perCell = min(sh.perCell, 200) // the page's size does not follow the trials (see the benchmark)
			rep := scaleReport(t, sh)
			dir := t.TempDir()
			if err := WriteAll(dir, rep, Options{}); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, HTMLFile)
			st, _ := os.Stat(page)
			dom, rendered, wall := renderInChromium(t, bin, page)
			t.Logf("%s: report.html %d KiB, load + layout %s in the page, chromium %s", sh.name, st.Size()>>10, rendered, wall.Round(time.Millisecond))
			if rendered > 5*time.Second {
				t.Errorf("load + layout took %s", rendered)
			}
			if n := strings.Count(dom, `data-testid="heat-cell"`); n != sh.cells*sh.scenarios {
				t.Errorf("%d heat cells, want %d", n, sh.cells*sh.scenarios)
			}
			rows := "cells"
			if sh.scenarios > sh.cells {
				rows = "scenarios"
			}
			if !strings.Contains(dom, `data-rows="`+rows+`"`) {
				t.Errorf("heat map should list %s down the page", rows)
			}
			if n := strings.Count(dom, `data-known="true"`); n < 2*sh.cells {
				t.Errorf("%d heat cells marked known, want at least %d", n, 2*sh.cells)
			}
		})
	}
}

// BenchmarkHTMLAtScale: report.html's size and its load + first layout in headless Chromium, at
// 10^5 trials (nightly-20x52) and the other shapes.
//
//	go test -run '^$' -bench HTMLAtScale -benchtime 1x ./reports/format/
func BenchmarkHTMLAtScale(b *testing.B) {
	bin := chromium()
	if bin == "" {
		skip.Missing(b, "chromium is not installed (make deps-test)")
	}
	for _, sh := range scaleShapes {
		b.Run(sh.name, func(b *testing.B) {
			rep := scaleReport(b, sh)
			dir := b.TempDir()
			if err := WriteAll(dir, rep, Options{}); err != nil {
				b.Fatal(err)
			}
			page := filepath.Join(dir, HTMLFile)
			st, _ := os.Stat(page)
			js, _ := os.Stat(filepath.Join(dir, JSONFile))
			for b.Loop() {
				_, rendered, wall := renderInChromium(b, bin, page)
				b.ReportMetric(float64(sh.cells*sh.perCell), "trials")
				b.ReportMetric(float64(st.Size())/1024, "html-KiB")
				b.ReportMetric(float64(js.Size())/1024, "json-KiB")
				b.ReportMetric(float64(rendered.Milliseconds()), "render-ms")
				b.ReportMetric(float64(wall.Milliseconds()), "chromium-ms")
			}
		})
	}
}

// Each cell says how fast its trials ran: the mean trial time and the trials per minute of one
// slot (what a kernel's guest manages, for a vm host).
func TestCellPace(t *testing.T) {
	rep := scaleReport(t, scaleShape{"pace", 1, 3, 10}) // 900 ms per trial
	var md, page strings.Builder
	if err := markdown.Write(&md, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := htmlpage.Write(&page, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"report.md": md.String(), "report.html": page.String()} {
		if !strings.Contains(s, "mean trial 0.9 s (66.7 trials/min)") {
			t.Errorf("%s does not state the cell's pace", name)
		}
	}
}
