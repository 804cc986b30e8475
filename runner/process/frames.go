package process

// Frames: the protocol lines of a trial's stdout, kept whole whatever surrounds them.

import "bytes"

// frameKeeper copies whole stdout lines that start with one of its prefixes (a trial's result
// and egress frames), however much other output surrounds them: the tail buffer keeps only the
// end of the output, and evidence streamed early must survive a chatty trial.
type frameKeeper struct {
	prefixes [][]byte
	max      int
	kept     bytes.Buffer
	head     []byte // start of the current line, until it can be told apart
	keeping  bool   // the current line is a frame being copied
	decided  bool   // the current line was told apart
	start    int    // where the current frame starts in kept
	dropped  bool   // frames beyond max were dropped
}

func newFrameKeeper(prefixes []string, max int) *frameKeeper {
	k := &frameKeeper{max: max}
	for _, p := range prefixes {
		if p != "" {
			k.prefixes = append(k.prefixes, []byte(p))
		}
	}
	return k
}

func (k *frameKeeper) Write(p []byte) (int, error) {
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

// add handles a piece of the current line.
func (k *frameKeeper) add(b []byte) {
	if !k.decided {
		k.head = append(k.head, b...)
		match, undecided := false, false
		for _, pre := range k.prefixes {
			switch {
			case bytes.HasPrefix(k.head, pre):
				match = true
			case bytes.HasPrefix(pre, k.head):
				undecided = true // still a possible prefix: wait for more bytes
			}
		}
		if !match && undecided {
			return
		}
		k.decided, k.keeping, k.start = true, match, k.kept.Len()
		b, k.head = k.head, nil
	}
	if !k.keeping {
		return
	}
	if k.kept.Len()+len(b) > k.max {
		k.kept.Truncate(k.start) // no partial frame: later, smaller ones may still fit
		k.dropped, k.keeping = true, false
		return
	}
	k.kept.Write(b)
}

func (k *frameKeeper) endLine() {
	if !k.decided && len(k.head) > 0 {
		// A line shorter than every prefix that is a prefix of one: not a frame.
		k.head = nil
	}
	if k.keeping {
		k.kept.WriteByte('\n')
	}
	k.head, k.keeping, k.decided = k.head[:0], false, false
}

func (k *frameKeeper) bytes() []byte {
	if k.keeping { // the output ended mid-frame: keep what came, a parser reports it
		return append(bytes.Clone(k.kept.Bytes()), '\n')
	}
	return k.kept.Bytes()
}
