package knownfindings

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
	_ "github.com/sandcheck/sandcheck/targets/firejail" // the lists this test reads are theirs
	_ "github.com/sandcheck/sandcheck/targets/srt"
)

func TestEmbeddedListsLoad(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	l := s.For("srt")
	if l.Target != "srt" || len(l.Findings) == 0 {
		t.Fatalf("srt list: %+v", l)
	}
	for _, f := range l.Findings {
		if IsAggregate(f.Scenario) || f.Check == "" || f.Note == "" || f.Source == "" || f.Fault != "" {
			t.Errorf("%s at %s: %+v", f.ID, f.Pos, f)
		}
		if !f.Versions.Contains("@anthropic-ai/sandbox-runtime@0.0.83") {
			t.Errorf("%s does not hold for the pinned srt 0.0.83", f.ID)
		}
	}
	// The aggregate that used to hide every filesystem failure is gone.
	if fs := l.ByScenario("filesystem/isolation"); len(fs) != 0 {
		t.Fatalf("filesystem/isolation is a known finding again: %+v", fs)
	}
	// Plain bubblewrap's findings are the bypass scenarios' (issue 12): what it leaves open
	// by design (unix socket files, masks that move), nothing of the seed's scenarios.
	for _, f := range s.For("bwrap").Findings {
		if !strings.HasPrefix(f.Scenario, "bypass/") {
			t.Errorf("bwrap finding %s outside the bypass scenarios", f.ID)
		}
	}
}

