package model

// Channels a probe can try. Each is one way a program inside a sandbox could reach a host.
const (
	ChanHTTP   = "http"   // plain HTTP through the proxy named in the environment (curl)
	ChanHTTPS  = "https"  // HTTPS through the proxy: CONNECT tunnel (curl --cacert)
	ChanSOCKS  = "socks"  // through the SOCKS proxy named in the environment (curl --proxy socks5h://)
	ChanDirect = "direct" // raw TCP to the host's address, ignoring any proxy
	ChanDNS    = "dns"    // a UDP DNS query straight to the fixture resolver
)

// AllChannels in the order the probe tries them. The first request is allowed/http, as in the
// seed's repro; faults that race the proxy's start-up synchronise on it.
var AllChannels = []string{ChanHTTP, ChanHTTPS, ChanSOCKS, ChanDirect, ChanDNS}

// DeadCallerProxy is the proxy the untrusted family's proxy-env-dead condition leaves in the
// caller's environment, in each of CallerProxyVars: a loopback port nothing listens on. Its
// reproducer sets the same.
const DeadCallerProxy = "http://127.0.0.1:9"

// CallerProxyVars are the variables a caller's proxy is given in, as curl and the sandboxes read
// them.
var CallerProxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}
