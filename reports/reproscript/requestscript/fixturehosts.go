package requestscript

import (
	"net/netip"
	"strconv"
	"strings"
)

// scriptAddrs are the addresses a script's fixture has as the trial's had them: the sandbox's
// host's loopback and the metadata address. Every other fixture address is the script's own.
var scriptAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("127.0.0.1"): true, netip.MustParseAddr("::1"): true, netip.MustParseAddr("169.254.169.254"): true,
}

// standsIn says whether the script's fixture stands in for host as the trial's did: a name its
// hosts file answers (whatever the case, one trailing dot aside), or an address it has as the
// trial's had it. An address in any spelling (decimal, hex, octal, short, bracketed, mapped, with
// a zone) is the trial's own, and so is a plain name only the trial's resolver answered: the
// script's request would reach nothing, and it would say "no bug" whatever the sandbox did. A
// host with other bytes (NUL, CR LF) is left to the sandbox, which may cut it to a name the
// hosts file answers.
func standsIn(host string, names []hostName) bool {
	if a, ok := literal(host); ok {
		return scriptAddrs[a.Unmap()]
	}
	if !validName.MatchString(host) {
		return true
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	for _, n := range names {
		if strings.ToLower(n.name) == h {
			return true
		}
	}
	return false
}

// literal reads host as an address the way a lenient resolver would: brackets and a zone
// dropped, IPv6, or IPv4 in one to four parts, each decimal, hex (0x) or octal (leading 0).
func literal(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v []uint64
	for _, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		v = append(v, n)
	}
	// The last part fills the bytes the others leave: a.b.c.d, a.b.cd, a.bcd, abcd.
	var ip uint64
	for i, n := range v[:len(v)-1] {
		if n > 0xff {
			return netip.Addr{}, false
		}
		ip |= n << (24 - 8*i)
	}
	last := v[len(v)-1]
	if last >= 1<<(8*(5-len(v))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}
