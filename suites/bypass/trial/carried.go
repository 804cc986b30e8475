package trial

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
)

// judgeCarried judges a case that takes secrets along to the allowed host (none of its hits
// carried a secret it must not: judgeCase has seen to that): it passes only when its request
// reached the allowed host with every canary it must carry, the proof that what the probe read
// travelled, so the secret's absence is the sandbox's doing.
func judgeCarried(c Case, cr CaseResult, res crafted.Result, mine []model.Hit) CaseResult {
	read := strings.Join(res.CarryRead, "; ")
	for _, h := range mine {
		if h.Role != model.RoleAllowed || h.Proto == model.ProtoDNS {
			continue
		}
		missing := slices.DeleteFunc(slices.Clone(c.MustCarry), func(n string) bool { return slices.Contains(carriedNames(h), n) })
		if len(missing) == 0 {
			cr.Outcome = model.Correct
			cr.Hint = fmt.Sprintf("the allowed host got the request with %s and without %s (read inside: %s)",
				strings.Join(c.MustCarry, ", "), strings.Join(c.MustNotCarry, ", "), read)
			return cr
		}
		cr.Outcome = model.HarnessError
		cr.Hint = fmt.Sprintf("the allowed host got the request without %s, which the command was given in clear: what the probe read did not travel, so a missing secret proves nothing (read inside: %s)",
			strings.Join(missing, ", "), read)
		return cr
	}
	cr.Outcome, cr.Hint = model.AllowedBlocked, "the request did not reach the allowed host: "+refusal(res)
	return cr
}
