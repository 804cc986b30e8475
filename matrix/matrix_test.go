package matrix

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/model"
)

var errUnknown = errors.New("unknown")

// testRegistry knows the adapters and fault names the examples use.
var testRegistry = Registry{
	Target: func(name string, settings map[string]any) error {
		switch name {
		case "srt", "codex", "bwrap", "claude-code":
			if _, bad := settings["bogus"]; bad {
				return fmt.Errorf("setting bogus is not a %s setting", name)
			}
			return nil
		}
		return fmt.Errorf("%w target %q (expected one of: srt, codex, bwrap)", errUnknown, name)
	},
	Fault: func(spec string) error {
		name, _, _ := strings.Cut(spec, ":")
		switch name {
		case "bridge-absent", "bridge-late", "bridge-flaky", "proxy-nowhere", "open-proxy", "settings-missing", "settings-invalid":
			return nil
		}
		return fmt.Errorf("unknown fault %q (expected one of: bridge-absent, bridge-flaky, ...)", name)
	},
	HostKinds: testKinds,
}

// testKinds stand for the host kinds' drivers (runner/hosts/<kind>, each with tests of its own
// keys): local reads none; box reads one of each kind of value.
var testKinds = map[string]HostKind{
	KindLocal: {},
	"box": {Keys: []string{"address", "login", "mode", "n", "fresh", "files"}, Settings: func(s *HostSettings) any {
		b := testBox{Address: s.Required("address", "an address"), Login: s.Optional("login", "an account"),
			Mode: s.OneOf("mode", "first", "every"), N: s.PositiveInt("n", "a count"), Fresh: s.Bool("fresh"),
			Files: s.Strings("files", "a file or a list of files")}
		if b.N > 0 && b.N < 10 {
			s.Errorf("n", "%d is too few (expected at least 10)", b.N)
		}
		for _, u := range s.Users() {
			if u == "ci" {
				s.Errorf("user", "%q: a box has no ci", u)
			}
		}
		return b
	}},
	"gone": {Unavailable: "kind gone cannot run here"},
}

type testBox struct {
	Address, Login, Mode string
	N                    int
	Fresh                bool
	Files                []string
}

