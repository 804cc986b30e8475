package trial

import (
	"fmt"
	"net/netip"

	"github.com/sandcheck/sandcheck/fixtures/openproxy"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/harness"
)

// startParent stands up the trial's parent proxy (Plan.Parent) and returns its URL. It enforces
// nothing, as a company's or a local forwarding proxy enforces nothing the sandbox promised: it
// logs each request it is asked for, with the path of the request it carries, so that a case's
// request is known to have come through it, and forwards it from the sandbox's host, resolving
// fixture names as that host does, loopback and all. What it forwards is logged again where it
// arrives, and judged there. The caller closes it.
func startParent(t *harness.Trial) (string, func(), error) {
	h := t.Hosts
	p, err := openproxy.StartWith(openproxy.Options{Listen: h.Listen, Dial: h.Dial, Lookup: h.Lookup,
		OnRequest: func(method, target, path, from string) {
			h.Record(model.Hit{Role: model.RoleParent, Proto: model.ProtoHTTP, Path: path, Host: model.RoleParent, From: from, Detail: method + " " + target})
		}})
	if err != nil {
		return "", nil, fmt.Errorf("parent proxy: %w", err)
	}
	return "http://" + netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(p.HTTPPort)).String(), p.Close, nil
}
