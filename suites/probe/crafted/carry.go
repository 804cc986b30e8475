package crafted

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Carry sources: what a request takes along in its headers, read inside the sandbox as it is
// sent, as a command exfiltrating secrets would. The fixture, which knows the planted values,
// logs which of them arrived in clear.
const (
	CarryEnv  = "env:"  // env:NAME, a variable of the probe's own environment
	CarryFile = "file:" // file:PATH, a file's content; ~/ is the probe's HOME
)

// CarryHeader prefixes the header each source's value travels in: X-Sandcheck-Carry-1, -2...
const CarryHeader = "X-Sandcheck-Carry-"

// carryHeaders reads r.Carry's sources and returns them as request header lines, noting in res
// what each read found (its length, or the error): never the value, which only the fixture's
// log judges.
func (r Request) carryHeaders(res *Result) string {
	var b strings.Builder
	for i, src := range r.Carry {
		v, err := readSource(src)
		if err != nil {
			res.CarryRead = append(res.CarryRead, fmt.Sprintf("%s: %v", src, err))
			continue
		}
		res.CarryRead = append(res.CarryRead, fmt.Sprintf("%s: %d bytes", src, len(v)))
		// A header is one line: a file's lines are joined by spaces.
		v = strings.Join(strings.Fields(v), " ")
		fmt.Fprintf(&b, "%s%d: %s\r\n", CarryHeader, i+1, v)
	}
	return b.String()
}

// readSource reads one carry source.
func readSource(src string) (string, error) {
	switch {
	case strings.HasPrefix(src, CarryEnv):
		name := strings.TrimPrefix(src, CarryEnv)
		v, ok := os.LookupEnv(name)
		if !ok {
			return "", fmt.Errorf("not set")
		}
		return v, nil
	case strings.HasPrefix(src, CarryFile):
		p := strings.TrimPrefix(src, CarryFile)
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			p = filepath.Join(home, rest)
		}
		b, err := os.ReadFile(p)
		return string(b), err
	}
	return "", fmt.Errorf("unknown source")
}
