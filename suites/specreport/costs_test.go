package specreport

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// A spec's family is its outermost labelled container's first label: each family's Describe
// carries Label(family), and the spec's own labels (its class, its case) come after.
func TestFamilyOf(t *testing.T) {
	for _, c := range []struct {
		containers [][]string
		want       string
	}{
		{[][]string{{"bypass"}, {}}, "bypass"},
		{[][]string{{}, {"network", "extra"}}, "network"},
		{[][]string{{"claude-settings"}}, "claude-settings"},
		{nil, "other"},
		{[][]string{{}}, "other"},
	} {
		s := types.SpecReport{ContainerHierarchyLabels: c.containers, LeafNodeLabels: []string{"leaf"}}
		if got := familyOf(s); got != c.want {
			t.Errorf("containers %v: family %q, want %q", c.containers, got, c.want)
		}
	}
}
