package codex

import (
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/fixtures/scriptedmodel"
	"github.com/sandcheck/sandcheck/targets"
)

// What Codex 0.171's exec_command hands back: a header, then the command's output.
func TestInterpretExec(t *testing.T) {
	ok := scriptedmodel.Report{
		Requests: []scriptedmodel.Request{{Kind: scriptedmodel.KindFirst}, {Kind: scriptedmodel.KindToolResult}},
		Result: &scriptedmodel.ToolResult{Content: "Chunk ID: 59d428\nWall time: 0.0000 seconds\nProcess exited with code 3\n" +
			"Original token count: 27\nOutput:\nFRAME line 1\nOutput:\nline 2\n"}}
	r := InterpretExec(ok)
	if !r.Ran || r.Exit != 3 || string(r.Output) != "FRAME line 1\nOutput:\nline 2\n" || len(r.Trouble) != 0 {
		t.Errorf("ran: %+v output %q", r, r.Output)
	}
	// A command Codex stopped (its proxy refused a request): no status, Codex's words kept.
	refused := scriptedmodel.Report{Result: &scriptedmodel.ToolResult{Content: `exec_command failed: ProcessFailed { message: "Network access to \"denied.sandcheck.test\" was blocked" }`}}
	if r := InterpretExec(refused); !r.Ran || !r.Failed || r.Exit == 0 || !strings.Contains(strings.Join(r.Notes, "\n"), "ProcessFailed") {
		t.Errorf("refused: %+v", r)
	}
	// A request the script did not expect is harness trouble naming it; no result, not ran.
	odd := scriptedmodel.Report{Unexpected: []string{"GET /v1/models: endpoint GET /v1/models is not scripted"}}
	if r := InterpretExec(odd); r.Ran || len(r.Trouble) != 1 || !strings.Contains(r.Trouble[0], "/v1/models") {
		t.Errorf("unexpected: %+v", r)
	}
	cut := scriptedmodel.Report{Result: &scriptedmodel.ToolResult{Content: "Chunk ID: 1\nProcess exited with code 0\nOutput:\nhead\n…1200 tokens truncated…\ntail"}}
	if r := InterpretExec(cut); len(r.Trouble) != 1 || !strings.Contains(r.Trouble[0], "cut") {
		t.Errorf("cut: %+v", r)
	}
}

// The agent's modes: known names only, each with what it claims.
func TestExecModes(t *testing.T) {
	if err := targets.CheckSettings(ExecName, map[string]any{"mode": "yolo"}); err == nil || !strings.Contains(err.Error(), "settings.mode") {
		t.Errorf("mode yolo: %v", err)
	}
	for _, m := range ExecModes {
		if _, err := execMode(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}
