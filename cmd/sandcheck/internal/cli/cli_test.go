package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCommandLineQuoted: the command line a report prints as its repro pastes into a shell and
// gives back the same arguments, JSON settings and an empty fault included.
func TestCommandLineQuoted(t *testing.T) {
	args := []string{"run", "--target-settings", `{"permission_mode":"bypass"}`, "--fault", "", "--label-filter", "network && seed", "it's", "-n", "3"}
	line := CommandLine(args)
	cmd := exec.Command("sh", "-c", "set -- "+strings.TrimPrefix(line, "sandcheck ")+`; for a in "$@"; do printf '<%s>\n' "$a"; done`)
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	var want strings.Builder
	for _, a := range args {
		want.WriteString("<" + a + ">\n")
	}
	if string(got) != want.String() {
		t.Errorf("%s\nsplits into\n%s\nwant\n%s", line, got, want.String())
	}
	if !strings.HasPrefix(line, "sandcheck run --target-settings ") {
		t.Errorf("line %q", line)
	}
}
