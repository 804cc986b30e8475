package directscript

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

func bwrapTrial(via, addr string) Trial {
	return Trial{Target: "bwrap", Version: "0.8.0", Dir: "/tmp/sandcheck-trial-1/workspace", Via: via, Addr: addr, Zone: "denied.sandcheck.test",
		Argv: []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--", "/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-net",
			"--bind", "/tmp/sandcheck-trial-1/workspace", "/tmp/sandcheck-trial-1/workspace", "--", "/usr/bin/sandcheck", parts.ProbeVerb, "/tmp/sandcheck-trial-1/spec.json"},
		Roles: map[netip.Addr]string{
			netip.MustParseAddr("198.19.7.3"): model.RoleDenied, netip.MustParseAddr("2001:2:0:7::3"): RoleDenied6,
			netip.MustParseAddr("198.19.7.1"): model.RoleSelf, netip.MustParseAddr("127.0.0.1"): model.RoleLoopback,
			netip.MustParseAddr("169.254.169.254"): model.RoleMetadata, netip.MustParseAddr("198.19.7.2"): model.RoleAllowed,
		}}
}

// TestScript: each way maps the trial's address onto the script's fixture by its role, and the
// script judges by the fixture's log line for that host: the same request without the sandbox
// must log it (else exit 2), inside it must not (else exit 1); the trial's command line runs with
// its directories the script's own.
func TestScript(t *testing.T) {
	for _, c := range []struct {
		via, addr, command, logged string
	}{
		{"direct", "198.19.7.3:80", `python3 -c "$direct" direct "$b.3:80"`, "^denied@80 "},
		{"direct", "[2001:2:0:7::3]:80", `python3 -c "$direct" direct "[$v6::3]:80"`, "^denied@80 "},
		{"direct", "198.19.7.1:80", `python3 -c "$direct" direct "$b.1:80"`, "^self@80 "},
		{"direct", "127.0.0.1:80", `python3 -c "$direct" direct "127.0.0.1:80"`, "^loopback@80 "},
		{"direct", "169.254.169.254:80", `python3 -c "$direct" direct "169.254.169.254:80"`, "^metadata@80 "},
		{"direct", "198.19.7.2:80", `python3 -c "$direct" direct "$b.2:80"`, "^allowed@80 "}, // around the proxy
		{"udp", "198.19.7.3:7", `python3 -c "$direct" udp "$b.3:7"`, "^denied@7/udp"},
		{"icmp", "198.19.7.3", `python3 -c "$direct" icmp "$b.3"`, "^denied@icmp"},
		{"uring-tcp", "198.19.7.3:80", `python3 -c "$uring" "tcp:$b.3:80" repro-case`, "^denied@80 "},
		{"dns-udp", "198.19.7.4:53", `python3 -c "$direct" dns-udp "$b.4:53" repro-case.denied.sandcheck.test`, "^resolver@53/udp"},
		{"dns-tcp", "198.19.7.4:53", `python3 -c "$direct" dns-tcp "$b.4:53" repro-case.denied.sandcheck.test`, "^resolver@53/tcp"},
	} {
		s, err := Script(bwrapTrial(c.via, c.addr), "bypass/other-egress/x", "")
		if err != nil {
			t.Errorf("%s %s: %v", c.via, c.addr, err)
			continue
		}
		for _, want := range []string{
			`"$SANDBOX" '--ro-bind' '/' '/' '--unshare-net' '--bind' ''"$w"'/workspace' ''"$w"'/workspace' '--' ` + c.command + " ) 2>&1 || true",
			"grep -q '" + c.logged + "' \"$w/log\" || { echo \"could not tell",
			"if grep -q '" + c.logged + "' \"$w/log\"; then echo \"BUG",
			"SANDBOX=${SANDBOX:-bwrap}\n",
			"set SANDBOX=/path/to/bwrap",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%s %s: the script lacks %q", c.via, c.addr, want)
			}
		}
	}
	for _, c := range []struct {
		name string
		t    Trial
		why  string
	}{
		{"claude-code", func() Trial { x := bwrapTrial("direct", "198.19.7.3:80"); x.Target = "claude-code"; return x }(), "not claude-code"},
		{"an address of no host", bwrapTrial("direct", "198.19.9.9:80"), "no host for"},
		{"UDP elsewhere", bwrapTrial("udp", "198.19.7.3:9"), "UDP port 7"},
		{"io_uring over IPv6", bwrapTrial("uring-tcp", "[2001:2:0:7::3]:80"), "no host for"},
		{"a zone with a quote", func() Trial { x := bwrapTrial("dns-udp", "198.19.7.4:53"); x.Zone = "a'b"; return x }(), "cannot write"},
		{"a fault of sandcheck's", func() Trial { x := bwrapTrial("direct", "198.19.7.3:80"); x.Broken.Fault = "bad-proxy"; return x }(), "sandcheck's own parts"},
	} {
		if _, err := Script(c.t, "bypass/other-egress/x", ""); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.why)
		}
	}
}

// TestSrtScript: srt gets the trial's settings in a file of the script's own and the request as
// its one command string, the programs from the script's files, an IPv6 address quoted for the
// shell inside.
func TestSrtScript(t *testing.T) {
	tr := bwrapTrial("direct", "[2001:2:0:7::3]:80")
	tr.Target, tr.Settings = "srt", []byte(`{"network": {"allowedDomains": []}, "filesystem": {"allowWrite": ["/tmp/sandcheck-trial-1/workspace"]}}`)
	tr.Argv = []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--", "/usr/bin/srt", "--settings", "/tmp/sandcheck-trial-1/srt-settings.json",
		"-c", "'/usr/bin/sandcheck' '" + parts.ProbeVerb + "' '/tmp/sandcheck-trial-1/spec.json'"}
	s, err := Script(tr, "bypass/policy-semantics/empty-list-direct", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"$SANDBOX" --settings "$w/settings.json" -c "python3 $w/direct.py direct '[$v6::3]:80'" ) 2>&1 || true`,
		`cat > "$w/settings.json" <<'SETTINGS'`,
		"SANDBOX=${SANDBOX:-srt}\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks %q", want)
		}
	}
	if strings.Contains(s, "/tmp/sandcheck-trial-1") {
		t.Error("the script names the trial's directory")
	}
}

// TestCodexScript: Codex's arguments, its policy among them, go to a file the script reads back,
// and the request runs after `--`, bounded as every Codex session of a script is.
func TestCodexScript(t *testing.T) {
	tr := bwrapTrial("udp", "198.19.7.3:7")
	tr.Target = "codex"
	tr.Argv = []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--", "/usr/bin/codex", "sandbox", "linux", "-c",
		"sandbox_workspace_write.network_access=true", "--", "/usr/bin/sandcheck", parts.ProbeVerb, "/tmp/sandcheck-trial-1/spec.json"}
	s, err := Script(tr, "bypass/other-egress/udp", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`printf '%s\n' 'sandbox_workspace_write.network_access=true' >> "$w/args"`,
		`timeout -k 5 "${CODEX_TIMEOUT:-60}" "$SANDBOX" "$@" -- python3 -c "$direct" udp "$b.3:7" ) 2>&1 || true`,
		"daemon=/tmp/codex-daemon-",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks %q", want)
		}
	}
}
