package hosts

import (
	"slices"
	"testing"
)

func TestLocalRunsCommandAsIs(t *testing.T) {
	var h Host = NewLocal("")
	argv, env := h.Wrap([]string{"sandcheck", "trial"}, []string{"A=1"})
	if h.Name() != "local" || !slices.Equal(argv, []string{"sandcheck", "trial"}) || !slices.Equal(env, []string{"A=1"}) {
		t.Fatalf("%s %v %v", h.Name(), argv, env)
	}
	if NewLocal("here").Name() != "here" || h.Close() != nil {
		t.Fatal("name or close")
	}
}
