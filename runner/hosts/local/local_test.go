//go:build linux

package local

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/hosttest"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/runner/process"
	"github.com/sandcheck/sandcheck/runner/trialresult"
)

// The local host comes from the matrix like every kind (it reads no keys but user:), runs its
// trials as process groups of the runner, and refuses an account the machine does not have
// before any trial.
func TestLocalHostFromTheMatrix(t *testing.T) {
	reg := matrix.Registry{HostKinds: hosts.Matrix()}
	if _, err := matrix.Parse("m.yaml", []byte("targets: [{name: x}]\nhosts: [{name: here, kind: local, image: i}]\n"), reg); err == nil ||
		!strings.Contains(err.Error(), "m.yaml:2: hosts[0].image: unknown key (expected one of: name, kind, user)") {
		t.Fatalf("a key local does not read: %v", err)
	}
	m, err := matrix.Parse("m.yaml", []byte("targets: [{name: x}]\nhosts: [{name: here, kind: local, user: [root, nosuchaccount]}]\n"), reg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hosts.New(m.Hosts[0], hosts.Options{})
	if err != nil || h.Name() != "here" {
		t.Fatalf("New: %v %v", h, err)
	}
	defer h.Close()
	if _, err := h.Prepare(context.Background(), "/bin/sandcheck"); err == nil || !strings.Contains(err.Error(), "nosuchaccount") {
		t.Fatalf("Prepare with an account that does not exist: %v", err)
	}

	root := New("here", []string{"root"}, nil)
	bin, err := root.Prepare(context.Background(), "sh")
	if err != nil || bin != "sh" {
		t.Fatalf("Prepare: %q %v", bin, err)
	}
	e, err := hosts.NewExecutor(root, hosts.Trials{Binary: bin,
		Argv: func(t runner.Trial, bin string) []string { return []string{bin, "-c", t.Cell.Labels} },
		Parse: func(_ runner.Trial, res runner.ProcResult) (model.Record, error) {
			return model.Record{Outcome: model.Outcome(strings.TrimSpace(string(res.Stdout)))}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(*process.Executor); !ok {
		t.Fatalf("local trials run through %T, want the runner's process executor", e)
	}
	r := e.Run(context.Background(), runner.Trial{Cell: model.Cell{Labels: "echo correct"}, Timeout: 5 * time.Second})
	if r.Outcome != model.Correct {
		t.Fatalf("trial: %+v", r)
	}
}

// The real `sandcheck trial` reads its key from stdin, whether started for its trial or waiting
// as a spare (its request and the key on one stdin): every trial's result line carries its key.
func TestLocalTrialsReadTheirKey(t *testing.T) {
	bin := hosttest.StaticSandcheck(t)
	l := New("here", nil, nil)
	defer l.Close()
	e := l.Executor(hosts.Trials{Binary: bin,
		Argv: func(_ runner.Trial, bin string) []string {
			return []string{bin, "trial", "--emit", "--label-filter", "nosuchlabel"}
		},
		Parse:  trialresult.Parse,
		Frames: trialresult.Prefixes})
	for i := range 3 { // the first starts its own process; the later ones may find a spare
		r := e.Run(context.Background(), runner.Trial{Index: i, Key: runner.NewKey(), Timeout: time.Minute})
		if !strings.Contains(r.Hint, "no spec ran") {
			t.Fatalf("trial %d: %+v, want the trial's own keyed result (no spec ran)", i, r)
		}
	}
}
