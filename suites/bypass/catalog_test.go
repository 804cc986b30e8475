package bypass

import (
	"slices"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

// A case that needs more than its class names it in the catalogue: a write over HTTPS is judged
// only where the proxy reads HTTPS (https-interception), beside the class's method-rules.
func TestCaseNeedsAreCatalogued(t *testing.T) {
	for _, s := range Catalogue() {
		if s.ID != "bypass/methods/post-https" {
			continue
		}
		if !slices.Contains(s.Needs.Capabilities, model.CapHTTPSInterception) || !slices.Contains(s.Needs.Capabilities, model.CapMethodRules) {
			t.Errorf("%s needs %v", s.ID, s.Needs.Capabilities)
		}
		return
	}
	t.Error("bypass/methods/post-https is not catalogued")
}
