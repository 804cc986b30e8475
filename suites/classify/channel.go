package classify

// The per-channel rules on the client's verdicts alone, once the server-side evidence and the
// client/server cross-check (network.go, evidence.go) have found nothing to say.

import (
	"cmp"
	"fmt"

	"github.com/sandcheck/sandcheck/model"
)

// decideChannel classifies one channel from its allowed and denied verdicts.
func decideChannel(ch string, mustReach bool, al Verdict, ald string, de Verdict, ded string) (model.Outcome, string) {
	if de == Reached {
		return model.NonEnforcing, "denied host reached (" + ded + ")"
	}
	if al == Skipped && de == Skipped {
		return model.NotApplicable, ald
	}
	dead := func(v Verdict) bool { return v == ProxyRefused || v == ProxyEmpty }
	if ch == model.ChanDirect || ch == model.ChanDNS {
		if !mustReach {
			// A way out that the policy does not offer: blocked is correct; reaching even the
			// allowed host means the namespace is not isolated.
			if al == Reached {
				return model.NonEnforcing, "allowed host reachable without the proxy: network namespace not isolated (" + ald + ")"
			}
			if de == NoRoute && (al == NoRoute || al == Skipped) {
				return model.Correct, ""
			}
			return model.HarnessError, fmt.Sprintf("unexpected: allowed %s (%s), denied %s (%s)", al, ald, de, ded)
		}
	}
	switch {
	case dead(al) || dead(de):
		return model.ProxyDead, deadHint(al, ald, de, ded)
	case al == PolicyBlocked && mustReach:
		return model.AllowedBlocked, "allowed host refused by policy: " + ald
	case al == ProxyError && mustReach:
		return model.AllowedBlocked, "proxy failed the allowed host: " + ald
	case (al == Reached || !mustReach) && (de == PolicyBlocked || de == NoRoute):
		return model.Correct, ""
	}
	return model.HarnessError, fmt.Sprintf("unexpected: allowed %s (%s), denied %s (%s)", al, ald, de, ded)
}

// decideDenyAll classifies one channel of a sandbox that allows no network at all: any token
// coming back is egress; any way of not getting through (no route, nothing listening on a proxy
// port the environment names, a refusal) is what such a sandbox promises.
func decideDenyAll(al Verdict, ald string, de Verdict, ded string) (model.Outcome, string) {
	switch {
	case de == Reached:
		return model.NonEnforcing, "denied host reached (" + ded + ")"
	case al == Reached:
		return model.NonEnforcing, "allowed host reached although the sandbox denies all network (" + ald + ")"
	case al == Skipped && de == Skipped:
		return model.NotApplicable, ald
	}
	blocked := func(v Verdict) bool {
		switch v {
		case NoRoute, ProxyRefused, ProxyEmpty, PolicyBlocked, ProxyError, Skipped:
			return true
		}
		return false
	}
	if blocked(al) && blocked(de) {
		return model.Correct, ""
	}
	return model.HarnessError, fmt.Sprintf("unexpected: allowed %s (%s), denied %s (%s)", al, ald, de, ded)
}

func deadHint(al Verdict, ald string, de Verdict, ded string) string {
	switch {
	case al == ProxyRefused || de == ProxyRefused:
		return "connection refused at the proxy: " + cmp.Or(pick(al, ald, ProxyRefused), pick(de, ded, ProxyRefused))
	default:
		return "proxy accepted but replied nothing: " + cmp.Or(pick(al, ald, ProxyEmpty), pick(de, ded, ProxyEmpty))
	}
}

func pick(v Verdict, d string, want Verdict) string {
	if v == want {
		return d
	}
	return ""
}