func TestErrors(t *testing.T) {
	const head = "targets:\n  - name: srt\n"
	cases := []struct{ name, yaml, want string }{
		{"empty file", "", "m.yaml:1: empty matrix (expected a mapping with at least targets:)"},
		{"only comments", "# nothing\n", "m.yaml:1: empty matrix (expected a mapping with at least targets:)"},
		{"null doc", "~\n", "m.yaml:1: empty matrix"},
		{"not a mapping", "- a\n", "m.yaml:1: expected a mapping (the matrix: targets, hosts, scenarios, faults, trials, parallel, timeout), got a list"},
		{"bad yaml", "targets: [\n", "m.yaml:1: invalid YAML: did not find expected node content"},
		{"two docs", head + "---\n" + head, "m.yaml:3: more than one YAML document"},
		{"unknown top key", head + "trails: 3\n", "m.yaml:3: trails: unknown key (expected one of: targets, hosts, scenarios, faults, trials, parallel, timeout)"},
		{"duplicate key", head + "trials: 3\ntrials: 4\n", "m.yaml:4: trials: defined twice (first at line 3)"},
		{"no targets", "trials: 3\n", "m.yaml:1: targets: missing (expected a list of sandboxes under test, e.g. - name: srt)"},
		{"empty targets", "targets: []\n", "m.yaml:1: targets: empty (expected at least one target)"},
		{"targets not list", "targets: srt\n", "m.yaml:1: targets: expected a list of targets (- name: srt), got \"srt\""},
		{"target not mapping", "targets:\n  - srt\n", "m.yaml:2: targets[0]: expected a mapping (name, id, settings, versions), got \"srt\""},
		{"target no name", "targets:\n  - id: x\n", "m.yaml:2: targets[0].name: missing (expected an adapter name, e.g. srt)"},
		{"target unknown key", "targets:\n  - name: srt\n    path: /x\n", "m.yaml:3: targets[0].path: unknown key (expected one of: name, id, settings, versions)"},
		{"unknown target", "targets:\n  - name: firejail\n", `m.yaml:2: targets[0].name: unknown target "firejail" (expected one of: srt, codex, bwrap)`},
		{"target settings rejected", "targets:\n  - name: srt\n    settings: {bogus: 1}\n", "m.yaml:2: targets[0].name: setting bogus is not a srt setting"},
		{"settings not mapping", "targets:\n  - name: srt\n    settings: [1]\n", "m.yaml:3: targets[0].settings: expected a mapping of adapter settings, got a list"},
		{"duplicate target", head + "  - name: srt\n", `m.yaml:3: targets[1]: target "srt" is already defined as targets[0] (give one an id:)`},
		{"bad target id", "targets:\n  - name: srt\n    id: a b\n", `m.yaml:2: targets[0].id: "a b" is not a plain name`},
		{"hosts not list", head + "hosts: local\n", "m.yaml:3: hosts: expected a list of hosts"},
		{"hosts empty", head + "hosts: []\n", "m.yaml:3: hosts: empty (expected at least one host, or leave hosts out for the local host)"},
		{"host no kind", head + "hosts:\n  - name: a\n", "m.yaml:4: hosts[0].kind: missing (expected one of: box, gone, local)"},
		{"unknown host kind", head + "hosts:\n  - name: a\n    kind: k8s\n", `m.yaml:5: hosts[0].kind: unknown host kind "k8s" (expected one of: box, gone, local)`},
		{"unavailable host kind", head + "hosts:\n  - name: a\n    kind: gone\n", `m.yaml:5: hosts[0].kind: kind gone cannot run here`},
		{"host no name", head + "hosts:\n  - kind: local\n", "m.yaml:4: hosts[0].name: missing (expected a unique host name)"},
		{"host bad name", head + "hosts:\n  - {kind: local, name: \"a/b\"}\n", `m.yaml:4: hosts[0].name: "a/b" is not a plain name`},
		{"local with image", head + "hosts:\n  - name: a\n    kind: local\n    image: x\n", "m.yaml:6: hosts[0].image: unknown key (expected one of: name, kind, user)"},
		{"box no address", head + "hosts:\n  - name: c\n    kind: box\n", "m.yaml:4: hosts[0].address: missing (a box host needs an address)"},
		{"box empty address", head + "hosts:\n  - {name: c, kind: box, address: \"\"}\n", "m.yaml:4: hosts[0].address: empty (a box host needs an address)"},
		{"box bad bool", head + "hosts:\n  - {name: c, kind: box, address: i, fresh: sometimes}\n", `m.yaml:4: hosts[0].fresh: expected true or false, got "sometimes"`},
		{"box unknown key", head + "hosts:\n  - {name: c, kind: box, address: i, image: x}\n", "m.yaml:4: hosts[0].image: unknown key (expected one of: name, kind, user, address, login, mode, n, fresh, files)"},
		{"duplicate host", head + "hosts:\n  - {name: a, kind: local}\n  - {name: a, kind: local}\n", `m.yaml:5: hosts[1].name: host "a" is already defined as hosts[0]`},
		{"scenarios list", head + "scenarios: [network]\n", `m.yaml:3: scenarios: expected a Ginkgo label filter string, e.g. "network", got a list`},
		{"faults not list", head + "faults: bridge-absent\n", `m.yaml:3: faults: expected a list of fault names ("" or none for a healthy sandbox), got "bridge-absent"`},
		{"faults empty", head + "faults: []\n", `m.yaml:3: faults: empty (expected at least one entry`},
		{"unknown fault", head + "faults: [\"\", dns-broken]\n", `m.yaml:3: faults[1]: unknown fault "dns-broken" (expected one of: bridge-absent, bridge-flaky, ...)`},
		{"bad fault name", head + "faults: [Bridge]\n", `m.yaml:3: faults[0]: bad fault name "Bridge" (expected NAME[:k=v,...]`},
		{"bad fault param", head + "faults: [\"bridge-flaky:p\"]\n", `m.yaml:3: faults[0]: bad fault parameter "p" in "bridge-flaky:p" (expected k=v, comma-separated)`},
		{"duplicate healthy", head + "faults: [\"\", none]\n", `m.yaml:3: faults[1]: fault "none" is already listed as faults[0]`},
		{"fault not string", head + "faults:\n  - {a: 1}\n", `m.yaml:4: faults[0]: expected a fault NAME[:k=v,...], or ""/none, got a mapping`},
		{"trials zero", head + "trials: 0\n", "m.yaml:3: trials: must be at least 1 (the number of trials per cell, or {until: ..., max: ...}), got 0"},
		{"trials negative", head + "trials: -5\n", "m.yaml:3: trials: must be at least 1"},
		{"trials text", head + "trials: many\n", `m.yaml:3: trials: expected a positive integer (the number of trials per cell, or {until: ..., max: ...}), got "many"`},
		{"trials float", head + "trials: 2.5\n", `m.yaml:3: trials: expected a positive integer`},
		{"trials list", head + "trials: [1]\n", `m.yaml:3: trials: expected a mapping (a number, or until, alpha, beta, max), got a list`},
		{"until missing", head + "trials: {max: 10}\n", `m.yaml:3: trials.until: missing (expected a rule "rate<=P0 vs rate>=P1")`},
		{"until garbage", head + "trials: {until: soon, max: 10}\n", `m.yaml:3: trials.until: cannot read "soon" (expected "rate<=P0 vs rate>=P1", e.g. "rate<=0.01 vs rate>=0.05")`},
		{"until reversed", head + "trials: {until: \"rate<=0.05 vs rate>=0.01\", max: 10}\n", "m.yaml:3: trials.until: rates 0.05 and 0.01 out of order (expected 0 < P0 < P1 < 1)"},
		{"until zero", head + "trials: {until: \"rate<=0 vs rate>=0.01\", max: 10}\n", "m.yaml:3: trials.until: rates 0 and 0.01 out of order"},
		{"alpha range", head + "trials: {until: \"rate<=0.01 vs rate>=0.05\", alpha: 0.7, max: 10}\n", `m.yaml:3: trials.alpha: expected an error rate between 0 and 0.5 (exclusive), got "0.7"`},
		{"beta text", head + "trials: {until: \"rate<=0.01 vs rate>=0.05\", beta: low, max: 10}\n", `m.yaml:3: trials.beta: expected an error rate between 0 and 0.5 (exclusive), got "low"`},
		{"max missing", head + "trials: {until: \"rate<=0.01 vs rate>=0.05\"}\n", "m.yaml:3: trials.max: missing (expected the most trials per cell, e.g. 2000)"},
		{"max zero", head + "trials: {until: \"rate<=0.01 vs rate>=0.05\", max: 0}\n", "m.yaml:3: trials.max: must be at least 1"},
		{"trials unknown key", head + "trials:\n  until: \"rate<=0.01 vs rate>=0.05\"\n  max: 5\n  min: 1\n", "m.yaml:6: trials.min: unknown key (expected one of: until, alpha, beta, max)"},
		{"parallel zero", head + "parallel: 0\n", "m.yaml:3: parallel: must be at least 1 (the number of trials run at once), got 0"},
		{"parallel text", head + "parallel: all\n", `m.yaml:3: parallel: expected a positive integer (the number of trials run at once), got "all"`},
		{"timeout no unit", head + "timeout: 60\n", `m.yaml:3: timeout: expected a duration like 60s or 5m (the deadline of one trial), got "60"`},
		{"timeout garbage", head + "timeout: soon\n", `m.yaml:3: timeout: expected a duration like 60s or 5m (the deadline of one trial), got "soon"`},
		{"timeout negative", head + "timeout: -1s\n", "m.yaml:3: timeout: must be positive (the deadline of one trial), got -1s"},
		{"timeout zero", head + "timeout: 0s\n", "m.yaml:3: timeout: must be positive"},
		{"timeout list", head + "timeout: [1s]\n", "m.yaml:3: timeout: expected a duration like 60s or 5m (the deadline of one trial), got a list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse("m.yaml", []byte(c.yaml), testRegistry)
			if err == nil {
				t.Fatalf("accepted: %+v", m)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n  %v\nwant it to contain:\n  %s", err, c.want)
			}
		})
	}
}

