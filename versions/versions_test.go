package versions

import (
	"slices"
	"strings"
	"testing"
)

func TestCompareOrdersReleasesAndPrereleases(t *testing.T) {
	// Each entry is older than the next.
	order := []string{"0.0.1", "0.0.2", "0.0.10", "0.0.83", "0.1.0-alpha", "0.1.0-alpha.1", "0.1.0-alpha.beta",
		"0.1.0-beta.2", "0.1.0-beta.11", "0.1.0-rc.1", "0.1.0", "0.99.0-linux-x64", "0.99.0", "1.0.0"}
	for i := 0; i+1 < len(order); i++ {
		a, b := MustParse(order[i]), MustParse(order[i+1])
		if Compare(a, b) != -1 || Compare(b, a) != 1 {
			t.Errorf("%s should sort before %s", a, b)
		}
	}
	if Compare(MustParse("1.2"), MustParse("1.2.0")) != 0 || Compare(MustParse("v1.2.0+build.5"), MustParse("1.2.0")) != 0 {
		t.Error("missing components count as 0 and build metadata is ignored")
	}
	shuffled := []string{"0.0.10", "latest-ish", "0.0.2", "0.0.83", "0.0.1", "0.0.2"}
	if got := Sorted(shuffled); !slices.Equal(got, []string{"0.0.1", "0.0.2", "0.0.10", "0.0.83", "latest-ish"}) {
		t.Errorf("Sorted = %v (numeric order, duplicates dropped, non-versions last)", got)
	}
}

func TestParseRejectsNonVersions(t *testing.T) {
	for _, s := range []string{"", "latest", "0..1", "0.0.x", "1.2.3-", "+1.2", "0.0.-1", "1. 2"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func TestRange(t *testing.T) {
	r, err := ParseRange(">=0.0.60 <=0.0.83")
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]bool{"0.0.59": false, "0.0.60": true, "0.0.70": true, "0.0.83": true, "0.0.84": false, "0.1.0": false} {
		if r.Contains(MustParse(v)) != want {
			t.Errorf("%s in %s: want %v", v, r, want)
		}
	}
	open, _ := ParseRange(">0.0.80")
	if open.Contains(MustParse("0.0.80")) || !open.Contains(MustParse("1.0.0")) {
		t.Error("open range >0.0.80")
	}
	exact, _ := ParseRange("0.0.83")
	if !exact.Contains(MustParse("0.0.83")) || exact.Contains(MustParse("0.0.82")) {
		t.Error("bare version is =")
	}
	for _, bad := range []string{"", ">=x", ">=0.0.60 <=", "~0.0.60"} {
		if _, err := ParseRange(bad); err == nil {
			t.Errorf("ParseRange(%q) accepted", bad)
		}
	}
}

// srtLike is a registry listing shaped like sandbox-runtime's (gaps at 0.0.9, 0.0.22, 0.0.35-36)
// plus a platform build and a pre-release, which only an explicit name may select.
var srtLike = Published{
	Package: "@anthropic-ai/sandbox-runtime",
	Versions: []string{"0.0.1", "0.0.2", "0.0.8", "0.0.10", "0.0.21", "0.0.23", "0.0.34", "0.0.37", "0.0.60",
		"0.0.81", "0.0.82", "0.0.83", "0.0.84-linux-x64", "0.1.0-beta.1"},
	Tags: map[string]string{"latest": "0.0.83", "next": "0.1.0-beta.1"},
}

func TestSelectorsResolve(t *testing.T) {
	cases := []struct {
		sel  string
		want []string
	}{
		{"0.0.60", []string{"0.0.60"}},
		{"v0.0.21", []string{"0.0.21"}},
		{"latest", []string{"0.0.83"}},
		{"next", []string{"0.1.0-beta.1"}},
		{">=0.0.60 <=0.0.83", []string{"0.0.60", "0.0.81", "0.0.82", "0.0.83"}},
		{">0.0.81", []string{"0.0.82", "0.0.83"}},
		{">=0.1.0-beta.0", []string{"0.1.0-beta.1"}},
		{"*", []string{"0.0.1", "0.0.2", "0.0.8", "0.0.10", "0.0.21", "0.0.23", "0.0.34", "0.0.37", "0.0.60", "0.0.81", "0.0.82", "0.0.83"}},
		{"last:5", []string{"0.0.37", "0.0.60", "0.0.81", "0.0.82", "0.0.83"}},
		{"last = 2", []string{"0.0.82", "0.0.83"}},
		{"last:500", srtLike.Releases()},
		{"pinned", []string{"0.0.83"}},
	}
	for _, c := range cases {
		s, err := ParseSelector(c.sel)
		if err != nil {
			t.Errorf("ParseSelector(%q): %v", c.sel, err)
			continue
		}
		got, err := s.Resolve(srtLike, "0.0.83")
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q resolves to %v, %v; want %v", c.sel, got, err, c.want)
		}
	}
}

func TestSelectorErrorsSayWhatExists(t *testing.T) {
	cases := []struct{ sel, want string }{
		{"0.0.9", "nearest: 0.0.8, 0.0.10"},
		{"0.0.99", "newest: 0.0.83"},
		{"beta", `no dist-tag "beta" (tags: latest, next)`},
		{">=0.0.90", "releases: 0.0.1 .. 0.0.83, 12 in all"},
	}
	for _, c := range cases {
		s, err := ParseSelector(c.sel)
		if err != nil {
			t.Fatalf("ParseSelector(%q): %v", c.sel, err)
		}
		if _, err := s.Resolve(srtLike, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.sel, err, c.want)
		}
	}
	if _, err := mustSel(t, "pinned").Resolve(srtLike, ""); err == nil {
		t.Error("pinned without a pinned version must fail")
	}
	for _, bad := range []string{"", "last:0", "last:x", "lastly", "0.0.x!", ">=", "@1"} {
		if _, err := ParseSelector(bad); err == nil {
			t.Errorf("ParseSelector(%q) accepted", bad)
		}
	}
}

func TestExactVersionNeedsNoIndex(t *testing.T) {
	s := mustSel(t, "0.0.60")
	if s.NeedsIndex() || mustSel(t, "pinned").NeedsIndex() || !mustSel(t, "latest").NeedsIndex() || !mustSel(t, "last:3").NeedsIndex() {
		t.Fatal("NeedsIndex: only exact and pinned resolve without the registry")
	}
	got, err := s.Resolve(Published{}, "")
	if err != nil || !slices.Equal(got, []string{"0.0.60"}) {
		t.Fatalf("offline exact: %v %v", got, err)
	}
}

func TestResolveAllAndBetween(t *testing.T) {
	got, err := ResolveAll([]Selector{mustSel(t, "latest"), mustSel(t, "0.0.60"), mustSel(t, "last:2")}, srtLike, "")
	if err != nil || !slices.Equal(got, []string{"0.0.60", "0.0.82", "0.0.83"}) {
		t.Fatalf("ResolveAll = %v %v (union, deduplicated, oldest first)", got, err)
	}
	b, err := Between(srtLike, "0.0.21", "0.0.60")
	if err != nil || !slices.Equal(b, []string{"0.0.21", "0.0.23", "0.0.34", "0.0.37", "0.0.60"}) {
		t.Fatalf("Between = %v %v", b, err)
	}
	if _, err := Between(srtLike, "0.0.60", "0.0.21"); err == nil {
		t.Fatal("Between accepts a reversed pair")
	}
}

func mustSel(t *testing.T, s string) Selector {
	t.Helper()
	sel, err := ParseSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
