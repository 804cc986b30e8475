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
	"time"

	"github.com/sandcheck/sandcheck/fixtures/faults"

	"github.com/sandcheck/sandcheck/runner/journal"
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
		{"host no kind", head + "hosts:\n  - name: a\n", "m.yaml:4: hosts[0].kind: missing (expected one of: local, container, ssh, wsl, vm)"},
		{"unknown host kind", head + "hosts:\n  - name: a\n    kind: k8s\n", `m.yaml:5: hosts[0].kind: unknown host kind "k8s" (expected one of: local, container, ssh, wsl, vm)`},
		{"host no name", head + "hosts:\n  - kind: local\n", "m.yaml:4: hosts[0].name: missing (expected a unique host name)"},
		{"host bad name", head + "hosts:\n  - {kind: local, name: \"a/b\"}\n", `m.yaml:4: hosts[0].name: "a/b" is not a plain name`},
		{"local with image", head + "hosts:\n  - name: a\n    kind: local\n    image: x\n", "m.yaml:6: hosts[0].image: unknown key (expected one of: name, kind, user)"},
		{"container no image", head + "hosts:\n  - name: c\n    kind: container\n", "m.yaml:4: hosts[0].image: missing (a container host needs an image name)"},
		{"container empty image", head + "hosts:\n  - {name: c, kind: container, image: \"\"}\n", "m.yaml:4: hosts[0].image: empty (a container host needs an image name)"},
		{"container bad profile", head + "hosts:\n  - {name: c, kind: container, image: i, profile: privileged}\n", `m.yaml:4: hosts[0].profile: unknown profile "privileged" (expected bwrap-ready or docker-default)`},
		{"container bad bool", head + "hosts:\n  - {name: c, kind: container, image: i, per_trial_container: sometimes}\n", `m.yaml:4: hosts[0].per_trial_container: expected true or false, got "sometimes"`},
		{"ssh no address", head + "hosts:\n  - {name: s, kind: ssh}\n", "m.yaml:4: hosts[0].address: missing (a ssh host needs an address host[:port])"},
		{"wsl no distro", head + "hosts:\n  - {name: w, kind: wsl}\n", "m.yaml:4: hosts[0].distro: missing (a wsl host needs a WSL distribution name)"},
		{"vm no image", head + "hosts:\n  - {name: v, kind: vm}\n", "m.yaml:4: hosts[0].image: missing (a vm host needs a VM image)"},
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

func TestExamplesValidate(t *testing.T) {
	files, _ := filepath.Glob("examples/*.yaml")
	if len(files) < 2 {
		t.Fatalf("examples: %v", files)
	}
	// Examples must name faults the real registry knows, so they run as written.
	reg := testRegistry
	reg.Fault = func(spec string) error { _, _, err := faults.Parse(spec); return err }
	for _, f := range files {
		m, err := Load(f, reg)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(m.Cells()) == 0 {
			t.Fatalf("%s: no cells", f)
		}
	}
	m, err := Load("examples/nightly.yaml", reg)
	if err != nil {
		t.Fatal(err)
	}
	// Fixed trials: the SPRT judges whole trials, so one deterministic known finding would stop
	// every cell before the other scenarios hold the trials the gate needs.
	if m.Adaptive != nil || m.Trials != 100 || len(m.Hosts) != 5 {
		t.Fatalf("nightly: adaptive = %+v trials=%d hosts=%d", m.Adaptive, m.Trials, len(m.Hosts))
	}
	if h, _ := m.Host("sid"); h.Profile != ProfileBwrapReady || h.PerTrialContainer {
		t.Fatalf("sid = %+v", h)
	}
	if m.Parallel != 2 || m.Timeout != 120*time.Second || m.Scenarios != "" {
		t.Fatalf("m = %+v", m)
	}
	if tg, ok := m.Target("srt"); !ok || tg.Name != "srt" {
		t.Fatalf("target = %+v", tg)
	}
	m, err = Load("examples/containers.yaml", reg)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := m.Host("bookworm-default")
	if !ok || h.Profile != ProfileDockerDefault || !h.PerTrialContainer || h.Image != "sandcheck/debian:bookworm" {
		t.Fatalf("host = %+v", h)
	}
	// The adaptive form the nightly used to show, parsed as a user would write it.
	m, err = Parse("m.yaml", []byte("targets: [{name: srt}]\ntrials: {until: \"rate<=0.01 vs rate>=0.05\", alpha: 0.05, beta: 0.05, max: 2000}\n"), reg)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Adaptive
	if a == nil || a.P0 != 0.01 || a.P1 != 0.05 || a.Alpha != 0.05 || a.Beta != 0.05 || a.Max != 2000 || m.Trials != 2000 {
		t.Fatalf("adaptive = %+v trials=%d", a, m.Trials)
	}
}