func TestAllErrorsReportedAtOnce(t *testing.T) {
	_, err := Parse("m.yaml", []byte("targets:\n  - name: nope\ntrials: 0\ntimeout: x\n"), testRegistry)
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 errors, got %q", lines)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Line != 2 || fe.Field != "targets[0].name" {
		t.Fatalf("first FieldError = %+v", fe)
	}
	if !errors.Is(err, errUnknown) {
		t.Fatal("registry error not wrapped")
	}
}

func TestDefaultMatrix(t *testing.T) {
	m, err := Default(testRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if m.Trials != 20 || m.Adaptive != nil || m.Scenarios != "" || len(m.Targets) != 1 || m.Targets[0].Name != "srt" {
		t.Fatalf("default = %+v", m)
	}
	if len(m.Hosts) != 1 || m.Hosts[0].Kind != KindLocal {
		t.Fatalf("hosts = %+v", m.Hosts)
	}
	cells := m.Cells()
	if len(cells) != 1 || cells[0].Target != "srt" || cells[0].Host != "local" || cells[0].Fault != "" {
		t.Fatalf("cells = %+v", cells)
	}
	if !strings.HasPrefix(cells[0].ID, "srt.local-unprivileged.healthy-") || cells[0].User != "unprivileged" {
		t.Fatalf("id = %s", cells[0].ID)
	}
}

func TestMinimalFileGetsDefaults(t *testing.T) {
	m, err := Parse("m.yaml", []byte("targets: [{name: srt}]\n"), testRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if m.Trials != DefaultTrials || m.Parallel != DefaultParallel || m.Timeout != DefaultTimeout {
		t.Fatalf("defaults not applied: %+v", m)
	}
	if len(m.Hosts) != 1 || !reflect.DeepEqual(m.Hosts[0], Host{Name: "local", Kind: KindLocal, Users: []string{"unprivileged"}}) {
		t.Fatalf("hosts = %+v", m.Hosts)
	}
	if !slices.Equal(m.Faults, []string{""}) {
		t.Fatalf("faults = %q", m.Faults)
	}
}

// TestHostSettings: a kind's driver reads its keys through HostSettings; every value is checked
// and a wrong one is reported with the entry's file:line and the field.
func TestHostSettings(t *testing.T) {
	src := `targets: [{name: srt}]
hosts:
  - {name: b, kind: box, address: "h:2222", login: u, mode: every, n: 12, fresh: true, files: [/a, /b]}
  - {name: c, kind: box, address: a, files: /one}
`
	m, err := Parse("m.yaml", []byte(src), testRegistry)
	if err != nil {
		t.Fatal(err)
	}
	b, c := m.Hosts[0].Settings.(testBox), m.Hosts[1].Settings.(testBox)
	if !reflect.DeepEqual(b, testBox{Address: "h:2222", Login: "u", Mode: "every", N: 12, Fresh: true, Files: []string{"/a", "/b"}}) ||
		!reflect.DeepEqual(c, testBox{Address: "a", Files: []string{"/one"}}) {
		t.Fatalf("settings = %+v, %+v", b, c)
	}
	for _, c := range []struct{ yaml, want string }{
		{"hosts: [{name: b, kind: box, address: a, mode: sometimes}]", `m.yaml:2: hosts[0].mode: unknown value "sometimes" (expected one of: first, every)`},
		{"hosts: [{name: b, kind: box, address: a, n: 5}]", "m.yaml:2: hosts[0].n: 5 is too few (expected at least 10)"},
		{"hosts: [{name: b, kind: box, address: a, n: 0}]", "m.yaml:2: hosts[0].n: must be at least 1"},
		{"hosts: [{name: b, kind: box, address: a, login: [1]}]", "m.yaml:2: hosts[0].login: expected an account, got a list"},
		{"hosts: [{name: b, kind: box, address: a, files: {x: 1}}]", "m.yaml:2: hosts[0].files: expected a file or a list of files, got a mapping"},
		{"hosts: [{name: b, kind: box, address: a, user: [root, ci]}]", `m.yaml:2: hosts[0].user: "ci": a box has no ci`},
	} {
		_, err := Parse("m.yaml", []byte("targets: [{name: srt}]\n"+c.yaml+"\n"), testRegistry)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.yaml, err, c.want)
		}
	}
	// Without drivers (a registry that knows no kinds) every kind and key passes, unread.
	m, err = Parse("m.yaml", []byte("targets: [{name: srt}]\nhosts: [{name: q, kind: anything, whatever: 1}]\n"), Registry{})
	if err != nil || m.Hosts[0].Kind != "anything" || m.Hosts[0].Settings != nil {
		t.Fatalf("no drivers: %+v %v", m, err)
	}
}

