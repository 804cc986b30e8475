package progress

import (
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
)

func TestProgressLineAndBar(t *testing.T) {
	counts := map[model.Outcome]int{model.Correct: 4, model.ProxyDead: 1}
	if got, want := progressLine(5, 20, 5, 10*time.Second, counts), "5/20 trials (25%), ETA 30s correct=4 proxy-dead=1"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	// Resumed trials took no time in this run: the ETA uses this run's pace only.
	if got, want := progressLine(12, 20, 2, 4*time.Second, nil), "12/20 trials (60%), ETA 16s"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if got := progressLine(0, 20, 0, 0, nil); got != "0/20 trials (0%), ETA ?" {
		t.Fatalf("got %q", got)
	}
	if got := bar(5, 20, 8); got != "[==      ]" {
		t.Fatalf("bar %q", got)
	}
}
