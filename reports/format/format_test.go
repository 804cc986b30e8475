package format

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/reports/format/htmlpage"
	"github.com/sandcheck/sandcheck/reports/format/junit"
	"github.com/sandcheck/sandcheck/reports/format/markdown"
	"github.com/sandcheck/sandcheck/reports/schema"
)

func TestJSONRoundTripAndRequiredKeys(t *testing.T) {
	rep := seedReport(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	back, err := schema.Decode(bytes.NewReader(buf.Bytes()), "report.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != len(rep.Cells) || back.Cells[3].Failures != rep.Cells[3].Failures {
		t.Fatal("round trip lost rows")
	}
	// The contract, checked on the raw JSON rather than our own structs.
	var raw map[string]any
	json.Unmarshal(buf.Bytes(), &raw)
	for _, k := range []string{"schema_version", "generated_at", "sandcheck_version", "hosts", "cells"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	cell := raw["cells"].([]any)[0].(map[string]any)
	for _, k := range []string{"target", "host", "scenario", "fault", "trials", "outcomes", "failure_rate", "ci95", "clopper_pearson", "rule_of_three", "examples"} {
		if _, ok := cell[k]; !ok {
			t.Errorf("cell key %q missing", k)
		}
	}
	if ci := cell["ci95"].([]any); len(ci) != 2 {
		t.Errorf("ci95 = %v, want [low, high]", ci)
	}
	if _, err := schema.Decode(strings.NewReader(`{"schema_version": 99}`), "x"); err == nil {
		t.Error("a newer schema must be refused")
	}
	if _, err := schema.Decode(strings.NewReader(`{"cells": []}`), "x"); err == nil {
		t.Error("a file without schema_version must be refused")
	}
}

func TestMarkdownShape(t *testing.T) {
	var buf bytes.Buffer
	if err := markdown.Write(&buf, seedReport(t), seedOpts); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	// The seed's sections, in the seed's order.
	last := -1
	for _, h := range []string{"## Summary", "## Environment", "## Settings", "## Repro", "## Observed", "## Expected", "## Evidence"} {
		i := strings.Index(md, "\n"+h+"\n")
		if i < 0 || i < last {
			t.Fatalf("section %q missing or out of order", h)
		}
		last = i
	}
	for _, want := range []string{
		"| kernel | 6.6.87.2-microsoft-standard-WSL2 |",
		"| WSL networking mode | nat |",
		"| bubblewrap | 0.9.0 |",
		"| sandbox | 0.0.66 |",
		"| userns sysctls | kernel.apparmor_restrict_unprivileged_userns=absent |",
		"| proxy env | (none) |",
		"| kernel | unknown |", // the native host recorded no fingerprint
		"| `proxy-dead` | fail-closed | 6 | 60.0% | 31.3% – 83.2% |",
		"| `non-enforcing` | fail-open | 2 | 20.0% |",
		"**Fail-open in 2 trial(s): network/ip-literal: direct: 198.18.0.3 reached (2); network/seed: http: denied.sandcheck.test reached (2).**",
		"FAIL-OPEN x2: http: denied.sandcheck.test reached (2)",
		"network/ip-literal, network/seed failed together in 8 of 10 trials",
		"sandcheck run --matrix matrix.yaml --trials 10",
		"\"failIfUnavailable\": true",
		"<details><summary>srt@wsl2 · proxy-dead · trial 0",
		"Harness error: SANDBOX-RAN marker missing",
		"279 more clean trials to claim &lt; 1.0%",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// Hostile output stays inside code blocks: a fence longer than the ``` it contains, and no
	// raw <script> outside a block.
	inBlock, fenceStr := false, ""
	for _, line := range strings.Split(md, "\n") {
		if m := regexp.MustCompile("^(`{3,})").FindString(line); m != "" && (!inBlock || m == fenceStr) {
			if !inBlock {
				fenceStr = m
			}
			inBlock = !inBlock
			continue
		}
		if !inBlock && strings.Contains(line, "<script>") {
			t.Errorf("raw <script> outside a code block: %q", line)
		}
		if !inBlock && strings.HasPrefix(line, "|") {
			// Every table row keeps its column count: no unescaped pipe from a value.
			cells := len(regexp.MustCompile(`[^\\]\|`).FindAllString(line, -1))
			if cells != 2 && cells != 5 && cells != 7 {
				t.Errorf("table row with %d separators: %q", cells, line)
			}
		}
	}
	if !strings.Contains(md, "````json\n") {
		t.Error("evidence containing ``` must be fenced with ````")
	}
	if inBlock {
		t.Error("a code block was left open")
	}
}

func TestMarkdownNoTrials(t *testing.T) {
	var buf bytes.Buffer
	markdown.Write(&buf, &schema.Report{SchemaVersion: 1}, Options{})
	if !strings.Contains(buf.String(), "measured nothing") {
		t.Fatalf("empty report must say it measured nothing:\n%s", buf.String())
	}
}

type xSuites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name  string `xml:"name,attr"`
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := junit.Write(&buf, seedReport(t)); err != nil {
		t.Fatal(err)
	}
	var doc xSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("junit.xml is not well-formed: %v", err)
	}
	if doc.Tests != 5 || doc.Failures != 2 || len(doc.Suites) != 2 {
		t.Fatalf("tests=%d failures=%d suites=%d", doc.Tests, doc.Failures, len(doc.Suites))
	}
	wsl := doc.Suites[1]
	f := wsl.Cases[1].Failure
	if wsl.Cases[1].Name != "network/seed" || f == nil || f.Type != "non-enforcing" {
		t.Fatalf("case = %+v", wsl.Cases[1])
	}
	if !strings.Contains(f.Body, "<script>alert('x')</script>") || !strings.Contains(f.Message, "8 of 9") {
		t.Fatalf("failure body lost the evidence: %q", f.Body)
	}
	props := map[string]string{}
	for _, p := range wsl.Cases[1].Props {
		props[p.Name] = p.Value
	}
	if props["trials"] != "9" || props["outcome.proxy-dead"] != "6" || props["failures"] != "8" {
		t.Fatalf("properties = %v", props)
	}
	if strings.ContainsRune(buf.String(), 0x1b) {
		t.Fatal("ESC must not reach junit.xml")
	}
}

func TestJUnitRealConsumer(t *testing.T) {
	nm := nodeModules(t, "test-results-parser")
	dir := t.TempDir()
	if err := WriteAll(dir, seedReport(t), seedOpts); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Total, Passed, Failed, Errors, Skipped int
		Suites                                 []struct {
			Name  string
			Cases []struct{ Name, Status, Failure string }
		}
	}
	runNode(t, nm, "junit.js", &got, filepath.Join(dir, JUnitFile))
	if got.Total != 5 || got.Passed != 3 || got.Failed != 2 || got.Errors != 0 {
		t.Fatalf("test-results-parser saw %+v", got)
	}
	if c := got.Suites[1].Cases[1]; c.Name != "network/seed" || c.Status != "FAIL" || !strings.Contains(c.Failure, "8 of 9") {
		t.Fatalf("case = %+v", c)
	}
}

