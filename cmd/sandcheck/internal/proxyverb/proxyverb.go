// Package proxyverb is the sandcheck binary's hidden verb that runs, in the foreground, a proxy
// the faults stand in for srt's, on the proxy ports of an srt settings file: the allow-list proxy
// of bad-proxy, enforcing the file's lists correctly but for the bugs chosen, or with --open the
// proxy of open-proxy, which enforces nothing:
//
//	sandcheck __sandcheck_bad_proxy [--bug all | --open] SETTINGS
//
// It is what e2e gives those faults' findings' reproducers as their PROXY (with the bugs, or
// open, a script shows the finding; with none, it does not). Hidden: a maintainer gives such a
// script their own proxy.
package proxyverb

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sandcheck/sandcheck/fixtures/openproxy"
	"github.com/sandcheck/sandcheck/fixtures/proxywire"
	"github.com/sandcheck/sandcheck/suites/bypass/badproxy"
	"github.com/sandcheck/sandcheck/targets"
)

// Verb is the word after the binary that runs the proxy.
const Verb = "__sandcheck_bad_proxy"

// MaybeRun runs the verb and exits when the command line names it.
func MaybeRun() {
	if len(os.Args) > 1 && os.Args[1] == Verb {
		os.Exit(runBadProxy(os.Args[2:], os.Stderr))
	}
}

func runBadProxy(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(Verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	bug := fs.String("bug", "all", "the bugs, joined by + (none: a proxy without them)")
	open := fs.Bool("open", false, "a proxy that enforces nothing, for open-proxy")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintf(stderr, "usage: sandcheck %s [--bug all | --open] SETTINGS\n", Verb)
		return 2
	}
	bugs, err := badproxy.ParseBugs(*bug)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck %s: --bug: %v\n", Verb, err)
		return 2
	}
	pol, err := readProxySettings(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck %s: %v\n", Verb, err)
		return 2
	}
	ports := []int{pol.http, pol.socks} // proxywire opens the HTTP listener first
	listen := func(network, _ string) (net.Listener, error) {
		port := ports[0]
		ports = ports[1:]
		return net.Listen(network, fmt.Sprintf("127.0.0.1:%d", port))
	}
	var served *proxywire.Listeners
	what := fmt.Sprintf("bugs %q", *bug)
	if *open {
		p, err := openproxy.StartWith(openproxy.Options{Listen: listen, Lookup: lookup})
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck %s: %v\n", Verb, err)
			return 1
		}
		served, what = p.Listeners, "open"
	} else {
		p, err := badproxy.Start(badproxy.Options{Bugs: bugs, Listen: listen, Lookup: lookup, Resolver: systemResolver(), Own: ownAddrs()})
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck %s: %v\n", Verb, err)
			return 1
		}
		p.SetPolicy(pol.allowed, pol.denied)
		served = p.Listeners
	}
	fmt.Fprintf(stderr, "sandcheck %s: serving http=127.0.0.1:%d socks=127.0.0.1:%d, %s\n", Verb, served.HTTPPort, served.SOCKSPort, what)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	<-sig
	served.Close()
	return 0
}

// proxySettings are what the proxy reads of srt's settings: its ports and its lists.
type proxySettings struct {
	http, socks     int
	allowed, denied []string
}

func readProxySettings(path string) (proxySettings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return proxySettings{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return proxySettings{}, fmt.Errorf("%s: %w", path, err)
	}
	n := targets.SettingsObject(m, "network")
	h, _ := n["httpProxyPort"].(float64)
	s, _ := n["socksProxyPort"].(float64)
	if h <= 0 || s <= 0 {
		return proxySettings{}, fmt.Errorf("%s: network.httpProxyPort and network.socksProxyPort: want two ports", path)
	}
	return proxySettings{http: int(h), socks: int(s), allowed: targets.SettingsStrings(n["allowedDomains"]), denied: targets.SettingsStrings(n["deniedDomains"])}, nil
}

// lookup resolves a name as this host does (its hosts file first), an IPv4 address preferred.
func lookup(name string) (netip.Addr, bool) {
	addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", name)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, false
	}
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), true
		}
	}
	return addrs[0], true
}

// systemResolver is the first nameserver of /etc/resolv.conf, port 53 (zero when none).
func systemResolver() netip.AddrPort {
	f, err := os.Open("/etc/resolv.conf")
	if err != nil {
		return netip.AddrPort{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "nameserver" {
			if a, err := netip.ParseAddr(fields[1]); err == nil {
				return netip.AddrPortFrom(a, 53)
			}
		}
	}
	return netip.AddrPort{}
}

// ownAddrs are this host's interface addresses.
func ownAddrs() []netip.Addr {
	ifs, _ := net.InterfaceAddrs()
	var out []netip.Addr
	for _, a := range ifs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}
