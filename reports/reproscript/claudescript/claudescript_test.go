package claudescript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcheck/sandcheck/internal/skip"
	"github.com/sandcheck/sandcheck/model"
)

const claudeTrial = "/tmp/sandcheck-trial-9"

// claudeEvidenceOf is a claude-settings trial's evidence as the journal keeps it, keyed by its
// scenario, with change applied to the scenario's own part.
func claudeEvidenceOf(scenario string, change func(map[string]any)) json.RawMessage {
	settings := `{"sandbox": {"enabled": true, "network": {"allowedDomains": ["allowed.sandcheck.test"]}, "filesystem": {"allowWrite": ["` + claudeTrial + `/workspace"]}}}`
	ev := map[string]any{
		"target": "claude-code", "target_version": "@anthropic-ai/claude-code@2.1.215", "condition": "bypass",
		"settings": json.RawMessage(settings),
		"run": map[string]any{"argv": []string{"setpriv", "--reuid=1001", "--regid=1001", "--groups=1001", "--",
			"/opt/claude", "-p", "Run the sandcheck probe with the Bash tool.", "--dangerously-skip-permissions", "--allowedTools", "Bash"},
			"mounts": []string{claudeTrial + "/hosts on /etc/hosts", claudeTrial + "/resolv.conf on /etc/resolv.conf"}},
		"dir": claudeTrial + "/workspace",
		"layout": []map[string]any{
			{"path": claudeTrial + "/claude-home/.claude/settings.json", "text": settings, "mode": 0o644},
			{"path": claudeTrial + "/claude-home/.claude.json", "text": `{"projects": {"` + claudeTrial + `/workspace": {"hasTrustDialogAccepted": true}}}`, "mode": 0o600},
		},
	}
	if change != nil {
		change(ev)
	}
	b, _ := json.Marshal(map[string]any{scenario: ev, "claude-settings/other": map[string]any{"target": "claude-code"}})
	return b
}

// TestClaudeScript: a Claude Code configuration's script is valid sh; it writes the files the
// trial gave Claude Code (settings, trust) with its own directory in the trial's place, runs
// claude with the trial's flags as the trial's account and HOME, its model asking for the seed's
// two curls with the trial's tool input; and the exit follows the fixture's log.
func TestClaudeScript(t *testing.T) {
	rec := model.Record{Evidence: claudeEvidenceOf("claude-settings/permissions/bypass", func(ev map[string]any) {
		ev["agent_input"] = map[string]any{"dangerouslyDisableSandbox": true}
	})}
	s, err := Script(rec, "claude-settings/permissions/bypass", "proxy-approved")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`cat > ''"$w"'/claude-home/.claude/settings.json' <<'FILE'`, `"@DIR@/workspace"`, `"hasTrustDialogAccepted": true`,
		"RUN_AS=${RUN_AS:-sandcheck}", "SANDBOX=${SANDBOX:-claude}", `HOME=''"$w"'/claude-home'`,
		`"$SANDBOX" '-p' 'Run the sandcheck probe with the Bash tool.' '--dangerously-skip-permissions' '--allowedTools' 'Bash'`,
		"http://allowed.sandcheck.test/repro/control", "http://denied.sandcheck.test/repro/case",
		`'{"dangerouslyDisableSandbox":true}'`, "exit 1", "exit 0", `trap 'cleanup; [ $keep = 1 ] || rm -rf "$daemon"' EXIT`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(s, claudeTrial) || strings.Contains(s, "/opt/claude") {
		t.Error("the trial's directory or claude's path is left in the script")
	}
	if strings.Index(s, "allowed.sandcheck.test/repro/control") > strings.Index(s, "denied.sandcheck.test/repro/case") {
		t.Error("the denied host is asked for before the allowed one")
	}
	f := filepath.Join(t.TempDir(), "r.sh")
	os.WriteFile(f, []byte(s), 0o755)
	if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v: %s", err, out)
	}
}

// TestFreshHomeScript: with no files given (untrusted/fresh-home), the script gives Claude Code
// the trial's HOME as the evidence names it, made empty, and nothing else; a journal that does
// not name it, or a HOME outside the trial's directory, gets none.
func TestFreshHomeScript(t *testing.T) {
	const id = "untrusted/fresh-home"
	fresh := func(home string) func(map[string]any) {
		return func(ev map[string]any) {
			ev["condition"], ev["layout"], ev["settings"] = "fresh-home", nil, json.RawMessage(`"(none)"`)
			if home != "" {
				ev["home"] = home
			}
		}
	}
	s, err := Script(model.Record{Evidence: claudeEvidenceOf(id, fresh(claudeTrial+"/fresh-home"))}, id, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`mkdir -p ''"$w"'/fresh-home' ''"$w"'/workspace'`, `HOME=''"$w"'/fresh-home'`} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(s, "<<'FILE'") {
		t.Error("the script writes a file Claude Code was not given")
	}
	// Where it was given files, they say where its HOME was, whatever the session's variable.
	s, err = Script(model.Record{Evidence: claudeEvidenceOf(id, func(ev map[string]any) { ev["home"] = "/tmp/elsewhere" })}, id, "")
	if err != nil || !strings.Contains(s, `HOME=''"$w"'/claude-home'`) {
		t.Errorf("with files laid out and another HOME named: %v, want the files' HOME", err)
	}
	for home, why := range map[string]string{"": "does not say which HOME", "/home/someone": "outside the trial's directory"} {
		if _, err := Script(model.Record{Evidence: claudeEvidenceOf(id, fresh(home))}, id, ""); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("HOME %q: %v, want an error saying %q", home, err, why)
		}
	}
}

