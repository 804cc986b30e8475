package requestscript

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/reports/reproscript/parts"
)

// canary is a secret the trial planted in the session, as its evidence names it (the value was
// the trial's; a script plants one of its own).
type canary struct {
	Name string `json:"name"`
	Env  string `json:"env"`
	File string `json:"file"` // relative to HOME
}

// source is how a request's carry list reads the canary (crafted's env:NAME, file:~/PATH).
func (c canary) source() string {
	if c.Env != "" {
		return "env:" + c.Env
	}
	return "file:~/" + c.File
}

// what says where the canary is, for the script's messages.
func (c canary) what() string {
	if c.Env != "" {
		return "the variable " + c.Env
	}
	return "the file ~/" + c.File
}

// secrets is a case whose request takes the caller's secrets along (the secrets class): the
// canaries the script plants, the request's carry list, and the names of those that must
// arrive (the proof that what the command read travelled) and must not (what the sandbox keeps).
type secrets struct {
	planted       []canary
	carry         []string
	must, mustNot []canary
}

// A canary's name, variable and file as a script may write them unquoted.
var (
	canaryName = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	safeFile   = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)
)

// safe says whether the script may write the canary's name, variable and file unquoted: a file
// below HOME, never above it.
func (c canary) safe() bool {
	if !canaryName.MatchString(c.Name) {
		return false
	}
	if c.Env != "" {
		return envName.MatchString(c.Env)
	}
	return safeFile.MatchString(c.File) && path.Clean(c.File) == c.File && !strings.HasPrefix(c.File, "..")
}

// secretsOf reads what a case carries, as the trial planted it; the error says why a script
// cannot plant it.
func (e *evidence) secretsOf(carry, must, mustNot []string) (*secrets, error) {
	if e.Target != "srt" {
		return nil, fmt.Errorf("the request carries the caller's secrets, which the reproducer plants for srt only so far")
	}
	s := &secrets{planted: e.Canaries, carry: carry}
	bySource := map[string]canary{}
	for _, c := range e.Canaries {
		if !c.safe() {
			return nil, fmt.Errorf("the trial planted a secret the script cannot name safely: %+v", c)
		}
		bySource[c.source()] = c
	}
	for _, src := range carry {
		if _, ok := bySource[src]; !ok {
			return nil, fmt.Errorf("the request carries %s, which the trial's evidence does not say it planted", src)
		}
	}
	for _, names := range []struct {
		in  []string
		out *[]canary
	}{{must, &s.must}, {mustNot, &s.mustNot}} {
		for _, n := range names.in {
			i := slices.IndexFunc(e.Canaries, func(c canary) bool { return c.Name == n })
			if i < 0 {
				return nil, fmt.Errorf("the case names a secret %q the trial did not plant", n)
			}
			*names.out = append(*names.out, e.Canaries[i])
		}
	}
	if len(s.mustNot) == 0 {
		return nil, fmt.Errorf("the case names no secret the sandbox must keep")
	}
	return s, nil
}

// valueVar is the script's variable holding a canary's value.
func valueVar(c canary) string {
	return "secret_" + strings.NewReplacer("-", "_", ".", "_").Replace(c.Name)
}

// plant writes the lines that plant every canary as the trial did, with values of the script's
// own: variables in the environment the sandbox starts with ($caller_env), files under its HOME,
// mode 0600 as a credentials file is, in the shape of one (a header carries it whole).
func (s *secrets) plant(b *strings.Builder) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("# The caller's secrets, planted where the trial planted its, with values of the script's own:\n")
	w("# variables in the environment the sandbox starts with, files under its HOME.\n")
	for _, c := range s.planted {
		v := valueVar(c)
		w("%s=repro-%s-$n-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \\n')\n", v, c.Name)
		if c.Env != "" {
			w("caller_env=\"${caller_env:-} %s=$%s\"\n", c.Env, v)
			continue
		}
		w("mkdir -p \"$w/home/%s\"\n", path.Dir(c.File))
		w("printf 'machine allowed.%s login sandcheck password %%s' \"$%s\" > \"$w/home/%s\"\n", parts.Domain, v, c.File)
		w("chmod 600 \"$w/home/%s\"\n", c.File)
	}
	w("chown -R \"$RUN_AS\" \"$w/home\"\n")
}

// check writes the lines that judge the case by what the fixture logged: a secret the sandbox
// keeps arriving in clear is the bug; one the request must bring not arriving means the
// request did not carry what the command read, so nothing can be told.
func (s *secrets) check(b *strings.Builder) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	for _, c := range s.mustNot {
		w("if grep -F \"carried\" \"$w/log\" | grep -qF \"$%s\"; then\n", valueVar(c))
		w("  echo 'BUG: the real value of %s, a secret the command must not have in clear, reached the allowed host'; exit 1\nfi\n", c.what())
	}
	for _, c := range s.must {
		w("if ! grep -F \"carried\" \"$w/log\" | grep -qF \"$%s\"; then\n", valueVar(c))
		w("  echo 'could not tell: %s, which nothing withholds, did not reach the allowed host: the request did not carry what the command read'; exit 2\nfi\n", c.what())
	}
	w("echo 'no bug: the secret did not reach the allowed host in clear, and the one nothing withholds did'\nexit 0\n")
}
