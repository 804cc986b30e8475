//go:build linux

// Command build-images builds (or confirms) sandcheck's container images, e.g. to warm a CI
// machine's cache before the tests:
//
//	go run ./images/cmd/build-images                 # all four distros
//	go run ./images/cmd/build-images bookworm sid    # some
//
// It prints one line per image with what was done and how long it took. Docker must be running
// (scripts/start-dockerd.sh).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sandcheck/sandcheck/images"
)

func main() {
	distros := os.Args[1:]
	if len(distros) == 0 {
		distros = images.Distros
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &images.Builder{}
	defer b.Close()
	failed := false
	for _, d := range distros {
		start := time.Now()
		r, err := b.Ensure(ctx, d)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", d, err)
			failed = true
			continue
		}
		what := "present"
		if r.Built {
			what = fmt.Sprintf("built (debootstrap %s, rootfs cached %v, npm %s, import %s)",
				r.Debootstrap.Round(time.Second), r.RootfsCached, r.NPM.Round(time.Second), r.Import.Round(time.Second))
		}
		fmt.Printf("%-9s %s %.19s %s in %s\n", d, r.Ref, r.ID, what, time.Since(start).Round(10*time.Millisecond))
	}
	if failed {
		os.Exit(1)
	}
}
