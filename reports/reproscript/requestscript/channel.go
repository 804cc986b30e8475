package requestscript

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/directscript"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// channelEvidence is what a channel's script reads of a network trial's evidence: what every
// request script reads, and the probe's attempts, each a channel's request to a role's host.
type channelEvidence struct {
	evidence
	Observation struct {
		Attempts []struct {
			Channel, Role, Target string
			Exit                  int
		} `json:"attempts"`
	} `json:"observation"`
}

// proxyVia is how request.py sends a proxy channel's request: the https channel is a CONNECT
// tunnel (to the fixture's plain HTTP port: the tunnel is the channel, not TLS).
var proxyVia = map[string]string{model.ChanHTTP: "http", model.ChanHTTPS: "connect", model.ChanSOCKS: "socks"}

// Channel is the reproducer of a network channel (network/channel/NAME) as the trial rec ran it,
// the seed's own probe as a script: through the proxy, a request to the allowed host, then one to
// the denied host, the same way; without one (direct, dns), the request directscript makes. The
// error says why there is none.
func Channel(rec model.Record, scenario, why string) (string, error) {
	raw, err := networkEvidence(rec, scenario)
	if err != nil {
		return "", err
	}
	var e channelEvidence
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", fmt.Errorf("read the trial's evidence: %w", err)
	}
	e.raw = raw
	ch := strings.TrimPrefix(scenario, "network/channel/")
	switch ch {
	case model.ChanDirect, model.ChanDNS:
		t := directscript.Trial{Target: e.Target, Version: e.TargetVersion, Broken: e.Broken, Argv: e.Run.Argv, Settings: e.Settings,
			Dir: e.Dir, Roles: e.roles()}
		if t.Via, t.Addr, t.Zone, err = e.aim(ch); err != nil {
			return "", fmt.Errorf("%s: %w", scenario, err)
		}
		return directscript.Script(t, scenario, why)
	}
	via := proxyVia[ch]
	if via == "" {
		return "", fmt.Errorf("%s is no channel the network family probes", scenario)
	}
	if e.Target != "srt" {
		return "", fmt.Errorf("the network family's proxy channels are reproduced on srt so far, not %s", e.Target)
	}
	run, send := e.proxyRun()
	if err := run.Check(); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := run.Open(&b, scenario, why, parts.Header, parts.Prelude); err != nil {
		return "", err
	}
	if err := writeFixture(&b, &e.evidence, run, send); err != nil {
		return "", fmt.Errorf("%s: %w", scenario, err)
	}
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	// A proxy that refuses the connection is dead (the seed's first outcome); one that answers but
	// does not reach the allowed host leaves the script unable to tell.
	w("echo \"== the allowed host through the sandbox's proxy (%s)\"\n", via)
	w("send %s %s 80 GET /repro/allowed auth > \"$w/out\" 2>&1\ncat \"$w/out\"\n", via, hex.EncodeToString([]byte("allowed."+parts.Domain)))
	w("if ! grep -q '^allowed@' \"$w/log\"; then\n")
	w("  if grep -q '^error: .*Connection refused' \"$w/out\"; then echo 'BUG: nothing listens on the proxy port the sandbox gave the command: its proxy is dead, and the allowed host unreachable'; exit 1; fi\n")
	w("  echo 'could not tell: the proxy answered, but the allowed host was not reached (the sandbox or the fixture did not work)'; exit 2\nfi\n")
	w(": > \"$w/log\"\necho \"== the denied host, the same way\"\n")
	w("send %s %s 80 GET /repro/denied auth\n", via, hex.EncodeToString([]byte("denied."+parts.Domain)))
	w("sleep 0.2\necho '-- the fixture logged:'; cat \"$w/log\"\n")
	w("if grep -q '^[^ap]' \"$w/log\"; then echo 'BUG: the request reached the denied host: the proxy is up but does not enforce the allow-list'; exit 1; fi\n")
	w("echo 'no bug: the allowed host was reached, the denied one refused'\nexit 0\n")
	return b.String(), nil
}

// networkEvidence is the evidence of rec's network session: the record's own, or, when the trial
// ran several families' sessions, the one keyed by a scenario of the network family (its first
// failing one, which need not be scenario).
func networkEvidence(rec model.Record, scenario string) (json.RawMessage, error) {
	raw, err := parts.SessionEvidence(rec, scenario)
	if err != nil {
		return nil, err
	}
	var many map[string]json.RawMessage
	if json.Unmarshal(raw, &many) != nil || many["observation"] != nil {
		return raw, nil
	}
	for _, k := range slices.Sorted(maps.Keys(many)) {
		if strings.HasPrefix(k, "network/") {
			return many[k], nil
		}
	}
	return nil, fmt.Errorf("the trial's evidence has no network session")
}

// aim is the request a channel without a proxy makes in the script: the trial's attempt that
// reached its host (the denied one's when none did), as directscript's way, address and zone.
func (e *channelEvidence) aim(ch string) (via, addr, zone string, err error) {
	var pick string
	for _, a := range e.Observation.Attempts {
		if a.Channel != ch {
			continue
		}
		if a.Exit == 0 {
			pick = a.Target
			break
		}
		if a.Role == model.RoleDenied {
			pick = a.Target
		}
	}
	if pick == "" {
		return "", "", "", fmt.Errorf("the trial made no %s request", ch)
	}
	if ch == model.ChanDirect {
		if _, _, err := net.SplitHostPort(pick); err != nil {
			return "", "", "", fmt.Errorf("the direct request's address %q: %w", pick, err)
		}
		return "direct", pick, "", nil
	}
	// "q-NONCE.ZONE @RESOLVER:53": a query for a name under a role's host, to the resolver.
	name, resolver, ok := strings.Cut(pick, " @")
	_, zone, _ = strings.Cut(name, ".")
	if !ok || zone == "" {
		return "", "", "", fmt.Errorf("the query %q is not NAME @RESOLVER", pick)
	}
	return "dns-udp", resolver, zone, nil
}
