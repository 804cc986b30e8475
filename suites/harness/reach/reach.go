//go:build linux

// Package reach checks what the caller of sandcheck hands the sandbox that the sandbox's user
// cannot reach. The caller runs sandcheck as root; the sandbox runs as its user
// (fixtures/users) with the caller's PATH, and what that user cannot reach it silently does
// without: a PATH entry it cannot search is skipped by every lookup, so a shim a user put first
// on PATH in a root-only directory (their own fault, injected by hand) is not what the sandbox
// starts, and the trial reads `correct` for a fault that never happened; a sandbox executable it
// cannot run never starts, which a fail-closed scenario counts as a loud refusal. Check finds
// both before anything runs; trial, preflight and run refuse on them (docs/users.md).
//
// A settings file (--settings, a target's settings_file) is not among them: sandcheck reads it
// as root and gives the sandbox its own merged copy, so the sandbox's user never opens it.
package reach

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/targets"
)

// sandboxStarts are the programs sandboxes start by name from their session's PATH, whatever the
// target: a shell and env (`sh -c`, `#!/usr/bin/env node`), which (srt finds bwrap and socat with
// it), node and npm (srt, Claude Code's and Codex's npm packages), the helpers srt and Claude Code
// start (socat, bwrap, rg), firejail, git (Claude Code). A target adds its seams' tools and its
// own program (Check).
var sandboxStarts = []string{"sh", "bash", "env", "which", "node", "npm", "socat", "bwrap", "rg", "firejail", "git"}

// Program is the sandbox's own executable, and how the run named it.
type Program struct {
	// What names its origin in messages: "--target-path", "m.yaml:4: targets[0].settings.path"
	// (a matrix's file:line: field), "" when the adapter found it itself.
	What string
	Path string // an absolute path, or a name looked up on PATH
}

// Reach is what the caller hands the sandbox that the sandbox's user cannot reach.
type Reach struct {
	User *users.Account
	// Refuse are reasons the run would test something other than what was asked: each names
	// the entry or file, why the user cannot reach it, and what the sandbox would do instead.
	Refuse []string
	// Warn are PATH entries the user cannot search that hold nothing the sandbox starts by name.
	Warn []string
}

// Error refuses a run whose sandbox's user cannot reach what the run hands it.
type Error struct{ Reach }

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the sandbox runs as %s, who cannot reach what this run hands it, so the run would test something other than you asked:", e.User)
	for _, r := range e.Refuse {
		b.WriteString("\n  - " + r)
	}
	fmt.Fprintf(&b, "\nmake each reachable by %s (every directory on the way enterable by it, the file readable and runnable: e.g. shims in a directory under /usr/local or /opt, mode 0755), take the entry out of PATH, or run the sandbox as root: --user root", e.User.Name)
	return b.String()
}

// Err is an *Error when the run must be refused, nil otherwise.
func (r Reach) Err() error {
	if len(r.Refuse) == 0 {
		return nil
	}
	return &Error{r}
}

