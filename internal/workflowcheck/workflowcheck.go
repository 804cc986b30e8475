// Package workflowcheck holds the GitHub workflows to one rule: a command that fails must fail
// its step. GitHub runs a `run:` step without `shell:` as `bash -e {0}`, which has no pipefail,
// so `sandcheck gate ... | tee gate.txt` succeeds whatever the gate said. `shell: bash` (on the
// step, the job's or the workflow's defaults) is `bash --noprofile --norc -eo pipefail {0}`.
package workflowcheck

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// PipefailBash is what GitHub runs for `shell: bash` ({0} is the script file).
var PipefailBash = []string{"bash", "--noprofile", "--norc", "-eo", "pipefail"}

// Step is one step of a job, with the shell GitHub would run its script with.
type Step struct {
	Job, Name, ID string
	Line          int
	Run           string // the script; "" for a `uses:` step
	Uses          string
	If            string
	Shell         string // effective: the step's, else the job's defaults, else the workflow's; "" = GitHub's default
	With          map[string]string
}

// Problem is a run step that can hide a failure.
type Problem struct {
	File string
	Line int
	Job  string
	Step string
	Msg  string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: job %s, step %q: %s", p.File, p.Line, p.Job, p.Step, p.Msg)
}

type workflow struct {
	Defaults defaults `yaml:"defaults"`
	Jobs     map[string]struct {
		Defaults defaults `yaml:"defaults"`
		Steps    []yaml.Node
	} `yaml:"jobs"`
}

type defaults struct {
	Run struct {
		Shell string `yaml:"shell"`
	} `yaml:"run"`
}

type step struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
	If    string            `yaml:"if"`
	Shell string            `yaml:"shell"`
	With  map[string]string `yaml:"with"`
}

// Steps parses a workflow and returns its steps, job by job in file order.
func Steps(name string, data []byte) ([]Step, error) {
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []Step
	for job, j := range w.Jobs {
		for _, n := range j.Steps {
			var s step
			if err := n.Decode(&s); err != nil {
				return nil, fmt.Errorf("%s:%d: job %s: %w", name, n.Line, job, err)
			}
			shell := s.Shell
			if shell == "" {
				shell = j.Defaults.Run.Shell
			}
			if shell == "" {
				shell = w.Defaults.Run.Shell
			}
			label := s.Name
			if label == "" {
				label = firstLine(s.Run + s.Uses)
			}
			out = append(out, Step{Job: job, Name: label, ID: s.ID, Line: n.Line, Run: s.Run, Uses: s.Uses, If: s.If, Shell: shell, With: s.With})
		}
	}
	// Map order is random; file order reads better and is stable.
	slices.SortFunc(out, func(a, b Step) int { return a.Line - b.Line })
	return out, nil
}

// Check returns every run step of the workflow that pipes one command into another while its
// shell does not fail the step on a failure inside the pipe.
func Check(name string, data []byte) ([]Problem, error) {
	steps, err := Steps(name, data)
	if err != nil {
		return nil, err
	}
	var ps []Problem
	for _, s := range steps {
		if s.Run == "" || !HasPipe(s.Run) || s.Shell == "bash" || setsPipefail(s.Run) {
			continue
		}
		shell := s.Shell
		if shell == "" {
			shell = "GitHub's default (bash -e {0}, no pipefail)"
		}
		ps = append(ps, Problem{File: name, Line: s.Line, Job: s.Job, Step: s.Name,
			Msg: fmt.Sprintf("the script pipes into another command but its shell is %s: a failure before the pipe passes; set `shell: bash` (-eo pipefail) or `set -o pipefail`", shell)})
	}
	return ps, nil
}

// CheckFile is Check on a file.
func CheckFile(path string) ([]Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workflowcheck: %w", err)
	}
	return Check(path, data)
}

var pipefail = regexp.MustCompile(`(?m)^\s*set\s.*\bpipefail\b`)

func setsPipefail(script string) bool { return pipefail.MatchString(script) }

// HasPipe reports whether a shell script pipes one command into another (`|` or `|&`, not `||`),
// outside quotes, comments and ${{ }} expressions. It is a scanner, not a shell parser: it errs
// towards seeing a pipe, which at worst asks for a pipefail that does no harm.
func HasPipe(script string) bool {
	s := []byte(script)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == '\'':
			i = skipTo(s, i+1, '\'')
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case c == '$' && bytes.HasPrefix(s[i:], []byte("${{")):
			if j := bytes.Index(s[i:], []byte("}}")); j >= 0 {
				i += j + 1
			}
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n'):
			i = skipTo(s, i, '\n')
		case c == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				i++ // ||: or, not a pipe
				continue
			}
			return true
		}
	}
	return false
}

func skipTo(s []byte, i int, c byte) int {
	for ; i < len(s) && s[i] != c; i++ {
	}
	return i
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