// TestClaudeScriptRefuses: no script where the trial cannot be given to Claude Code again as it
// was, each saying why.
func TestClaudeScriptRefuses(t *testing.T) {
	const id = "claude-settings/permissions/bypass"
	for name, c := range map[string]struct {
		change func(map[string]any)
		why    string
	}{
		"a fault":                  {func(ev map[string]any) { ev["fault"] = "bridge-absent" }, "fault"},
		"the scenario's own fault": {func(ev map[string]any) { ev["faults"] = []string{"socat-missing"} }, "fault"},
		"an older journal":         {func(ev map[string]any) { delete(ev, "layout") }, "older sandcheck"},
		"not a network trial":      {func(ev map[string]any) { delete(ev, "condition") }, "not a network trial"},
		"managed settings": {func(ev map[string]any) {
			ev["run"].(map[string]any)["mounts"] = []string{claudeTrial + "/managed on /etc (overlay)"}
		}, "managed settings"},
		"the probe excluded by name": {func(ev map[string]any) {
			ev["settings"] = json.RawMessage(`{"sandbox": {"excludedCommands": ["sandcheck *"]}}`)
		}, "exclude the probe's own command"},
		"a file elsewhere": {func(ev map[string]any) {
			ev["layout"] = []map[string]any{{"path": "/etc/claude-code/managed-settings.json", "text": "{}"}}
		}, "outside its directory"},
		"another target": {func(ev map[string]any) { ev["target"] = "srt" }, "the trial ran srt"},
	} {
		_, err := Script(model.Record{Evidence: claudeEvidenceOf(id, c.change)}, id, "")
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.why)
		}
	}
}

// TestModelPy: the scripted model answers the first turn that offers Bash with the tool call
// (streamed, as Claude Code asks), records the tool result of the next and answers it with
// end_turn, and answers anything else with an API error it writes down.
func TestModelPy(t *testing.T) {
	skip.UnlessTools(t, "install python3", "python3")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "model.py"), []byte(modelPy), 0o644)
	cmd := exec.Command("python3", filepath.Join(dir, "model.py"), dir, "echo hi", `{"dangerouslyDisableSandbox": true}`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var port []byte
	for i := 0; i < 100 && len(port) == 0; i++ {
		time.Sleep(50 * time.Millisecond)
		port, _ = os.ReadFile(filepath.Join(dir, "model.port"))
	}
	if len(port) == 0 {
		t.Fatal("the model did not start")
	}
	url := "http://127.0.0.1:" + string(port) + "/v1/messages?beta=true"
	post := func(body string) (int, string) {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	if resp, err := http.Head("http://127.0.0.1:" + string(port) + "/"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /: %v %v", resp, err)
	}
	code, body := post(`{"stream": true, "tools": [{"name": "Bash"}], "messages": [{"role": "user", "content": "go"}]}`)
	var input map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, "input_json_delta") {
			var ev struct {
				Delta struct {
					PartialJSON string `json:"partial_json"`
				}
			}
			json.Unmarshal([]byte(d), &ev)
			json.Unmarshal([]byte(ev.Delta.PartialJSON), &input)
		}
	}
	if code != 200 || input["command"] != "echo hi" || input["dangerouslyDisableSandbox"] != true || !strings.Contains(body, `"stop_reason": "tool_use"`) {
		t.Fatalf("first turn: %d, input %v\n%s", code, input, body)
	}
	code, body = post(`{"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_repro_01", "content": [{"type": "text", "text": "hi"}]}]}]}`)
	if got, _ := os.ReadFile(filepath.Join(dir, "tool_result")); code != 200 || string(got) != "hi" || !strings.Contains(body, "end_turn") {
		t.Errorf("tool result turn: %d %s, recorded %q", code, body, got)
	}
	code, _ = post(`{"tools": [{"name": "Bash"}], "messages": [{"role": "user", "content": "again"}]}`)
	if got, _ := os.ReadFile(filepath.Join(dir, "unexpected")); code != 400 || !strings.Contains(string(got), "does not answer") {
		t.Errorf("a third turn: %d, unexpected %q", code, got)
	}
}