func TestNormalizeVersion(t *testing.T) {
	for in, want := range map[string]string{
		"@anthropic-ai/sandbox-runtime@0.0.83": "0.0.83",
		"sandbox-runtime@0.1.0-beta.2":         "0.1.0-beta.2",
		"bubblewrap 0.8.0":                     "0.8.0",
		"firejail version 0.9.72":              "0.9.72",
		"codex-cli 0.171.0":                    "0.171.0",
		"v1.2.3":                               "1.2.3",
		"unknown":                              "",
		"":                                     "",
	} {
		if got := NormalizeVersion(in); got != want {
			t.Errorf("NormalizeVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersionRanges(t *testing.T) {
	const srt = "@anthropic-ai/sandbox-runtime@"
	cases := []struct {
		rng     string
		list    []string
		version string
		want    bool
	}{
		{rng: ">=0.0.60 <=0.0.83", version: srt + "0.0.83", want: true},
		{rng: ">=0.0.60 <=0.0.83", version: srt + "0.0.60", want: true},
		{rng: ">=0.0.60 <=0.0.83", version: srt + "0.0.70", want: true},
		{rng: ">=0.0.60 <=0.0.83", version: srt + "0.0.84", want: false},
		{rng: ">=0.0.60 <=0.0.83", version: srt + "0.0.59", want: false},
		// Numeric, not lexical: 0.0.100 is after 0.0.83, 0.0.9 before.
		{rng: ">=0.0.60 <=0.0.83", version: srt + "0.0.100", want: false},
		{rng: ">=0.0.60 <=0.0.83", version: srt + "0.0.9", want: false},
		{rng: ">=0.0.60", version: srt + "1.4.0", want: true}, // open range
		{rng: "<0.1", version: srt + "0.0.99", want: true},
		{rng: "<0.1", version: srt + "0.1.0", want: false},
		{rng: ">0.0.83", version: srt + "0.0.83", want: false},
		{rng: "0.0.83", version: srt + "0.0.83", want: true},
		{rng: "=0.0.83", version: srt + "0.0.84", want: false},
		// A pre-release comes before its release.
		{rng: "<=0.0.83", version: srt + "0.0.84-beta.1", want: false},
		{rng: "<0.0.84", version: srt + "0.0.84-beta.1", want: true},
		{rng: ">=0.0.84-beta.2", version: srt + "0.0.84-beta.10", want: true},
		{rng: ">=0.0.84-beta.2", version: srt + "0.0.84-alpha", want: false},
		{rng: "*", version: srt + "9.9.9", want: true},
		{rng: "*", version: "unknown", want: true},
		// A version that cannot be told is within no range.
		{rng: ">=0.0.0", version: "unknown", want: false},
		{list: []string{"0.0.82", "0.0.83"}, version: srt + "0.0.83", want: true},
		{list: []string{"0.0.82", "0.0.83"}, version: srt + "0.0.81", want: false},
		{list: []string{"0.8.0"}, version: "bubblewrap 0.8.0", want: true},
	}
	for _, c := range cases {
		var vs Versions
		var err error
		if c.list != nil {
			vs, err = ParseList(c.list)
		} else {
			vs, err = ParseRange(c.rng)
		}
		if err != nil {
			t.Fatalf("%q %v: %v", c.rng, c.list, err)
		}
		if got := vs.Contains(c.version); got != c.want {
			t.Errorf("%s contains %q = %v, want %v", vs, c.version, got, c.want)
		}
	}
	for _, bad := range []string{"", ">=", ">=0.0.x", "~0.0.83", "0.0.83 ||", "latest"} {
		if _, err := ParseRange(bad); err == nil {
			t.Errorf("ParseRange(%q) accepted", bad)
		}
	}
}

const listYAML = `target: srt
findings:
  - scenario: filesystem/protected/git-hooks-new-repo
    check: $WORKSPACE/newrepo/.git/hooks/pre-commit
    outcome: non-enforcing
    versions: ">=0.0.80 <=0.0.83"
    source: https://example.com/srt/issues/1
    note: hooks planted in a new repository
  - scenario: concurrency/shared-workspace/k4
    check: leftover:.claude
    outcome: residue
    also: [sandbox-failed]
    intermittent: true
    versions: ["0.0.83"]
    source: README.md#known-findings
    note: a race
  - scenario: filesystem/secret/read
    check: $TRIAL/home/.ssh/id_rsa
    outcome: non-enforcing
    fault: fs-drop-deny-read
    versions: "*"
    source: README.md#faults
    note: the fault drops deny-read
`

func testList(t *testing.T) List {
	t.Helper()
	l, err := Parse("srt.yaml", []byte(listYAML))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var healthy = Subject{Target: "srt", Version: "@anthropic-ai/sandbox-runtime@0.0.83"}

var hooks = model.Breach{Scenario: "filesystem/protected/git-hooks-new-repo", Check: "$WORKSPACE/newrepo/.git/hooks/pre-commit",
	Outcome: model.NonEnforcing, What: "write $WORKSPACE/newrepo/.git/hooks/pre-commit"}

func TestParseIDsAndPositions(t *testing.T) {
	l := testList(t)
	want := []string{
		"srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit",
		"srt:concurrency/shared-workspace/k4#leftover:.claude",
		"srt[fs-drop-deny-read]:filesystem/secret/read#$TRIAL/home/.ssh/id_rsa",
	}
	for i, f := range l.Findings {
		if f.ID != want[i] {
			t.Errorf("id %q, want %q", f.ID, want[i])
		}
	}
	if l.Findings[1].Pos != "srt.yaml:9" || !l.Findings[1].Intermittent || !l.Findings[1].Matches(model.SandboxFailed) {
		t.Errorf("second finding: %+v", l.Findings[1])
	}
}

// Every field of the key matters: a breach that differs from the finding in any one of them is
// not covered.
func TestKeyMismatchOnEachFieldIsNotKnown(t *testing.T) {
	l := testList(t)
	f := l.Findings[0]
	if !f.Covers(healthy, hooks) {
		t.Fatal("the exact breach is not covered")
	}
	type variant struct {
		name string
		sub  Subject
		b    model.Breach
	}
	sub := func(m func(*Subject)) Subject { s := healthy; m(&s); return s }
	br := func(m func(*model.Breach)) model.Breach { b := hooks; m(&b); return b }
	for _, v := range []variant{
		{"target", sub(func(s *Subject) { s.Target = "bwrap" }), hooks},
		{"version above the range", sub(func(s *Subject) { s.Version = "@anthropic-ai/sandbox-runtime@0.0.84" }), hooks},
		{"version below the range", sub(func(s *Subject) { s.Version = "@anthropic-ai/sandbox-runtime@0.0.79" }), hooks},
		{"version unknown", sub(func(s *Subject) { s.Version = "unknown" }), hooks},
		{"fault", sub(func(s *Subject) { s.Fault = "fs-drop-deny-read" }), hooks},
		{"scenario", healthy, br(func(b *model.Breach) { b.Scenario = "filesystem/protected/git-hooks" })},
		{"check", healthy, br(func(b *model.Breach) { b.Check = "$WORKSPACE/.git/hooks/pre-commit" })},
		{"outcome", healthy, br(func(b *model.Breach) { b.Outcome = model.AllowedBlocked })},
	} {
		if f.Covers(v.sub, v.b) {
			t.Errorf("%s differs, yet the finding covers it", v.name)
		}
		d := l.Decide(v.sub, model.Scenario{Name: v.b.Scenario, Outcome: v.b.Outcome, Breaches: []model.Breach{v.b}})
		if d.Known() != "" || len(d.New) != 1 {
			t.Errorf("%s differs, yet decided %+v", v.name, d)
		}
	}
	// The fault: a finding under a fault holds under that fault (any parameters), never healthy.
	secret := model.Breach{Scenario: "filesystem/secret/read", Check: "$TRIAL/home/.ssh/id_rsa", Outcome: model.NonEnforcing}
	fault := l.Findings[2]
	for s, want := range map[Subject]bool{
		healthy: false,
		sub(func(s *Subject) { s.Fault = "fs-drop-deny-read" }):     true,
		sub(func(s *Subject) { s.Fault = "fs-drop-deny-read:x=1" }): true,
		sub(func(s *Subject) { s.Fault = "fs-rw-root" }):            false,
	} {
		if got := fault.Covers(s, secret); got != want {
			t.Errorf("fault finding under %q: %v, want %v", s.Fault, got, want)
		}
	}
}

// An aggregate is never a known finding by itself: the list refuses one, and a breach keyed to
// an aggregate is never covered, even by a finding written around the parser.
func TestAggregateNeverMatchesByItself(t *testing.T) {
	DeclareAggregate("filesystem/isolation", "the filesystem checks (filesystem/CHECK)") // as its family does
	_, err := Parse("srt.yaml", []byte(`target: srt
findings:
  - scenario: filesystem/isolation
    check: trial
    outcome: non-enforcing
    versions: "*"
    source: README.md#known-findings
    note: everything
`))
	if err == nil || !strings.Contains(err.Error(), "srt.yaml:3: findings[0].scenario: filesystem/isolation sums up") {
		t.Fatalf("aggregate finding: %v", err)
	}
	l := List{Target: "srt", Findings: []Finding{{ID: "srt:filesystem/isolation#trial", Target: "srt", Versions: mustRange(t, "*"),
		Scenario: "filesystem/isolation", Check: model.CheckTrial, Outcome: model.NonEnforcing, Note: "x"}}}
	d := l.Decide(healthy, model.Scenario{Name: "filesystem/isolation", Outcome: model.NonEnforcing, Hint: "secret/read: ..."})
	if d.Known() != "" || len(d.New) != 1 || d.New[0].Scenario != "filesystem/isolation" || d.New[0].Check != model.CheckTrial {
		t.Fatalf("aggregate verdict with no per-check breach: %+v", d)
	}
	for _, a := range Aggregates() {
		if !IsAggregate(a) {
			t.Fatal(a)
		}
	}
}

// The case of the issue: the secret made readable under a fault, in the same aggregate as the
// known git-hooks finding, must not be known; healthy, the aggregate is known through its check.
func TestAggregateKnownOnlyThroughEveryCheck(t *testing.T) {
	l := testList(t)
	secret := model.Breach{Scenario: "filesystem/secret/read", Check: "$TRIAL/home/.ssh/id_rsa", Outcome: model.NonEnforcing, What: "read $TRIAL/home/.ssh/id_rsa"}
	agg := model.Scenario{Name: "filesystem/isolation", Outcome: model.NonEnforcing, Breaches: []model.Breach{hooks}}
	d := l.Decide(healthy, agg)
	if d.Known() != "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit" || len(d.New) != 0 {
		t.Fatalf("healthy aggregate: %+v", d)
	}
	agg.Breaches = []model.Breach{hooks, secret}
	d = l.Decide(healthy, agg)
	if d.Known() != "" || len(d.New) != 1 || !reflect.DeepEqual(d.New[0], secret) || len(d.Matched) != 1 {
		t.Fatalf("aggregate with a new breach: %+v", d)
	}
}

func TestDecide(t *testing.T) {
	l := testList(t)
	const hooksID = "srt:filesystem/protected/git-hooks-new-repo#$WORKSPACE/newrepo/.git/hooks/pre-commit"
	const raceID = "srt:concurrency/shared-workspace/k4#leftover:.claude"
	leftover := model.Breach{Scenario: "concurrency/shared-workspace/k4", Check: "leftover:.claude", Outcome: model.Residue}
	session := model.Breach{Scenario: "concurrency/shared-workspace/k4", Check: "session", Outcome: model.SandboxFailed}
	cases := []struct {
		name         string
		v            model.Scenario
		known        string
		newChecks    []string
		unreproduced string
	}{
		{name: "passing scenario with a finding: fixed?",
			v:            model.Scenario{Name: hooks.Scenario, Outcome: model.Correct, Pass: true},
			unreproduced: hooksID},
		{name: "passing scenario without a finding",
			v: model.Scenario{Name: "filesystem/secret/read", Outcome: model.Correct, Pass: true}},
		{name: "the finding itself",
			v:     model.Scenario{Name: hooks.Scenario, Outcome: model.NonEnforcing, Breaches: []model.Breach{hooks}},
			known: hooksID},
		{name: "an outcome no breach shows is unexplained, and new",
			v:         model.Scenario{Name: hooks.Scenario, Outcome: model.Timeout, Breaches: []model.Breach{hooks}},
			newChecks: []string{model.CheckTrial}},
		{name: "failing with no breach at all",
			v:         model.Scenario{Name: hooks.Scenario, Outcome: model.NonEnforcing},
			newChecks: []string{model.CheckTrial}, unreproduced: ""},
		{name: "harness trouble says nothing about a fix",
			v:         model.Scenario{Name: hooks.Scenario, Outcome: model.HarnessError, Breaches: []model.Breach{{Scenario: hooks.Scenario, Check: "", Outcome: model.HarnessError}}},
			newChecks: []string{""}},
		{name: "intermittent race: the other face, another check, is new",
			v:         model.Scenario{Name: leftover.Scenario, Outcome: model.SandboxFailed, Breaches: []model.Breach{session, leftover}},
			newChecks: []string{"session"}},
		{name: "intermittent race: its listed face",
			v:     model.Scenario{Name: leftover.Scenario, Outcome: model.SandboxFailed, Breaches: []model.Breach{{Scenario: leftover.Scenario, Check: "leftover:.claude", Outcome: model.SandboxFailed}}},
			known: raceID},
		{name: "intermittent race did not show this trial",
			v:            model.Scenario{Name: leftover.Scenario, Outcome: model.Correct, Pass: true},
			unreproduced: raceID},
		{name: "a scenario failing another way: new, and its finding unreproduced",
			v:         model.Scenario{Name: hooks.Scenario, Outcome: model.AllowedBlocked, Breaches: []model.Breach{{Scenario: hooks.Scenario, Check: hooks.Check, Outcome: model.AllowedBlocked}}},
			newChecks: []string{hooks.Check}, unreproduced: hooksID},
	}
	for _, c := range cases {
		d := l.Decide(healthy, c.v)
		var got []string
		for _, b := range d.New {
			got = append(got, b.Check)
		}
		if d.Known() != c.known || strings.Join(got, ",") != strings.Join(c.newChecks, ",") || d.Verdict.Unreproduced != c.unreproduced {
			t.Errorf("%s: known %q new %q unreproduced %q; want %q %q %q", c.name, d.Known(), got, d.Verdict.Unreproduced, c.known, c.newChecks, c.unreproduced)
		}
		if !c.v.Pass && len(d.Verdict.Breaches) == 0 {
			t.Errorf("%s: a failing verdict with no breach recorded", c.name)
		}
	}
	// Another target's list never covers: Set.Decide picks the subject's own.
	s := Set{"srt": l}
	if d := s.Decide(Subject{Target: "bwrap", Version: "bubblewrap 0.8.0"}, model.Scenario{Name: hooks.Scenario, Outcome: model.NonEnforcing, Breaches: []model.Breach{hooks}}); d.Known() != "" {
		t.Fatalf("srt's finding covered bwrap: %+v", d)
	}
}

func TestParseErrorsNameFileLineField(t *testing.T) {
	base := func(extra string) string {
		return "target: srt\nfindings:\n  - scenario: filesystem/secret/read\n    check: x\n    outcome: non-enforcing\n" +
			"    versions: \"0.0.83\"\n    source: README.md#a\n    note: n\n" + extra
	}
	cases := []struct{ yaml, want string }{
		{"target: srt\nfindings: {}\n", "f.yaml:2: findings: want a list"},
		{"findings: []\n", "f.yaml:1: target: missing"},
		{"target: srt\nversion: x\nfindings: []\n", "f.yaml:2: version: unknown field"},
		{base("    bogus: 1\n"), "f.yaml:9: findings[0].bogus: unknown field"},
		{strings.Replace(base(""), "outcome: non-enforcing", "outcome: broken", 1), "f.yaml:5: findings[0].outcome: unknown outcome \"broken\""},
		{strings.Replace(base(""), "outcome: non-enforcing", "outcome: not-applicable", 1), "f.yaml:5: findings[0].outcome: unknown outcome"},
		{strings.Replace(base(""), "    check: x\n", "", 1), "f.yaml:3: findings[0].check: missing"},
		{strings.Replace(base(""), "check: x", "check: \"\"", 1), "f.yaml:4: findings[0].check: empty"},
		{strings.Replace(base(""), `"0.0.83"`, `">=0.0.x"`, 1), "f.yaml:6: findings[0].versions: range \">=0.0.x\""},
		{strings.Replace(base(""), `"0.0.83"`, `[]`, 1), "f.yaml:6: findings[0].versions: empty list"},
		{strings.Replace(base(""), `"0.0.83"`, `{a: 1}`, 1), "f.yaml:6: findings[0].versions: want a range"},
		{strings.Replace(base(""), "README.md#a", "see the README", 1), "f.yaml:7: findings[0].source:"},
		{strings.Replace(base(""), "    note: n\n", "", 1), "f.yaml:3: findings[0].note: missing"},
		{base("    also: [residue]\n"), "f.yaml:3: findings[0].also: only an intermittent finding"},
		{base("    intermittent: yes please\n"), "f.yaml:9: findings[0].intermittent: want true or false"},
		{base("    intermittent: true\n    also: [nope]\n"), "f.yaml:10: findings[0].also[0]: unknown outcome"},
		// One finding, one severity: an id accepted as fail-closed must not let a fail-open face through.
		{strings.Replace(base("    intermittent: true\n    also: [non-enforcing]\n"), "outcome: non-enforcing", "outcome: proxy-dead", 1),
			"f.yaml:3: findings[0].also[0]: non-enforcing is fail-open, the finding's outcome proxy-dead is fail-closed"},
		{base("    intermittent: true\n    also: [allowed-blocked]\n"), "findings[0].also[0]: allowed-blocked is fail-closed"},
		{base("    check: y\n"), "f.yaml:9: findings[0].check: given twice"},
		{base(strings.TrimPrefix(base(""), "target: srt\nfindings:\n")), "f.yaml:9: findings[1]: a second finding srt:filesystem/secret/read#x (the first is at f.yaml:3)"},
		{"target: [srt]\nfindings: []\n", "f.yaml:1: target: want a string"},
		{"target: srt\nfindings:\n  - scenario: [\n", "f.yaml: yaml:"},
	}
	for _, c := range cases {
		_, err := Parse("f.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want error containing %q, got %v\n%s", c.want, err, c.yaml)
		}
	}
}

func mustRange(t *testing.T, s string) Versions {
	t.Helper()
	v, err := ParseRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A finding keyed to a user holds for that user only; one without user: for every user. Its id
// names the user, so the same check can have a finding per user.
func TestUserKey(t *testing.T) {
	src := `target: srt
findings:
  - scenario: filesystem/workspace/tmpdir
    check: /tmp/claude/sandcheck-fs-*
    outcome: allowed-blocked
    user: unprivileged
    versions: "0.0.83"
    source: README.md#users
    note: the user cannot write a root-owned /tmp/claude.
  - scenario: filesystem/workspace/tmpdir
    check: /tmp/claude/sandcheck-fs-*
    outcome: allowed-blocked
    user: root
    versions: "0.0.83"
    source: README.md#users
    note: root only where /tmp/claude is missing.
  - scenario: failclosed/proxy-port-taken
    check: proxy-port-taken
    outcome: proxy-dead
    versions: "0.0.83"
    source: README.md#known-findings
    note: any user.
`
	l, err := Parse("srt.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l.Findings[0].ID != "srt@unprivileged:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*" || l.Findings[1].ID != "srt@root:filesystem/workspace/tmpdir#/tmp/claude/sandcheck-fs-*" {
		t.Fatalf("ids: %s, %s", l.Findings[0].ID, l.Findings[1].ID)
	}
	tmp := model.Breach{Scenario: "filesystem/workspace/tmpdir", Check: "/tmp/claude/sandcheck-fs-*", Outcome: model.AllowedBlocked}
	port := model.Breach{Scenario: "failclosed/proxy-port-taken", Check: "proxy-port-taken", Outcome: model.ProxyDead}
	as := func(u string) Subject { s := healthy; s.User = u; return s }
	for _, c := range []struct {
		f    int
		user string
		b    model.Breach
		want bool
	}{
		{0, "unprivileged", tmp, true}, {0, "root", tmp, false}, {0, "ci", tmp, false},
		{1, "root", tmp, true}, {1, "unprivileged", tmp, false},
		{2, "root", port, true}, {2, "unprivileged", port, true}, {2, "ci", port, true},
	} {
		if got := l.Findings[c.f].Covers(as(c.user), c.b); got != c.want {
			t.Errorf("%s as %s: covers %v, want %v", l.Findings[c.f].ID, c.user, got, c.want)
		}
	}
	if d := l.Decide(as("ci"), model.Scenario{Name: tmp.Scenario, Outcome: tmp.Outcome, Breaches: []model.Breach{tmp}}); d.Known() != "" {
		t.Errorf("as ci: %+v", d)
	}
	_, err = Parse("srt.yaml", []byte(strings.Replace(src, "user: root", "user: Root!", 1)))
	if err == nil || !strings.Contains(err.Error(), "srt.yaml:13: findings[1].user:") {
		t.Errorf("bad user: %v", err)
	}
}
