package reproscript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
	"github.com/sandcheck/sandcheck/reports/reproscript/parts/scripttest"
)

// networkTrial is a network trial's evidence of srt under fault, kept as a trial that ran the
// bypass family's session too keeps it: each family's under the first scenario it failed.
func networkTrial(fault string, tools ...string) model.Record {
	attempt := func(ch, role, target string, exit int) map[string]any {
		return map[string]any{"channel": ch, "role": role, "target": target, "exit": exit}
	}
	ev := map[string]any{
		"target": "srt", "target_version": "@anthropic-ai/sandbox-runtime@0.0.83", "fault": fault, "fault_tools": tools,
		"allowed": map[string]any{"ip": "198.18.15.10"}, "denied": map[string]any{"ip": "198.18.15.11"},
		"settings": map[string]any{"filesystem": map[string]any{"allowWrite": []string{"/tmp/sandcheck-trial-9/workspace"}, "denyRead": []string{}, "denyWrite": []string{}},
			"network": map[string]any{"allowedDomains": []string{"allowed.sandcheck.test"}, "deniedDomains": []string{}}},
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/srt", "--settings", "/tmp/sandcheck-trial-9/srt-settings.json", "-c", "'/opt/sandcheck' '" + parts.ProbeVerb + "' 'x'"}},
		"dir": "/tmp/sandcheck-trial-9/workspace",
		"observation": map[string]any{"attempts": []any{
			attempt("http", "allowed", "http://allowed.sandcheck.test/http/n", 7),
			attempt("direct", "allowed", "198.18.15.10:80", 0),
			attempt("direct", "denied", "198.18.15.11:80", 1),
			attempt("dns", "allowed", "q-n.allowed.sandcheck.test @198.18.15.12:53", 1),
			attempt("dns", "denied", "q-n.denied.sandcheck.test @198.18.15.12:53", 1),
		}},
	}
	b, _ := json.Marshal(map[string]any{"network/channel/direct": ev, "bypass/policy-semantics/empty-list-direct": map[string]any{}})
	return model.Record{Cell: model.Cell{Target: "srt"}, Evidence: b}
}

// TestChannelScript (issue 31): a network channel's finding gets the seed's probe as a script:
// through the proxy, the allowed host and then the denied one, the same way (the https channel a
// CONNECT tunnel); without one, the request that reached its host in the trial (the denied
// host's when none did). The network session is found whichever scenario keys it; a fault's
// finding that is not the broken tools' gets none.
func TestChannelScript(t *testing.T) {
	rec := networkTrial("bridge-absent", "socat")
	for ch, wants := range map[string][]string{
		"http":   {"send http " + hexOf("allowed.sandcheck.test") + " 80 GET /repro/allowed auth", "send http " + hexOf("denied.sandcheck.test") + " 80 GET /repro/denied auth", "its proxy is dead"},
		"https":  {"send connect " + hexOf("allowed.sandcheck.test") + " 80 GET /repro/allowed auth", "send connect " + hexOf("denied.sandcheck.test")},
		"socks":  {"send socks " + hexOf("allowed.sandcheck.test") + " 80 GET /repro/allowed auth"},
		"direct": {"python3 $w/direct.py direct '$b.2:80'", "the allowed host, around the proxy"},
		"dns":    {"python3 $w/direct.py dns-udp '$b.4:53' repro-case.denied.sandcheck.test"},
	} {
		s, err := Script(rec, "network/channel/"+ch, "")
		if err != nil {
			t.Errorf("%s: %v", ch, err)
			continue
		}
		scripttest.Check(t, s, "/tmp/sandcheck-trial-9", append(wants, "sandcheck's fault bridge-absent", `"@DIR@/workspace"`)...)
	}
	if _, err := Script(networkTrial("bridge-mid"), "network/channel/http", ""); err == nil || !strings.Contains(err.Error(), "fault") {
		t.Errorf("a fault that synchronises with the probe: %v, want no script, saying why", err)
	}
}

// TestChannelScriptDecides: the proxy channels' script run with a stand-in for srt that gives the
// command a proxy nothing listens on exits 1, naming a dead proxy.
func TestChannelScriptDecides(t *testing.T) {
	skip.UnlessRoot(t, "the script makes network namespaces and runs the sandbox as another account")
	skip.UnlessTools(t, "apt-get install iproute2 util-linux python3", "ip", "setpriv", "python3")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	dead := filepath.Join(dir, "dead-proxy-srt")
	os.WriteFile(dead, []byte("#!/bin/sh\n# --settings FILE -c CMD: the command, its proxy a port nothing listens on\n"+
		"export HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=socks5h://127.0.0.1:9\nexec sh -c \"$4\"\n"), 0o755)
	for _, ch := range []string{"http", "socks"} {
		f, _ := scriptFile(t, networkTrial(""), "network/channel/"+ch, "")
		if code, out := scripttest.Run(f, dead); code != 1 || !strings.Contains(out, "its proxy is dead") {
			t.Errorf("%s with a dead proxy: exit %d, want 1\n%s", ch, code, out)
		}
	}
}
