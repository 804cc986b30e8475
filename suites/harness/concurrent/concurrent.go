//go:build linux

// Package concurrent runs K sandboxes at once against the same fixture hosts, in one shared
// workspace or one each: each session's fixture hits told apart by its nonce and classified on
// its own, and what the sandboxes left in (or took from) the workspaces.
package concurrent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/harness/network"
	"github.com/sandcheck/sandcheck/suites/harness/proc"
	"github.com/sandcheck/sandcheck/targets"
)

// Session is one of several concurrent sandboxed runs: with its settings and what it was given
// beside its command line, what a standalone reproducer starts again.
type Session struct {
	Workspace string          `json:"workspace"`
	Settings  json.RawMessage `json:"settings,omitempty"`
	Run       proc.Run        `json:"run"`
	harness.Given
	Ran    bool            `json:"sandbox_ran"`
	Result classify.Result `json:"result"`
}

// Trial is the evidence of K sandboxes started together.
type Trial struct {
	harness.Subject
	K        int       `json:"k"`
	Shared   bool      `json:"shared_workspace"`
	Sessions []Session `json:"sessions"`
	// Leftovers are entries in the workspaces after every session ended that were not there
	// before: placeholder files a sandbox forgot, or removed from under a sibling.
	Leftovers []string        `json:"leftovers,omitempty"`
	Result    classify.Result `json:"result"`
	Failed    int             `json:"failed_sessions"`
}

// Run starts k sandboxes at once against the same fixture hosts, in one shared
// workspace or one each, and classifies every session on its own: each must reach the allowed
// host through its own proxy and be refused the denied one.
func Run(ctx context.Context, cfg harness.Config, k int, shared bool) (*Trial, error) {
	t, err := harness.Open(ctx, cfg, harness.Options{Network: true})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	wss := make([]string, k)
	for i := range wss {
		wss[i] = t.Workspace
		if !shared {
			wss[i] = filepath.Join(t.Dir, fmt.Sprintf("workspace-%d", i))
			if err := os.MkdirAll(filepath.Join(wss[i], ".sandcheck"), 0o755); err != nil {
				return nil, err
			}
		}
	}
	before := listings(wss)
	ct := &Trial{Subject: t.Subject(),
		K: k, Shared: shared, Sessions: make([]Session, k)}
	nonces := make([]string, k)
	for i := range nonces {
		nonces[i] = harness.RandomHex(8)
	}
	var wg sync.WaitGroup
	errs := make([]error, k)
	for i := 0; i < k; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			spec := network.Spec(t)
			spec.Nonce = nonces[i]
			spec.MarkDir = filepath.Join(wss[i], ".sandcheck")
			x, err := t.Exec(ctx, spec, func(s *targets.Session) {
				s.Workspace = wss[i]
				s.Policy.WritablePaths = []string{wss[i]}
				s.Dir = filepath.Join(t.Dir, "session-"+nonces[i])
				os.MkdirAll(s.Dir, 0o755)
			}, nil)
			if err != nil {
				errs[i] = err
				return
			}
			ct.Sessions[i] = Session{Workspace: wss[i], Settings: x.Settings, Run: x.Run, Given: x.Given, Ran: x.Out.Ran}
			ct.Sessions[i].Result = classify.ClassifyNetwork(network.Input(t, x, spec, sessionHits(t.Hosts.Hits(), nonces[i], nonces)))
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	ct.Leftovers = diffListings(before, listings(wss))
	var outs []model.Outcome
	var hints []string
	for i, s := range ct.Sessions {
		outs = append(outs, s.Result.Outcome)
		if s.Result.Outcome != model.Correct {
			ct.Failed++
			hints = append(hints, fmt.Sprintf("session %d: %s: %s", i, s.Result.Outcome, s.Result.Hint))
		}
	}
	ct.Result.Outcome = model.Worst(outs...)
	ct.Result.Hint = fmt.Sprintf("%d/%d sessions correct", k-ct.Failed, k)
	if len(hints) > 0 {
		ct.Result.Hint += "; " + hints[0]
	}
	return ct, nil
}

// sessionHits is the part of the shared fixture servers' log that may be one session's: its own
// requests (their path or DNS name carries its nonce) with the connections that carried them,
// and every hit no session's nonce claims. The latter go to every session: egress that cannot be
// pinned on one of them still makes each suspect, never a pass.
func sessionHits(hits []model.Hit, nonce string, all []string) []model.Hit {
	owner := func(h model.Hit) string {
		for _, n := range all {
			if strings.Contains(h.Path, n) {
				return n
			}
		}
		return ""
	}
	conn := map[string]string{} // role + client address -> the nonce its request carried
	for _, h := range hits {
		if n := owner(h); n != "" {
			conn[h.Role+" "+h.From] = n
		}
	}
	var out []model.Hit
	for _, h := range hits {
		n := owner(h)
		if n == "" && (h.Proto == model.ProtoTCP || h.Proto == model.ProtoTLS) {
			n = conn[h.Role+" "+h.From]
		}
		if n == "" || n == nonce {
			out = append(out, h)
		}
	}
	return out
}

// listings records the entries of each workspace (one level, where srt puts its placeholders).
func listings(wss []string) map[string]bool {
	seen := map[string]bool{}
	for _, ws := range wss {
		entries, _ := os.ReadDir(ws)
		for _, e := range entries {
			seen[filepath.Join(ws, e.Name())] = true
		}
	}
	return seen
}

func diffListings(before, after map[string]bool) []string {
	var out []string
	for p := range after {
		if !before[p] {
			out = append(out, p)
		}
	}
	for p := range before {
		if !after[p] {
			out = append(out, p+" (removed)")
		}
	}
	sort.Strings(out)
	return out
}
