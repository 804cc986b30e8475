package format

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// hostileOutput is what a probe may legitimately capture: markup, fences, pipes and control
// characters. Every format must carry it as text.
const hostileOutput = "curl: (7) Failed to connect to localhost port 3128 <script>alert('x')</script> | ``` fence \x1b[31mred\x1b[0m & done"

// seedReport reproduces the seed bug: on WSL2 the proxy is often dead, sometimes not enforcing,
// rarely correct; the same sandbox on a native host is clean.
func seedReport(t *testing.T) *schema.Report {
	t.Helper()
	a, err := aggregate.New(aggregate.Options{SandcheckVersion: "v0.1.0-test", Now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	wsl := model.Cell{ID: "srt-wsl2", Target: "srt", Host: "wsl2"}
	native := model.Cell{ID: "srt-native", Target: "srt", Host: "native", Fault: ""}
	fp := json.RawMessage(`{"kernel":"6.6.87.2-microsoft-standard-WSL2","distro":"Ubuntu 24.04","wsl":{"version":"2.4.13","networking_mode":"nat"},"versions":{"bwrap":"0.9.0","socat":"1.8.0","node":"v22.1.0","srt":"0.0.66"},"sysctls":{"kernel.apparmor_restrict_unprivileged_userns":null},"proxy_env":{},"curlrc":"absent","git_proxy":"absent"}`)
	outcomes := []model.Outcome{}
	for i := 0; i < 6; i++ {
		outcomes = append(outcomes, model.ProxyDead)
	}
	outcomes = append(outcomes, model.NonEnforcing, model.NonEnforcing, model.Correct, model.HarnessError)
	for i, o := range outcomes {
		ev, _ := json.Marshal(map[string]any{"allowed": map[string]any{"channel": "curl", "stderr": hostileOutput, "exit": 7}, "listeners_3128": []string{}})
		r := model.Record{V: 1, RunID: "nightly-1", Cell: wsl, Trial: i, Outcome: o, Evidence: ev, DurationMS: 1500,
			Hint: fmt.Sprintf("bridge not listening on 127.0.0.1:3128 | trial %d", i)}
		if i == 0 {
			r.HostFP = fp
		}
		if o == model.HarnessError {
			r.Error = "SANDBOX-RAN marker missing"
		} else {
			r.Scenarios = []model.Scenario{
				{Name: "network/seed", Outcome: o, Pass: o == model.Correct},
				{Name: "network/ip-literal", Outcome: o, Pass: o == model.Correct},
			}
			if o == model.NonEnforcing {
				r.Scenarios[0].Breaches = []model.Breach{{Outcome: o, What: "http: denied.sandcheck.test reached"}}
				r.Scenarios[1].Breaches = []model.Breach{{Outcome: o, What: "direct: 198.18.0.3 reached"}}
			}
		}
		a.Add(r)
	}
	for i := 0; i < 20; i++ {
		a.Add(model.Record{V: 1, RunID: "nightly-1", Cell: native, Trial: i, Outcome: model.Correct, DurationMS: 900,
			Scenarios: []model.Scenario{{Name: "network/seed", Outcome: model.Correct, Pass: true}, {Name: "network/ip-literal", Outcome: model.Correct, Pass: true}, {Name: "fs/write-outside", Outcome: model.Correct, Pass: true}}})
	}
	return a.Report()
}

var seedOpts = Options{
	Settings: `{"sandbox": {"enabled": true, "failIfUnavailable": true, "network": {"allowedDomains": ["allowed.sandcheck.test"]}}}`,
	Repro:    "sandcheck run --matrix matrix.yaml --trials 10",
}
