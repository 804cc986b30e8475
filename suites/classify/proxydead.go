package classify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// proxyDeadCause names the layer that died, from what was listening inside the sandbox and in
// what order the requests failed.
func proxyDeadCause(obs *probe.Observation) string {
	ports := proxyPorts(obs.ProxyEnv)
	listening := map[int]bool{}
	for _, l := range obs.Listeners {
		listening[l.Port] = true
	}
	var missing, present []string
	for _, p := range ports {
		if listening[p] {
			present = append(present, fmt.Sprint(p))
		} else {
			missing = append(missing, fmt.Sprint(p))
		}
	}
	// The first request through the proxy decides whether it came up late: refused (nothing
	// listening yet) or no reply within its timeout (the relay accepted, the bridge or proxy
	// behind it was not ready), then a later request reached the proxy.
	var refusedFirst, emptyFirst, reachedLater, emptyAfterOK bool
	sawOK, first := false, true
	for _, a := range obs.Attempts {
		if a.Channel == model.ChanDirect || a.Channel == model.ChanDNS || a.Skipped != "" {
			continue
		}
		v, _ := VerdictOf(a, nil)
		ok := a.Status != 0 && v != ProxyRefused && v != ProxyEmpty
		if first {
			refusedFirst, emptyFirst, first = v == ProxyRefused, v == ProxyEmpty, false
		} else if ok && (refusedFirst || emptyFirst) {
			reachedLater = true
		}
		if sawOK && v == ProxyEmpty {
			emptyAfterOK = true
		}
		if ok {
			sawOK = true
		}
	}
	switch {
	case len(ports) == 0:
		return "no proxy in the environment, yet requests failed at a proxy"
	case refusedFirst && reachedLater:
		return "proxy came up late: the first request was refused, later ones reached the proxy"
	case emptyFirst && reachedLater:
		return "proxy answered late: the relay accepted the first request but no reply came within its timeout; later ones reached the proxy"
	case len(missing) > 0 && len(present) == 0:
		return fmt.Sprintf("in-sandbox bridge not listening on 127.0.0.1:%s; proxy env set but nothing behind it", strings.Join(missing, ","))
	case emptyAfterOK:
		return fmt.Sprintf("host-side bridge died mid-session: the in-sandbox relay on :%s accepted, then closed with no reply", strings.Join(present, ","))
	case len(present) > 0:
		return fmt.Sprintf("in-sandbox relay on :%s accepts but nothing answers behind it (host-side bridge or proxy gone)", strings.Join(present, ","))
	}
	return "proxy unreachable"
}

// proxyPorts lists the loopback ports the proxy environment points at.
func proxyPorts(env map[string]string) []int {
	set := map[int]bool{}
	for k, v := range env {
		if strings.EqualFold(k, "no_proxy") {
			continue
		}
		if i := strings.LastIndexByte(v, ':'); i >= 0 {
			var p int
			if _, err := fmt.Sscanf(strings.TrimRight(v[i+1:], "/"), "%d", &p); err == nil && p > 0 {
				set[p] = true
			}
		}
	}
	var out []int
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}
