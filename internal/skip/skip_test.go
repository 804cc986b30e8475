package skip

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// fakeTB records whether a helper skipped or failed the test. Like the real ones, Skip and Fatalf
// end the caller (a panic the runner recovers, where testing uses runtime.Goexit). Any other
// method of testing.TB is nil and panics: the helpers must not call it.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

type stopped struct{}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skip(args ...any) {
	f.skipped = fmt.Sprint(args...)
	panic(stopped{})
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(stopped{})
}

// runFake runs helper against a fake testing.TB and returns what it did to the test.
func runFake(helper func(tb testing.TB)) *fakeTB {
	f := &fakeTB{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopped); !ok {
					panic(r)
				}
			}
		}()
		helper(f)
	}()
	return f
}

// setCI sets $CI for this test ("" unsets it), restoring it afterwards.
func setCI(t *testing.T, v string) {
	t.Setenv(CIVar, v)
	if v == "" {
		os.Unsetenv(CIVar)
	}
}

// TestKinds: a tier or not-applicable skip is a skip everywhere; a skip for something missing is
// a skip outside CI and a failure under CI=true, with the same message.
func TestKinds(t *testing.T) {
	notRoot := func(tb testing.TB) {
		defer func(old func() int) { geteuid = old }(geteuid)
		geteuid = func() int { return 1000 }
		UnlessRoot(tb, "fixture namespaces")
	}
	cases := []struct {
		name    string
		helper  func(tb testing.TB)
		missing bool   // a skip outside CI, a failure in it
		want    string // the message, either way
	}{
		{"Tier", func(tb testing.TB) { Tier(tb, "recorder only (%s)", "SANDCHECK_RECORD=1") }, false, "recorder only (SANDCHECK_RECORD=1)"},
		{"UnlessLong", func(tb testing.TB) { UnlessLong(tb, "about 2 minutes") }, false, "long tier: set SANDCHECK_LONG=1 (about 2 minutes)"},
		{"NotApplicable", func(tb testing.TB) { NotApplicable(tb, "no filter for %s", "riscv64") }, false, "no filter for riscv64"},
		{"Missing", func(tb testing.TB) { Missing(tb, "io_uring: %s", "ENOSYS") }, true, "io_uring: ENOSYS"},
		{"UnlessRoot", notRoot, true, "needs root: fixture namespaces"},
		{"UnlessTools", func(tb testing.TB) { UnlessTools(tb, "run `make deps`", "sh", "sandcheck-no-such-tool") }, true,
			"sandcheck-no-such-tool not installed (run `make deps`)"},
	}
	for _, ci := range []string{"", "false", "true", "1"} {
		inCI := ci == "true" || ci == "1"
		for _, c := range cases {
			t.Run(c.name+"/CI="+ci, func(t *testing.T) {
				setCI(t, ci)
				t.Setenv(LongTierVar, "")
				f := runFake(c.helper)
				switch {
				case c.missing && inCI:
					if f.skipped != "" || !strings.Contains(f.failed, c.want) || !strings.Contains(f.failed, "CI must provide") {
						t.Errorf("skipped %q, failed %q: want a failure saying %q and that CI must provide it", f.skipped, f.failed, c.want)
					}
				default:
					if f.failed != "" || f.skipped != "SKIPPED LOUDLY: "+c.want {
						t.Errorf("skipped %q, failed %q: want the skip %q", f.skipped, f.failed, "SKIPPED LOUDLY: "+c.want)
					}
				}
			})
		}
	}
}

// What is there does not stop the test, in CI or not.
func TestPresentDoesNotStop(t *testing.T) {
	setCI(t, "true")
	root := func(tb testing.TB) {
		defer func(old func() int) { geteuid = old }(geteuid)
		geteuid = func() int { return 0 }
		UnlessRoot(tb, "x")
	}
	for name, helper := range map[string]func(testing.TB){
		"UnlessRoot":  root,
		"UnlessTools": func(tb testing.TB) { UnlessTools(tb, "x", "sh") },
	} {
		if f := runFake(helper); f.skipped != "" || f.failed != "" {
			t.Errorf("%s: skipped %q, failed %q", name, f.skipped, f.failed)
		}
	}
}
