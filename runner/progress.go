package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

// progress reports trials done / total, ETA and outcome counts: a bar redrawn in place on a
// terminal, a plain line every period otherwise (CI logs must not fill with carriage returns).
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	every   time.Duration
	resumed int // trials already in the journal
	ran     int // trials finished by this call
	total   int // resumed + still to run (shrinks when a Stopper stops a cell)
	counts  map[model.Outcome]int
	began   time.Time
	quit    chan struct{}
	done    chan struct{}
}

func newProgress(w io.Writer, plain bool, every time.Duration, resumed, toRun int, states []*cellState) *progress {
	p := &progress{w: w, every: every, resumed: resumed, total: resumed + toRun, counts: map[model.Outcome]int{}}
	for _, cs := range states {
		for o, n := range cs.sum.Counts {
			p.counts[o] += n
		}
	}
	if f, ok := w.(*os.File); ok && !plain {
		p.tty = isTerminal(f)
	}
	return p
}

func (p *progress) start() {
	if p.w == nil {
		return
	}
	p.began = time.Now()
	p.quit, p.done = make(chan struct{}), make(chan struct{})
	period := p.every
	if p.tty {
		period = 250 * time.Millisecond
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.print(false)
			}
		}
	}()
}

func (p *progress) stop() {
	if p.w == nil {
		return
	}
	close(p.quit)
	<-p.done
	p.print(true)
}

// note prints a line of its own (warnings at start).
func (p *progress) note(s string) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "sandcheck: %s\n", s)
}

// finished counts one journaled trial; dropped is how many planned trials a Stopper just cancelled.
func (p *progress) finished(o model.Outcome, dropped int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ran++
	p.total -= dropped
	p.counts[o]++
}

func (p *progress) print(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := progressLine(p.resumed+p.ran, p.total, p.ran, time.Since(p.began), p.counts)
	switch {
	case p.tty && final:
		fmt.Fprintf(p.w, "\r%s %s\x1b[K\n", bar(p.resumed+p.ran, p.total, 24), line)
	case p.tty:
		fmt.Fprintf(p.w, "\r%s %s\x1b[K", bar(p.resumed+p.ran, p.total, 24), line)
	default:
		fmt.Fprintf(p.w, "sandcheck: %s\n", line)
	}
}

// progressLine renders "done/total (pct%), ETA d, outcome=n ..."; the ETA extrapolates this call's
// own pace (resumed trials took no time here).
func progressLine(done, total, ran int, elapsed time.Duration, counts map[model.Outcome]int) string {
	var b strings.Builder
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	fmt.Fprintf(&b, "%d/%d trials (%.0f%%)", done, total, pct)
	switch left := total - done; {
	case left <= 0:
		fmt.Fprintf(&b, ", took %s", elapsed.Round(time.Second))
	case ran > 0:
		eta := time.Duration(float64(elapsed) / float64(ran) * float64(left))
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	default:
		b.WriteString(", ETA ?")
	}
	for _, o := range model.All {
		if n := counts[o]; n > 0 {
			fmt.Fprintf(&b, " %s=%d", o, n)
		}
	}
	for o, n := range counts {
		if !o.Valid() && n > 0 {
			fmt.Fprintf(&b, " %s=%d", o, n)
		}
	}
	return b.String()
}

func bar(done, total, width int) string {
	fill := width
	if total > 0 {
		fill = min(width*done/total, width)
	}
	return "[" + strings.Repeat("=", fill) + strings.Repeat(" ", width-fill) + "]"
}
