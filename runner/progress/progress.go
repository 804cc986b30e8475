// Package progress shows how far a run is: trials done of the total, an ETA and the outcome
// counts, as a bar redrawn in place on a terminal or a plain line every period otherwise.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

// Meter reports trials done / total, ETA and outcome counts: a bar redrawn in place on a
// terminal, a plain line every period otherwise (CI logs must not fill with carriage returns).
// A nil writer makes every method a no-op.
type Meter struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	every   time.Duration
	resumed int                   // trials already in the journal
	ran     int                   // trials finished by this call
	total   int                   // resumed + still to run (shrinks when a Stopper stops a cell)
	counts  map[model.Outcome]int // trials by what they amount to outside the known findings
	known   int                   // of them, trials that showed known findings
	began   time.Time
	quit    chan struct{}
	done    chan struct{}
}

// New returns a meter writing to w (plain: lines even on a terminal, one each period) of a run
// that resumed trials (counted in counts, outside the known findings, known of them with known
// findings; the meter keeps adding to counts) and has toRun to go.
func New(w io.Writer, plain bool, every time.Duration, resumed, toRun int, counts map[model.Outcome]int, known int) *Meter {
	p := &Meter{w: w, every: every, resumed: resumed, total: resumed + toRun, counts: counts, known: known}
	if f, ok := w.(*os.File); ok && !plain {
		p.tty = isTerminal(f)
	}
	return p
}

// Start starts the periodic output.
func (p *Meter) Start() {
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

// Stop ends the periodic output with a final line.
func (p *Meter) Stop() {
	if p.w == nil {
		return
	}
	close(p.quit)
	<-p.done
	p.print(true)
}

// Note prints a line of its own (warnings at start).
func (p *Meter) Note(s string) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "sandcheck: %s\n", s)
}

// Finished counts one journaled trial by what it amounts to outside the known findings `run`
// accepts (model.Record.Outside); dropped is how many planned trials a Stopper just cancelled.
func (p *Meter) Finished(rec model.Record, dropped int) {
	o, known := rec.Outside(model.Accept{Every: true})
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ran++
	p.total -= dropped
	p.counts[o]++
	if known {
		p.known++
	}
}

func (p *Meter) print(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := progressLine(p.resumed+p.ran, p.total, p.ran, time.Since(p.began), p.counts, p.known)
	switch {
	case p.tty && final:
		fmt.Fprintf(p.w, "\r%s %s\x1b[K\n", bar(p.resumed+p.ran, p.total, 24), line)
	case p.tty:
		fmt.Fprintf(p.w, "\r%s %s\x1b[K", bar(p.resumed+p.ran, p.total, 24), line)
	default:
		fmt.Fprintf(p.w, "sandcheck: %s\n", line)
	}
}

// progressLine renders "done/total (pct%), ETA d, outcome=n ... (k with known findings)", the
// outcomes outside the known findings; the ETA extrapolates this call's own pace (resumed trials
// took no time here).
func progressLine(done, total, ran int, elapsed time.Duration, counts map[model.Outcome]int, known int) string {
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
	if known > 0 {
		fmt.Fprintf(&b, " (%d with known findings)", known)
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
