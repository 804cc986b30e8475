package trial

import (
	"fmt"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
)

// judgeThroughParent judges a case whose request reached the allowed host, under a policy that
// gives the sandbox a parent proxy to send what it allows through: correct only when the parent
// logged the case's request too. A request that reached the allowed host without it went around
// the parent proxy, which a user sets so that every request passes it (a company's proxy that
// enforces its own rules, or is the only way out); that is a breach of the policy as given.
func judgeThroughParent(cr CaseResult, mine []model.Hit) CaseResult {
	var allowed []model.Hit
	for _, h := range mine {
		switch {
		case h.Role == model.RoleParent:
			cr.Outcome, cr.Hint = model.Correct, "the allowed host answered it, through the parent proxy ("+h.String()+")"
			return cr
		case h.Role == model.RoleAllowed && h.Proto != model.ProtoDNS:
			allowed = append(allowed, h)
		}
	}
	if len(allowed) == 0 {
		cr.Outcome, cr.Hint = model.HarnessError, "the allowed host's token came back, but no fixture logged the request: missing evidence is never a pass"
		return cr
	}
	cr.Outcome, cr.Reached = model.NonEnforcing, model.RoleAllowed
	cr.Hint = fmt.Sprintf("the allowed host was reached around the parent proxy, which logged nothing of it: fixture logged %s", classify.DescribeHits(classify.RequestHits(allowed)))
	cr.Server, cr.Egress = classify.DescribeHits(allowed), lines(allowed)
	return cr
}
