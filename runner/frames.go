package runner

// Frames: the protocol lines of a trial's stdout, kept whole whatever surrounds them.

import (
	"bytes"
	"fmt"
	"sync"
)

// MaxFrames is how much of a trial's own frames an executor keeps by default.
const MaxFrames = 64 << 20

// OtherFramesMax bounds what a FrameKeeper told the trial's key keeps of lines that look like
// frames without carrying the key (a sandboxed command's output): no parser reads them.
const OtherFramesMax = 1 << 20

// FrameKeeper copies whole stdout lines that start with one of its prefixes (a trial's result
// and egress frames), however much other output surrounds them: a tail buffer keeps only the
// end of the output, and evidence streamed early must survive a chatty trial.
//
// Told the trial's key, it tells the trial's own frames (prefix, key, space) from lines that
// only look like frames: the trial's stdout is the sandboxed command's too, and a flood of such
// lines must not crowd out the trial's. They get budgets of their own: up to max bytes of the
// trial's frames, OtherFramesMax of the rest. A frame of the trial's own past max is dropped
// (no partial frame is ever kept) and Lost says so. Without a key every prefixed line counts as
// the trial's own.
type FrameKeeper struct {
	mu          sync.Mutex
	own, other  [][]byte // line prefixes of the trial's frames, and of lines that look like one
	maxOwn      int
	kept        bytes.Buffer
	used        [3]int     // bytes kept per class
	head        []byte     // start of the current line, until it can be told apart
	class       frameClass // of the current line, once decided
	decided     bool       // the current line was told apart
	start       int        // where the current line starts in kept
	lost        bool       // a frame of the trial's own was dropped
	otherCapped bool       // a frame-looking line was dropped
}

type frameClass int

const (
	notFrame   frameClass = iota
	ownFrame              // carries the trial's key (or any frame, without a key)
	otherFrame            // looks like a frame but does not carry the key
)

// NewFrameKeeper returns a keeper of the lines starting with prefixes, keyed with key ("": no
// key), keeping up to max bytes of the trial's own frames.
func NewFrameKeeper(prefixes []string, key string, max int) *FrameKeeper {
	k := &FrameKeeper{maxOwn: max}
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		if key == "" {
			k.own = append(k.own, []byte(p))
			continue
		}
		k.own = append(k.own, []byte(p+key+" "))
		k.other = append(k.other, []byte(p))
	}
	return k
}

func (k *FrameKeeper) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		line, rest, nl := bytes.Cut(p, []byte("\n"))
		k.add(line)
		if nl {
			k.endLine()
		}
		p = rest
		if !nl {
			break
		}
	}
	return n, nil
}

// classify tells what a line starting with head is; undecided while more bytes could change it.
func (k *FrameKeeper) classify(head []byte) (c frameClass, undecided bool) {
	for _, p := range k.own {
		switch {
		case bytes.HasPrefix(head, p):
			return ownFrame, false
		case bytes.HasPrefix(p, head):
			undecided = true
		}
	}
	if undecided { // it may still carry the key
		return notFrame, true
	}
	for _, p := range k.other {
		switch {
		case bytes.HasPrefix(head, p):
			return otherFrame, false
		case bytes.HasPrefix(p, head):
			undecided = true
		}
	}
	return notFrame, undecided
}

// add handles a piece of the current line.
func (k *FrameKeeper) add(b []byte) {
	if !k.decided {
		k.head = append(k.head, b...)
		c, undecided := k.classify(k.head)
		if undecided {
			return
		}
		k.decided, k.class, k.start = true, c, k.kept.Len()
		b, k.head = k.head, nil
	}
	if k.class == notFrame {
		return
	}
	max := k.maxOwn
	if k.class == otherFrame {
		max = OtherFramesMax
	}
	if k.used[k.class]+len(b) > max {
		// No partial frame: drop the line whole; later, smaller ones may still fit.
		k.used[k.class] -= k.kept.Len() - k.start
		k.kept.Truncate(k.start)
		if k.class == ownFrame {
			k.lost = true
		} else {
			k.otherCapped = true
		}
		k.class = notFrame
		return
	}
	k.used[k.class] += len(b)
	k.kept.Write(b)
}

func (k *FrameKeeper) endLine() {
	// A line that ended undecided is shorter than every prefix it starts like: not a frame.
	if k.class != notFrame {
		k.kept.WriteByte('\n')
		k.used[k.class]++
	}
	k.head, k.class, k.decided = nil, notFrame, false
}

// Bytes returns the lines kept, in order.
func (k *FrameKeeper) Bytes() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := bytes.Clone(k.kept.Bytes())
	if k.class != notFrame { // the output ended mid-frame: keep what came, a parser reports it
		b = append(b, '\n')
	}
	return b
}

// Lost reports whether a frame of the trial's own was dropped past the cap.
func (k *FrameKeeper) Lost() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost
}

// Capped reports whether any line was dropped, the trial's own or another.
func (k *FrameKeeper) Capped() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost || k.otherCapped
}

// LostError is the error an executor hands runner.Settle along with the parser's when the
// keeper lost frames of the trial's own (ProcResult.FramesLost): the record read from the
// frames kept lacks what came after, so it must not pass. max is the keeper's cap.
func LostError(max int) error {
	return fmt.Errorf("the trial's own frames passed the %d-byte cap and later ones were dropped: evidence may be missing", max)
}
