package doccheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRepoMarkdown: every relative link in the repository's Markdown resolves, on GitHub and in
// a fresh clone, and nothing points outside the repository.
func TestRepoMarkdown(t *testing.T) {
	r, err := Open("../..")
	if err != nil {
		t.Fatal(err)
	}
	md := r.Markdown()
	for _, want := range []string{"README.md", "docs/adversarial.md", "docs/design-changes.md", "reports/SCHEMA.md"} {
		if !slices.Contains(md, want) {
			t.Fatalf("tracked Markdown %v lacks %s: the scan would check nothing there", md, want)
		}
	}
	ps, err := r.CheckAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Errorf("%s", p)
	}
}

// fakeRepo writes files under a temporary root; tracked lists those git would track (the others
// exist on disk only, like out/ or a symlinked tool directory).
func fakeRepo(t *testing.T, files map[string]string, untracked ...string) *Repo {
	t.Helper()
	root := t.TempDir()
	var tracked []string
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(untracked, name) {
			tracked = append(tracked, name)
		}
	}
	return NewRepo(root, tracked)
}

func TestCheckFindsBrokenLinks(t *testing.T) {
	base := map[string]string{
		"README.md": "# sandcheck\n\n## Users: who the sandbox runs as\n\n## Claude Code\n\n## Claude Code\n\n" +
			"### WSL2-like: the seed's environment\n\n## `run --json` and snake_case_name\n\n" +
			"Setext heading\n--------------\n\n<a name=\"custom-anchor\"></a>\n",
		"docs/users.md":     "# Users\n\n## Why _not_ root?\n",
		"reports/SCHEMA.md": "# Schema\n",
		"cmd/main.go":       "package main\n\nfunc main() {}\n",
		"out/report.md":     "# not in git\n",
	}
	cases := []struct {
		name, text string
		want       string // "" = no problem; else a substring of the one problem
	}{
		{"file", "[u](users.md)", ""},
		{"file and anchor", "[u](users.md#why-not-root)", ""},
		{"up to the root", "[r](../README.md#users-who-the-sandbox-runs-as)", ""},
		{"root-relative, as GitHub resolves it", "[s](/reports/SCHEMA.md)", ""},
		{"a directory", "[c](../cmd/)", ""},
		{"the root", "[r](..)", ""},
		{"apostrophes drop out of the anchor", "[w](../README.md#wsl2-like-the-seeds-environment)", ""},
		{"code and underscores in a heading", "[j](../README.md#run---json-and-snake_case_name)", ""},
		{"a repeated heading gets -1", "[c](../README.md#claude-code-1)", ""},
		{"setext heading", "[s](../README.md#setext-heading)", ""},
		{"html anchor", "[a](../README.md#custom-anchor)", ""},
		{"line anchor", "[m](../cmd/main.go#L1-L3)", ""},
		{"own heading", "# Here\n\n[h](#here)", ""},
		{"title and angle brackets", "[u](<users.md> \"Users\")", ""},
		{"link text across lines", "[the\nusers](users.md)", ""},
		{"http is not checked", "[x](https://example.invalid/nope.md) <https://example.invalid/>", ""},
		{"a link in a code span is text", "`[x](nope.md)`", ""},
		{"a link in a fenced block is text", "```\n[x](nope.md)\n```\n", ""},
		{"an ellipsis is not a path", "`.../filesystem` and .../x", ""},
		{"a ../ path that resolves", "see `../reports/SCHEMA.md`", ""},

		{"missing file", "[x](nope.md)", "no such file or directory in the repository (docs/nope.md)"},
		{"missing anchor", "[u](users.md#nope)", "no heading or anchor #nope in docs/users.md"},
		{"anchor case", "[u](users.md#Why-not-root)", "no heading or anchor #Why-not-root"},
		{"repeat that is not there", "[c](../README.md#claude-code-2)", "no heading or anchor #claude-code-2"},
		{"missing own anchor", "[h](#nowhere)", "no heading or anchor #nowhere in docs/page.md"},
		{"line past the end", "[m](../cmd/main.go#L9)", "cmd/main.go has 3 lines"},
		{"a non-Markdown anchor", "[m](../cmd/main.go#main)", "only line anchors"},
		{"untracked file", "[o](../out/report.md)", "no such file or directory in the repository (out/report.md)"},
		{"outside the repository", "[s](../../shared/DESIGN.md)", "points outside the repository"},
		{"root-relative outside", "[s](/../x.md)", "points outside the repository"},
		{"a file: URL", "[f](file:///etc/passwd)", "file: URL points outside the repository"},
		{"reference definition", "[u][ref]\n\n[ref]: nope.md\n", "no such file"},
		{"html href", "<a href=\"nope.md\">x</a>", "no such file"},
		{"html img src", "<img src=\"../images/x.png\">", "no such file"},
		{"image", "![i](../images/x.png)", "no such file"},
		{"a ../ path in the text", "It began with a report (`../../shared/seed/`).", "a ../ path in the text: points outside the repository"},
		{"a ../ path in a heading", "# From ../shared/DESIGN.md\n", "a ../ path in the text: no such file or directory in the repository (shared/DESIGN.md)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range base {
				files[k] = v
			}
			files["docs/page.md"] = c.text
			r := fakeRepo(t, files, "out/report.md")
			ps, err := r.CheckFile("docs/page.md")
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if len(ps) != 0 {
					t.Fatalf("problems in %q: %v", c.text, ps)
				}
				return
			}
			if len(ps) != 1 || !strings.Contains(ps[0].String(), c.want) {
				t.Fatalf("%q: problems %v, want one saying %q", c.text, ps, c.want)
			}
		})
	}
	// Outside the fake docs page: the line number is the link's.
	r := fakeRepo(t, map[string]string{"a.md": "# A\n\ntext\n\n[x](b.md)\n"})
	if ps := r.Check("a.md", []byte("# A\n\ntext\n\n[x](b.md)\n")); len(ps) != 1 || ps[0].Line != 5 || ps[0].File != "a.md" {
		t.Fatalf("problems %v, want one on a.md:5", ps)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Users: who the sandbox runs as":                                 "users-who-the-sandbox-runs-as",
		"WSL2-like: the seed's environment":                              "wsl2-like-the-seeds-environment",
		"Scenarios only Claude Code has (`claude-settings`)":             "scenarios-only-claude-code-has-claude-settings",
		"A5. One aggregation: the run's summary, `--json` and exit code": "a5-one-aggregation-the-runs-summary---json-and-exit-code",
		"**Bold** and _emphasis_ and snake_case":                         "bold-and-emphasis-and-snake_case",
		"[A link](x.md) in a heading":                                    "a-link-in-a-heading",
		"Ünïcode — dashes":                                               "ünïcode--dashes",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestBugReports: each report in docs/reports is what `sandcheck repro` printed for a maintainer
// (the known findings' evidence shown, the standalone reproducers listed), not the run's own
// report.md beside it, whose wording is a nightly's; and each lists the reproducers it ran.
func TestBugReports(t *testing.T) {
	files, err := filepath.Glob("../../docs/reports/*.md")
	if err != nil || len(files) < 3 {
		t.Fatalf("docs/reports: %v %v", files, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "README.md" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.Contains(s, "(every failure here is a known finding") {
			t.Errorf("%s: the evidence of known findings is left out: the run's own report, not repro's", f)
		}
		if !strings.Contains(s, "### Standalone reproducers") || !strings.Contains(s, "### Reproducer `") {
			t.Errorf("%s: no standalone reproducers listed and run", f)
		}
	}
}
