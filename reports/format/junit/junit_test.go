package junit

import (
	"strings"
	"testing"
)

// What XML 1.0 cannot carry (a terminal's ESC, NUL) is shown as \xNN, not dropped or passed on.
func TestXMLSafe(t *testing.T) {
	if got := xmlSafe("a\x1bb\x00"); !strings.Contains(got, `a\x1bb\x00`) {
		t.Fatalf("xmlSafe = %q", got)
	}
}
