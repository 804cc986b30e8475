package bypass

import (
	"slices"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/bypass/knownbad"
	"github.com/sandcheck/sandcheck/suites/bypass/nesting"
	"github.com/sandcheck/sandcheck/suites/bypass/resources"
	"github.com/sandcheck/sandcheck/suites/catalog"
	"github.com/sandcheck/sandcheck/suites/harness/filesystem"
)

// family is the family's label, on its every spec.
const family = "bypass"

// interplayLabels are the labels of a check of the fs-interplay trial, which runs the
// filesystem probe for its classes (fs-interplay, git).
func interplayLabels(c filesystem.CheckInfo) []string {
	return []string{family + "-" + c.Class, family + "-" + c.Class + "-" + c.Name}
}

// sessions are the family's sandboxed sessions, every class in one of them.
func sessions() []bypassSession {
	return append(append([]bypassSession{}, proxySessions...), methodSession, privateSession, sideChannels, tamperSession, bridgeSession, secretsSession, parentSession)
}

// Catalogue lists the family's scenarios, from the classes and checks its specs are built from,
// each with the known-bads (knownbad) that flag it.
func Catalogue() []catalog.Scenario {
	fl := knownbad.Flags()
	var out []catalog.Scenario
	for _, s := range sessions() {
		for _, c := range s.classes {
			needs := catalog.Needs{AllowList: c.proxyOnly}
			if c.needs != "" {
				needs.Capabilities = []model.Capability{c.needs}
			}
			for _, bc := range c.cases {
				id := scenarioName(c.class, bc.id)
				n := needs
				if bc.needs != "" {
					n.Capabilities = append(slices.Clone(n.Capabilities), bc.needs)
				}
				out = append(out, catalog.Scenario{ID: id, Labels: append([]string{family}, c.labels(bc.id)...), Spec: bc.what, What: bc.what,
					Needs: n, KnownBads: catalog.Of(id, fl)})
			}
		}
	}
	for _, c := range filesystem.InterplayChecks() {
		id := scenarioName(c.Class, c.Name)
		out = append(out, catalog.Scenario{ID: id, Labels: append([]string{family}, interplayLabels(c)...), Spec: c.Name, What: c.What,
			Needs: catalog.Capability(c.Needs...), KnownBads: catalog.Of(id, fl)})
	}
	out = append(out, nesting.Catalogue(fl)...)
	return append(out, resources.Catalogue()...)
}