// Check checks, for the sandbox's user acct, the caller's PATH (path) and the target's own
// program: every name the sandbox starts must resolve for the user to the file it resolves to
// for the caller, and the program must be runnable. Root reaches everything.
func Check(acct *users.Account, t targets.Target, prog Program, path string) Reach {
	r := Reach{User: acct}
	if acct.IsRoot() {
		return r
	}
	names := slices.Clone(sandboxStarts)
	if s, ok := t.(targets.Seamed); ok {
		for _, seam := range s.Seams() {
			for _, prefix := range []string{"helper:", "path:"} {
				if n, ok := strings.CutPrefix(string(seam), prefix); ok {
					names = append(names, n)
				}
			}
		}
	}
	// The program, and its script's interpreter: a name is looked up, a path must be runnable.
	var needs []users.Need
	var needWhat []string
	progWhat := prog.What
	if progWhat == "" {
		progWhat = "the sandbox " + t.Name()
	}
	switch {
	case prog.Path == "":
	case !strings.ContainsRune(prog.Path, '/'):
		names = append(names, prog.Path)
	default:
		needs = append(needs, users.Need{Access: users.Exec, Path: prog.Path})
		needWhat = append(needWhat, progWhat)
		if interp, args := shebang(prog.Path); interp != "" {
			needs = append(needs, users.Need{Access: users.Read, Path: prog.Path}, users.Need{Access: users.Exec, Path: interp})
			needWhat = append(needWhat, progWhat, progWhat+" (its interpreter)")
			if filepath.Base(interp) == "env" && len(args) > 0 {
				names = append(names, args[0])
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	entries, lookups, errs := acct.OnPath(path, names, needs...)

	// The program's needs go in order (run it, read it, run its interpreter): the first unmet
	// one is the reason.
	for i, err := range errs {
		if err != nil {
			how := map[users.Access]string{users.Exec: "run", users.Read: "read"}[needs[i].Access]
			r.Refuse = append(r.Refuse, fmt.Sprintf("%s: user %s cannot %s %s: %s; the sandbox would not start, which a scenario that wants it to refuse counts as a refusal",
				needWhat[i], acct.Name, how, needs[i].Path, acct.Why(needs[i].Path, needs[i].Access)))
			break
		}
	}
	// A name the sandbox starts whose lookup ends elsewhere for the user than for the caller,
	// told by the PATH entry that holds the caller's file.
	byDir := map[string][]users.PathLookup{}
	for _, l := range lookups {
		if l.Differs() {
			d := filepath.Dir(l.Root)
			byDir[d] = append(byDir[d], l)
		}
	}
	var quiet []users.PathEntry // blocked, holding nothing the sandbox starts: warnings
	for _, e := range entries {
		ls := byDir[e.Dir]
		switch {
		case e.Blocked != nil && len(ls) > 0:
			r.Refuse = append(r.Refuse, fmt.Sprintf("PATH entry %d, %s: user %s cannot search it: %v; your PATH finds %s there, which the sandbox starts by name: as %s %s",
				e.Pos, e.Dir, acct.Name, e.Blocked, lookupNames(ls), acct.Name, instead(ls)))
		case e.Blocked != nil:
			quiet = append(quiet, e)
		default:
			for _, l := range ls { // the entry is searchable, the file is not runnable
				r.Refuse = append(r.Refuse, fmt.Sprintf("PATH entry %d, %s: your PATH finds %s there, which the sandbox starts by name, but %v: as %s %s",
					e.Pos, e.Dir, l.Name, l.Why, acct.Name, instead([]users.PathLookup{l})))
			}
		}
	}
	r.Warn = warnings(acct, quiet)
	return r
}

// warnings are one line per reason for the PATH entries the sandbox's user cannot search that
// hold nothing it starts by name (a root's HOME holds several on many machines).
func warnings(acct *users.Account, quiet []users.PathEntry) []string {
	var whys []string
	by := map[string][]users.PathEntry{}
	for _, e := range quiet {
		why := e.Blocked.Error()
		if by[why] == nil {
			whys = append(whys, why)
		}
		by[why] = append(by[why], e)
	}
	var out []string
	for _, why := range whys {
		es := by[why]
		var dirs, hidden []string
		for _, e := range es {
			dirs = append(dirs, e.Dir)
			hidden = append(hidden, e.Hidden...)
		}
		what, it := "PATH entry", "it"
		if len(es) > 1 {
			what, it = "PATH entries", "them"
		}
		out = append(out, fmt.Sprintf("%s %s: user %s cannot search %s: %s; %s", what, strings.Join(dirs, ", "), acct.Name, it, why, hiddenSummary(hidden)))
	}
	return out
}

// hiddenSummary says what PATH entries the sandbox's user cannot search keep from the sandbox.
func hiddenSummary(hidden []string) string {
	if len(hidden) == 0 {
		return "your PATH finds nothing there that an earlier entry does not hold"
	}
	const show = 4
	list := strings.Join(hidden[:min(show, len(hidden))], ", ")
	if len(hidden) > show {
		list += fmt.Sprintf(", ... (%d in all)", len(hidden))
	}
	return fmt.Sprintf("the sandbox does not see what your PATH finds there (%s), none of it a program the sandbox starts by name", list)
}

// instead says what the user's lookups find in place of the caller's.
func instead(ls []users.PathLookup) string {
	var out []string
	for _, l := range ls {
		s := "it would find no " + l.Name + " at all"
		if l.Account != "" {
			s = "it would start " + l.Account + " instead"
		}
		if len(ls) > 1 {
			s = "for " + l.Name + " " + s
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func lookupNames(ls []users.PathLookup) string {
	n := make([]string, len(ls))
	for i, l := range ls {
		n[i] = l.Name
	}
	return strings.Join(n, ", ")
}

// shebang reads a script's interpreter line: the interpreter and its arguments ("" when p is
// not a script, or cannot be read).
func shebang(p string) (string, []string) {
	f, err := os.Open(p)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return "", nil
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil
	}
	args := fields[1:]
	if len(args) > 0 && (args[0] == "-S" || strings.HasPrefix(args[0], "-")) {
		args = args[1:] // env -S node ...
	}
	return fields[0], args
}