func TestFullParse(t *testing.T) {
	src := `
targets:
  - name: srt
    id: srt-old
    settings: {path: /opt/srt-1/srt, settings_file: /etc/srt.json}
  - name: srt
    id: srt-new
hosts:
  - {name: here, kind: local}
  - {name: box, kind: box, address: "10.0.0.2:22", login: ci}
  - {name: win, kind: box, address: Ubuntu}
  - {name: qemu, kind: box, address: debian.qcow2}
anchors: &x 1
`
	_, err := Parse("m.yaml", []byte(src), testRegistry)
	if err == nil || !strings.Contains(err.Error(), "m.yaml:13: anchors: unknown key") {
		t.Fatalf("err = %v", err)
	}
	src = strings.Replace(src, "anchors: &x 1", "scenarios: \" network && !slow \"\nfaults: [none, \"bridge-flaky:p=0.3,seed=7\"]\ntrials: 5\n", 1)
	m, err := Parse("m.yaml", []byte(src), testRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if m.Scenarios != "network && !slow" || !slices.Equal(m.Faults, []string{"", "bridge-flaky:p=0.3,seed=7"}) || m.Trials != 5 {
		t.Fatalf("m = %+v", m)
	}
	if h, _ := m.Host("box"); h.Settings.(testBox).Address != "10.0.0.2:22" || h.Settings.(testBox).Login != "ci" {
		t.Fatalf("box = %+v", h)
	}
	if tg, _ := m.Target("srt-old"); tg.Settings["settings_file"] != "/etc/srt.json" {
		t.Fatalf("settings = %+v", tg.Settings)
	}
	cells := m.Cells()
	if len(cells) != 2*4*2 {
		t.Fatalf("%d cells", len(cells))
	}
	// Target-major, then host, then fault: file order.
	if cells[0].Target != "srt-old" || cells[0].Host != "here" || cells[0].Fault != "" || cells[1].Fault == "" || cells[2].Host != "box" || cells[8].Target != "srt-new" {
		t.Fatalf("order: %+v", cells[:3])
	}
	ids := map[string]bool{}
	for _, c := range cells {
		if ids[c.ID] {
			t.Fatalf("duplicate id %s", c.ID)
		}
		ids[c.ID] = true
		if c.Labels != "network && !slow" {
			t.Fatalf("labels = %q", c.Labels)
		}
	}
	// Expansion is deterministic.
	m2, _ := Parse("other.yaml", []byte(src), testRegistry)
	if !slices.Equal(cells, m2.Cells()) {
		t.Fatal("second expansion differs")
	}
}

func TestCellIDStable(t *testing.T) {
	// A fixed value: changing the ID scheme orphans every baseline and resumable journal.
	if got := CellID("srt", "local", "", ""); got != "srt.local.healthy-"+CellID("srt", "local", "none", "")[len("srt.local.healthy-"):] {
		t.Fatalf("none and empty fault differ: %s", got)
	}
	a := CellID("srt", "local", "bridge-flaky:p=0.3", "network")
	if !strings.HasPrefix(a, "srt.local.bridge-flaky-p-0.3-") || len(a) != len("srt.local.bridge-flaky-p-0.3-")+8 {
		t.Fatalf("id = %s", a)
	}
	if a == CellID("srt", "local", "bridge-flaky:p=0.3", "filesystem") {
		t.Fatal("labels do not change the id")
	}
	if CellID("srt", "local", "", "") != "srt.local.healthy-13278590" {
		t.Fatalf("id scheme changed: %s", CellID("srt", "local", "", ""))
	}
	long := CellID(strings.Repeat("t", 60), "h", "", "")
	if len(long) > 48+9 {
		t.Fatalf("long id %d chars", len(long))
	}
}

func TestShards(t *testing.T) {
	var cells []model.Cell
	for i := range 23 {
		cells = append(cells, model.Cell{ID: fmt.Sprint(i)})
	}
	for n := 1; n <= 7; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			s, err := ParseShard(fmt.Sprintf("%d/%d", i, n))
			if err != nil {
				t.Fatal(err)
			}
			part := s.Select(cells)
			if len(part) < len(cells)/n || len(part) > len(cells)/n+1 {
				t.Fatalf("shard %v has %d cells (unbalanced)", s, len(part))
			}
			for _, c := range part {
				seen[c.ID]++
			}
		}
		if len(seen) != len(cells) {
			t.Fatalf("n=%d: union has %d cells, want %d", n, len(seen), len(cells))
		}
		for id, k := range seen {
			if k != 1 {
				t.Fatalf("n=%d: cell %s in %d shards", n, id, k)
			}
		}
	}
	whole, _ := ParseShard("")
	if len(whole.Select(cells)) != len(cells) || whole.String() != "all" {
		t.Fatal("empty shard is not the whole")
	}
}

