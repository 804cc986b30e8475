package runner

// Which trial runs next, and what a finished one does to its cell: the interleaving of cells,
// lean journal records, the stop rules.

import (
	"sync"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/progress"
	"github.com/sandcheck/sandcheck/wire/journal"
)

// scheduler hands out trials in rounds: trial 0 of every cell, then trial 1 of every cell, and so
// on. Interleaving spreads slow drifts of the machine (load, thermal, a daemon waking up) over
// all cells instead of biasing whichever cell ran during them, and an interrupted run leaves
// every cell with a similar count.
type scheduler struct {
	mu         sync.Mutex
	states     []*cellState
	limit      int
	round, pos int
	ran        int
	prog       *progress.Meter
}

func (s *scheduler) next() (*cellState, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.round < s.limit {
		for s.pos < len(s.states) {
			cs := s.states[s.pos]
			s.pos++
			if cs.stopped || cs.done[s.round] {
				continue
			}
			cs.remaining--
			return cs, s.round, true
		}
		s.round++
		s.pos = 0
	}
	return nil, 0, false
}

// lean is the record as the journal gets it: with a reference to its cell's host fingerprint,
// and compact unless it must keep its evidence (or full says keep every trial's).
func (s *scheduler) lean(cs *cellState, rec model.Record, full bool) model.Record {
	s.mu.Lock()
	cs.noteFingerprint(rec)
	if rec.HostFPRef == "" {
		rec.HostFPRef = cs.fpRef
	}
	s.mu.Unlock()
	if full || journal.KeepsEvidence(rec) {
		return rec
	}
	return journal.Compacted(rec)
}

// noteFingerprint remembers the reference of the first host fingerprint the cell's trials carry.
func (cs *cellState) noteFingerprint(rec model.Record) {
	if cs.fpRef != "" {
		return
	}
	if len(rec.HostFP) > 0 {
		cs.fpRef = journal.FingerprintRef(rec.HostFP)
	} else if rec.HostFPRef != "" {
		cs.fpRef = rec.HostFPRef
	}
}

func (s *scheduler) finish(cs *cellState, rec model.Record) {
	s.mu.Lock()
	dropped := 0
	if cs.count(rec) {
		dropped, cs.remaining = cs.remaining, 0 // nothing more of this cell will be dispatched
	}
	s.ran++
	s.mu.Unlock()
	s.prog.Finished(rec, dropped)
}

// count adds a journaled record to the cell and feeds the stopper; it reports whether the cell
// stopped just now.
func (cs *cellState) count(rec model.Record) bool {
	cs.sum.Trials++
	cs.sum.Counts[rec.Outcome]++
	if cs.stopper == nil || cs.stopped {
		return false
	}
	if rs, ok := cs.stopper.(RecordStopper); ok {
		if rs.ObserveRecord(rec) {
			cs.stopped = true
			cs.sum.Stopped = true
			return true
		}
		return false
	}
	if pass, counted := Passed(rec); counted && cs.stopper.Observe(pass) {
		cs.stopped = true
		cs.sum.Stopped = true
		return true
	}
	return false
}
