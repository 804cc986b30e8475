package srtrun

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestUnanchoredPatternRelocated: a read-denied pattern that spells the trial's directory with a
// wildcard in its first element (bypass/globs/unanchored) becomes the script's own directory
// spelled the same way, which the script works out when it runs.
func TestUnanchoredPatternRelocated(t *testing.T) {
	settings := json.RawMessage(`{"filesystem":{"denyRead":["/tmp/sandcheck-trial-7/fakehome/proj/sub/vault/*.key","/tm?/sandcheck-trial-7/fakehome/proj/sub/keys/secret.pem"]}}`)
	got, err := Relocate(settings, "/tmp/sandcheck-trial-7")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"@DIR@/fakehome/proj/sub/vault/*.key"`) || !strings.Contains(got, `"@DIR?@/fakehome/proj/sub/keys/secret.pem"`) {
		t.Fatalf("relocated: %s", got)
	}
	var b strings.Builder
	run := Run{Target: "srt", Version: "0.0.83", Settings: settings, Argv: []string{"/opt/srt", "--settings", "/tmp/sandcheck-trial-7/s.json", "-c", "x"}}
	if err := run.Open(&b, "bypass/globs/unanchored", "", "", `w=/tmp/repro.AbC123; mkdir -p "$w"; trap 'rm -rf "$w"' EXIT`+"\n"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", b.String()+`cat "$w/settings.json"`).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), `"/tm?/repro.AbC123/fakehome/proj/sub/keys/secret.pem"`) || !strings.Contains(string(out), `"/tmp/repro.AbC123/fakehome/proj/sub/vault/*.key"`) {
		t.Fatalf("the script's settings:\n%s", out)
	}
}

// TestProxyStandIn: a trial whose fault stood a proxy in for srt's (fault_proxy) is reproduced only
// by a proxy request's script (Proxy), which keeps the settings' proxy ports, asks the caller for
// PROXY, and starts it on those ports; any other script refuses it, as it refuses proxy ports.
func TestProxyStandIn(t *testing.T) {
	settings := json.RawMessage(`{"network":{"allowedDomains":["allowed.sandcheck.test"],"httpProxyPort":41001,"socksProxyPort":41002}}`)
	run := Run{Target: "srt", Version: "0.0.83", Settings: settings, Argv: []string{"/opt/srt", "--settings", "/tmp/sandcheck-trial-7/s.json", "-c", "x"}}
	run.Fault, run.FaultProxy = "bad-proxy", true
	if err := run.Check(); err == nil {
		t.Error("a script that runs no PROXY took the stand-in proxy's trial")
	}
	var b strings.Builder
	if err := run.Open(&b, "bypass/ports/other-port-http", "", "", ""); err == nil {
		t.Error("a script that runs no PROXY kept the stand-in proxy's ports")
	}
	run.Proxy = true
	if err := run.Check(); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := run.Open(&b, "bypass/ports/other-port-http", "", "", ""); err != nil {
		t.Fatal(err)
	}
	if err := run.StartProxy(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"httpProxyPort": 41001`, "stood a proxy of sandcheck's in", `[ -n "$PROXY" ] ||`, `exec $PROXY`, "41001 41002"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", b.String()).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	run.FaultProxy = false
	b.Reset()
	if err := run.StartProxy(&b); err != nil || b.Len() != 0 {
		t.Errorf("a trial without a stand-in proxy: %v, %q", err, b.String())
	}
}