func TestShardErrors(t *testing.T) {
	for in, want := range map[string]string{
		"1":   `shard "1": expected i/n, e.g. 1/4`,
		"a/2": `shard "a/2": expected i/n, e.g. 1/4`,
		"0/2": `shard "0/2": expected 1 <= i <= n`,
		"3/2": `shard "3/2": expected 1 <= i <= n`,
		"1/0": `shard "1/0": expected 1 <= i <= n`,
	} {
		if _, err := ParseShard(in); err == nil || err.Error() != want {
			t.Errorf("ParseShard(%q) = %v, want %s", in, err, want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "x.yaml"), testRegistry)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

// TestUsers: user: is one spec or a list (an axis), default unprivileged; every host kind has it;
// root's cells keep the IDs cells had before the axis, so old journals and baselines still match
// them; any other user is a cell of its own.
func TestUsers(t *testing.T) {
	src := `targets: [{name: srt}]
hosts:
  - {name: here, kind: local, user: [unprivileged, root, ci]}
  - {name: ctr, kind: box, address: i, user: root}
  - {name: box, kind: box, address: a, login: root, user: dev}
  - {name: v, kind: box, address: bookworm}
faults: ["", bridge-absent]
`
	m, err := Parse("m.yaml", []byte(src), testRegistry)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"unprivileged", "root", "ci"}, {"root"}, {"dev"}, {"unprivileged"}}
	for i, h := range m.Hosts {
		if !slices.Equal(h.Users, want[i]) {
			t.Errorf("%s: users %v, want %v", h.Name, h.Users, want[i])
		}
	}
	cells := m.Cells()
	if len(cells) != (3+1+1+1)*2 {
		t.Fatalf("%d cells", len(cells))
	}
	ids := map[string]bool{}
	for _, c := range cells {
		if ids[c.ID] {
			t.Errorf("duplicate id %s", c.ID)
		}
		ids[c.ID] = true
		old := CellID(c.Target, c.Host, c.Fault, c.Labels)
		if (c.User == "root") != (c.ID == old) {
			t.Errorf("%s as %s: id %s, pre-axis id %s", c.Host, c.User, c.ID, old)
		}
	}
	if c := cells[0]; c.Host != "here" || c.User != "unprivileged" || c.Fault != "" || cells[1].Fault != "bridge-absent" || cells[2].User != "root" {
		t.Errorf("order: %+v", cells[:3])
	}
	for _, c := range []struct{ yaml, want string }{
		{"hosts: [{name: a, kind: local, user: Admin}]", `m.yaml:2: hosts[0].user: user "Admin": expected unprivileged, root or an account name`},
		{"hosts: [{name: a, kind: local, user: []}]", "m.yaml:2: hosts[0].user: empty"},
		{"hosts: [{name: a, kind: local, user: [root, root]}]", `m.yaml:2: hosts[0].user: user "root" listed twice`},
		{"hosts: [{name: a, kind: local, user: {x: 1}}]", "m.yaml:2: hosts[0].user: expected unprivileged, root or an account name, got a mapping"},
	} {
		_, err := Parse("m.yaml", []byte("targets: [{name: srt}]\n"+c.yaml+"\n"), testRegistry)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.yaml, err, c.want)
		}
	}
}