func TestHTMLSelfContainedAndEscaped(t *testing.T) {
	rep := seedReport(t)
	var buf bytes.Buffer
	if err := htmlpage.Write(&buf, rep, seedOpts); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, `data-testid="cell" `); n != len(rep.Overall) {
		t.Errorf("cells in DOM = %d, want %d", n, len(rep.Overall))
	}
	if n := strings.Count(page, `data-testid="cell-row"`); n != len(rep.Cells)+len(rep.Overall) {
		t.Errorf("bar rows = %d, want %d", n, len(rep.Cells)+len(rep.Overall))
	}
	if n := strings.Count(page, `data-testid="heat-cell"`); n != 2*3 {
		t.Errorf("heat cells = %d, want 6 (2 cells x 3 scenarios)", n)
	}
	if strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") {
		t.Error("probe output must be HTML-escaped")
	}
	if strings.Count(page, "<script>") != 1 {
		t.Error("only the page's own inline script may appear")
	}
	for _, bad := range []string{"<link", "src=\"http", "href=\"http", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page must be self-contained; found %q", bad)
		}
	}
	if !strings.Contains(page, `class="open" style="background: #6a1b9a"`) {
		t.Error("fail-open heat cells must be marked")
	}
}

func TestHTMLInDOM(t *testing.T) {
	nm := nodeModules(t, "jsdom")
	dir := t.TempDir()
	rep := seedReport(t)
	if err := WriteAll(dir, rep, seedOpts); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Errors                                   []string
		Cells, Rows, HeatCells, Whiskers, Hidden int
		EvidenceOpen, Evidence, Injected         int
		PreText                                  string
		External                                 []string
	}
	runNode(t, nm, "dom.js", &got, filepath.Join(dir, HTMLFile), "wsl2")
	if len(got.Errors) != 0 {
		t.Fatalf("page script errors: %v", got.Errors)
	}
	// The native cell's three scenarios were correct in every trial: listed, not drawn.
	if got.Cells != 2 || got.Rows != len(rep.Cells)+2 || got.HeatCells != 6 || got.Whiskers != got.Rows-3 {
		t.Fatalf("DOM = %+v", got)
	}
	if got.Hidden != 1 || got.Evidence == 0 || got.EvidenceOpen != got.Evidence {
		t.Fatalf("filter/expand did not work: %+v", got)
	}
	if got.Injected != 0 || !strings.Contains(got.PreText, "<script>alert('x')</script>") {
		t.Fatalf("evidence must be text, not markup: injected=%d", got.Injected)
	}
	if len(got.External) != 0 {
		t.Fatalf("external references: %v", got.External)
	}
}

func TestWriteAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteAll(dir, seedReport(t), seedOpts); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "junit.xml report.html report.json report.md" {
		t.Fatalf("files = %v", names)
	}
}

// The settings of one scenario's own session (a trial whose scenarios each ran their own) are
// shown as that scenario's, in report.md and report.html alike.
func TestSettingsNameTheirScenario(t *testing.T) {
	rep := &schema.Report{SchemaVersion: 1, Settings: json.RawMessage(`{"sandbox":{"enabled":true}}`), SettingsOf: "claude-settings/permissions/bypass"}
	dir := t.TempDir()
	if err := WriteAll(dir, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{MarkdownFile, HTMLFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !strings.Contains(s, "claude-settings/permissions/bypass") || !strings.Contains(s, "settings of its own") || !strings.Contains(s, "enabled") {
			t.Errorf("%s: the settings are not named as the scenario's:\n%s", f, s)
		}
	}
}