func TestRemoteHostFields(t *testing.T) {
	src := `targets: [{name: srt}]
hosts:
  - {name: box, kind: ssh, address: "h:2222", login: u, key_file: /k, known_hosts: [/a, /b]}
  - {name: w, kind: wsl, distro: Debian, login: me, cold_start: every}
  - {name: v, kind: vm, image: bookworm, memory_mib: 512, rootfs: trixie, accel: tcg, trials_per_boot: 10}
`
	m, err := Parse("m.yaml", []byte(src), testRegistry)
	if err != nil {
		t.Fatal(err)
	}
	s, w, v := m.Hosts[0], m.Hosts[1], m.Hosts[2]
	if s.KeyFile != "/k" || !slices.Equal(s.KnownHosts, []string{"/a", "/b"}) || s.Login != "u" ||
		w.Login != "me" || w.ColdStart != "every" || v.MemoryMiB != 512 || v.Rootfs != "trixie" || v.Accel != "tcg" || v.TrialsPerBoot != 10 {
		t.Fatalf("hosts = %+v", m.Hosts)
	}
	for _, c := range []struct{ yaml, want string }{
		{"hosts: [{name: w, kind: wsl, distro: D, cold_start: sometimes}]", `m.yaml:2: hosts[0].cold_start: unknown value "sometimes" (expected one of: first, every)`},
		{"hosts: [{name: v, kind: vm, image: x, memory_mib: 64}]", "m.yaml:2: hosts[0].memory_mib: 64 MiB is too little (expected at least 128)"},
		{"hosts: [{name: v, kind: vm, image: x, accel: hvf}]", `m.yaml:2: hosts[0].accel: unknown value "hvf" (expected one of: tcg, kvm)`},
		{"hosts: [{name: v, kind: vm, image: x, trials_per_boot: 0}]", "m.yaml:2: hosts[0].trials_per_boot: must be at least 1"},
		{"hosts: [{name: s, kind: ssh, address: a, key_file: [1]}]", "m.yaml:2: hosts[0].key_file:"},
	} {
		_, err := Parse("m.yaml", []byte("targets: [{name: srt}]\n"+c.yaml+"\n"), testRegistry)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.yaml, err, c.want)
		}
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
  - {name: box, kind: ssh, address: "10.0.0.2:22", login: ci}
  - {name: win, kind: wsl, distro: Ubuntu}
  - {name: qemu, kind: vm, image: debian.qcow2}
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
	if h, _ := m.Host("box"); h.Address != "10.0.0.2:22" || h.Login != "ci" {
		t.Fatalf("ssh = %+v", h)
	}
	if h, _ := m.Host("win"); h.Distro != "Ubuntu" {
		t.Fatalf("wsl = %+v", h)
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
	var cells []journal.Cell
	for i := range 23 {
		cells = append(cells, journal.Cell{ID: fmt.Sprint(i)})
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
  - {name: ctr, kind: container, image: i, user: root}
  - {name: box, kind: ssh, address: a, login: root, user: dev}
  - {name: v, kind: vm, image: bookworm}
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
		{"hosts: [{name: s, kind: ssh, address: a, user: root, login: [x]}]", "m.yaml:2: hosts[0].login: expected the account to log in as"},
		{"hosts: [{name: v, kind: vm, image: bookworm, user: [root, ci]}]", `m.yaml:2: hosts[0].user: "ci": a vm guest has only unprivileged and root`},
	} {
		_, err := Parse("m.yaml", []byte("targets: [{name: srt}]\n"+c.yaml+"\n"), testRegistry)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.yaml, err, c.want)
		}
	}
}
