package crafted

import (
	"strings"

	"github.com/miekg/dns"
)

// DNSName is the name a DNS request asks for under zone: the case and the trial in its first
// labels, as data leaving in a query would be, so the resolver's log names the case.
func DNSName(nonce, id, zone string) string {
	return strings.ReplaceAll(id, ".", "-") + "." + nonce + "." + zone
}

// dnsQuery asks the resolver at r.Addr for the TXT records of the case's name: a reply of any
// kind means the query reached a resolver outside.
func dnsQuery(s spec, r Request, res *Result) {
	network := "udp"
	if r.Via == ViaDNSTCP {
		network = "tcp"
	}
	q := new(dns.Msg).SetQuestion(dns.Fqdn(DNSName(s.Nonce, r.ID, r.Host)), dns.TypeTXT)
	reply, _, err := (&dns.Client{Net: network, Timeout: s.Timeout}).Exchange(q, r.Addr)
	if err != nil {
		fail(res, "query", err)
		return
	}
	res.Connected, res.Body = true, dns.RcodeToString[reply.Rcode]
}
