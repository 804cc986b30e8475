// Package doccheck finds what GitHub would render as a broken relative link in the repository's
// Markdown: a link to a file or directory the repository does not track, an #anchor no heading
// of the target file makes, and any link or path that leaves the repository (`../shared`, a
// file: URL), which a reader of the repository on GitHub cannot follow. Absolute http(s) links
// are not checked: they need the network, and they are not the repository's to keep.
package doccheck

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Problem is one broken link or outside path.
type Problem struct {
	File   string // slash path from the repository root
	Line   int
	Target string // the link's destination or the path as written
	Msg    string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Target, p.Msg)
}

// Repo is the set of files git tracks: a link to an untracked file (out/, a symlinked tool
// directory) works on this machine and is broken on GitHub and in a fresh clone.
type Repo struct {
	Root    string
	files   map[string]bool // slash paths from Root
	dirs    map[string]bool // every directory holding a tracked file, "" being the root
	anchors map[string]map[string]bool
}

// Open lists the tracked files of the repository at root with git.
func Open(root string) (*Repo, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached").Output()
	if err != nil {
		return nil, fmt.Errorf("doccheck: git ls-files in %s: %w", root, err)
	}
	var names []string
	for _, n := range bytes.Split(out, []byte{0}) {
		if len(n) > 0 {
			names = append(names, string(n))
		}
	}
	return NewRepo(root, names), nil
}

// NewRepo is a Repo of the given tracked files (slash paths from root).
func NewRepo(root string, tracked []string) *Repo {
	r := &Repo{Root: root, files: map[string]bool{}, dirs: map[string]bool{"": true}, anchors: map[string]map[string]bool{}}
	for _, f := range tracked {
		r.files[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			r.dirs[d] = true
		}
	}
	return r
}

// Markdown returns the tracked Markdown files, sorted.
func (r *Repo) Markdown() []string {
	var md []string
	for f := range r.files {
		if isMarkdown(f) {
			md = append(md, f)
		}
	}
	slices.Sort(md)
	return md
}

// CheckAll checks every tracked Markdown file.
func (r *Repo) CheckAll() ([]Problem, error) {
	var all []Problem
	for _, f := range r.Markdown() {
		ps, err := r.CheckFile(f)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	return all, nil
}

// CheckFile checks one Markdown file of the repository (a slash path from the root).
func (r *Repo) CheckFile(name string) ([]Problem, error) {
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	return r.Check(name, data), nil
}

var (
	// [text](dest) and ![alt](dest), dest optionally in <>, optionally followed by a title. The
	// text may span lines (code spans are blanked before this runs, so their brackets are not
	// seen).
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	// [label]: dest
	refDef = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)`)
	// href="..." and src="..." of inline HTML.
	htmlLink = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*"([^"]*)"`)
	// A ../ path in the text (a code span included): `../shared/seed/`. Three dots are an
	// ellipsis (`.../filesystem`), not a path.
	dotdotPath = regexp.MustCompile("(?:^|[\\s(`'\"\\[])((?:\\.\\./)+[^\\s`'\")\\]]*)")
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	lineAnchor = regexp.MustCompile(`^L(\d+)(?:-L(\d+))?$`)
)

// Check checks the Markdown text of name (a slash path from the repository root).
func (r *Repo) Check(name string, data []byte) []Problem {
	prose := blankFences(data)
	links := blankCodeSpans(prose)
	lineOf := func(off int) int { return 1 + bytes.Count(data[:off], []byte{'\n'}) }
	var ps []Problem
	seen := map[string]bool{}
	add := func(off int, target, msg string) {
		p := Problem{File: name, Line: lineOf(off), Target: target, Msg: msg}
		if k := p.String(); !seen[k] {
			seen[k] = true
			ps = append(ps, p)
		}
	}
	text := bytes.Clone(prose) // the prose less the link destinations, for the ../ paths
	for _, re := range []*regexp.Regexp{inlineLink, refDef, htmlLink} {
		for _, m := range re.FindAllSubmatchIndex(links, -1) {
			dest := strings.TrimSuffix(strings.TrimPrefix(string(links[m[2]:m[3]]), "<"), ">")
			if msg := r.checkLink(name, dest); msg != "" {
				add(m[2], dest, msg)
			}
			for i := m[2]; i < m[3]; i++ {
				text[i] = ' '
			}
		}
	}
	for _, m := range dotdotPath.FindAllSubmatchIndex(text, -1) {
		p := strings.TrimRight(string(text[m[2]:m[3]]), ".,;:!?`'\")] \t\n")
		if msg := r.checkPath(name, p); msg != "" {
			add(m[2], p, "a ../ path in the text: "+msg)
		}
	}
	slices.SortStableFunc(ps, func(a, b Problem) int { return a.Line - b.Line })
	return ps
}

// checkLink returns why dest, a link destination in the Markdown file from, is broken ("" if it
// is not, or is not the repository's: http(s), mailto).
func (r *Repo) checkLink(from, dest string) string {
	dest = strings.TrimSpace(dest)
	switch {
	case dest == "":
		return "an empty link"
	case strings.HasPrefix(dest, "//"):
		return "" // protocol-relative: another host
	case scheme.MatchString(dest):
		if s := strings.ToLower(dest[:strings.IndexByte(dest, ':')]); s == "file" {
			return "a file: URL points outside the repository"
		}
		return ""
	}
	p, frag, hasFrag := strings.Cut(dest, "#")
	p, _, _ = strings.Cut(p, "?")
	if up, err := url.PathUnescape(p); err == nil {
		p = up
	}
	if uf, err := url.PathUnescape(frag); err == nil {
		frag = uf
	}
	target := from
	if p != "" {
		var msg string
		if target, msg = r.resolve(from, p); msg != "" {
			return msg
		}
	}
	if !hasFrag {
		return ""
	}
	return r.checkAnchor(target, frag)
}

// checkPath returns why p, a ../ path written in the text of from, points outside the
// repository or at nothing in it.
func (r *Repo) checkPath(from, p string) string {
	_, msg := r.resolve(from, p)
	return msg
}

// resolve returns the tracked file or directory p (relative to the Markdown file from, or to the
// root when it starts with /, as GitHub resolves it) names, or why it names none.
func (r *Repo) resolve(from, p string) (string, string) {
	var joined string
	if strings.HasPrefix(p, "/") {
		joined = path.Clean(strings.TrimLeft(p, "/"))
	} else {
		joined = path.Join(path.Dir(from), p)
	}
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "", "points outside the repository"
	}
	if joined == "." {
		joined = ""
	}
	if r.files[joined] || r.dirs[joined] {
		return joined, ""
	}
	return "", fmt.Sprintf("no such file or directory in the repository (%s)", displayPath(joined))
}

func displayPath(p string) string {
	if p == "" {
		return "the root"
	}
	return p
}

// checkAnchor returns why #frag names nothing in target (a tracked file or directory).
func (r *Repo) checkAnchor(target, frag string) string {
	switch {
	case frag == "":
		return ""
	case r.dirs[target] && !r.files[target]:
		return fmt.Sprintf("#%s on a directory (%s)", frag, displayPath(target))
	case isMarkdown(target):
		anchors, err := r.anchorsOf(target)
		if err != nil {
			return err.Error()
		}
		if !anchors[frag] {
			return fmt.Sprintf("no heading or anchor #%s in %s", frag, target)
		}
		return ""
	}
	// Any other file: GitHub's line anchors, #L12 or #L12-L20, within the file.
	m := lineAnchor.FindStringSubmatch(frag)
	if m == nil {
		return fmt.Sprintf("#%s: %s is not Markdown, so only line anchors (#L12, #L12-L20) resolve", frag, target)
	}
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(target)))
	if err != nil {
		return fmt.Sprintf("#%s: %v", frag, err)
	}
	lines := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	for _, s := range m[1:] {
		if n, _ := strconv.Atoi(s); s != "" && (n < 1 || n > lines) {
			return fmt.Sprintf("#%s: %s has %d lines", frag, target, lines)
		}
	}
	return ""
}

func (r *Repo) anchorsOf(name string) (map[string]bool, error) {
	if a, ok := r.anchors[name]; ok {
		return a, nil
	}
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	a := Anchors(data)
	r.anchors[name] = a
	return a, nil
}

func isMarkdown(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextLine = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\s[^>]*\b(?:name|id)\s*=\s*"([^"]+)"`)
	htmlID     = regexp.MustCompile(`(?i)<[a-z][a-z0-9]*\s[^>]*\bid\s*=\s*"([^"]+)"`)
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// Anchors returns the #anchors a Markdown file has on GitHub: one per heading (Slug, with -1,
// -2, ... for repeats) and the name or id of its inline HTML elements.
func Anchors(data []byte) map[string]bool {
	text := blankFences(data)
	lines := strings.Split(string(text), "\n")
	out := map[string]bool{}
	count := map[string]int{}
	addHeading := func(h string) {
		s := Slug(h)
		if n := count[s]; n > 0 {
			count[s]++
			s = fmt.Sprintf("%s-%d", s, n)
		} else {
			count[s] = 1
		}
		out[s] = true
	}
	for i, l := range lines {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		for _, m := range htmlID.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(l); m != nil && !strings.HasPrefix(strings.TrimLeft(l, " "), "#!") {
			addHeading(m[1])
			continue
		}
		// Setext: a paragraph line underlined with === or ---. A --- after a blank line is a
		// thematic break, and table and list lines are not paragraphs.
		if i+1 < len(lines) && setextLine.MatchString(lines[i+1]) && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "|") &&
			!atxHeading.MatchString(l) && !strings.HasPrefix(strings.TrimSpace(l), "- ") && !strings.HasPrefix(strings.TrimSpace(l), "* ") {
			addHeading(l)
		}
	}
	return out
}

// Slug is GitHub's anchor for a heading's text: the rendered text (links become their text,
// code spans their content, HTML tags and emphasis marks go), lower-cased, spaces turned into
// '-', and punctuation other than '-' and '_' dropped.
func Slug(heading string) string {
	h := strings.TrimSpace(heading)
	h = mdLink.ReplaceAllString(h, "$1")
	h = htmlTag.ReplaceAllString(h, "")
	h = stripUnderscoreEmphasis(h)
	var b strings.Builder
	for _, c := range strings.ToLower(h) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.IsMark(c):
			b.WriteRune(c)
		}
	}
	return b.String()
}

// stripUnderscoreEmphasis drops the _ of _emphasis_ and __strong__ outside code spans; an
// underscore inside a word (snake_case) or a code span is text and stays in the anchor.
func stripUnderscoreEmphasis(h string) string {
	var b strings.Builder
	inCode := false
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c == '`' {
			inCode = !inCode
			continue // the backticks themselves are punctuation
		}
		if c == '_' && !inCode {
			prevWord := i > 0 && isWordByte(h[i-1])
			nextWord := i+1 < len(h) && isWordByte(h[i+1])
			if !prevWord || !nextWord {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

var fence = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")

// blankFences returns data with the contents of fenced code blocks (and the fences) replaced by
// spaces, newlines kept, so offsets and line numbers stay those of data.
func blankFences(data []byte) []byte {
	out := bytes.Clone(data)
	var open string
	start := 0
	for start < len(out) {
		end := bytes.IndexByte(out[start:], '\n')
		if end < 0 {
			end = len(out)
		} else {
			end += start
		}
		line := string(out[start:end])
		blank := open != ""
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case open == "":
				open, blank = m[1], true
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(line[len(m[0]):]) == "":
				open = ""
			}
		}
		if blank {
			for i := start; i < end; i++ {
				out[i] = ' '
			}
		}
		start = end + 1
	}
	return out
}

// blankCodeSpans returns data with its code spans (`x`, “x“) replaced by spaces, newlines
// kept: a link inside a code span is text.
func blankCodeSpans(data []byte) []byte {
	out := bytes.Clone(data)
	for i := 0; i < len(out); {
		if out[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(out) && out[i+n] == '`' {
			n++
		}
		closeAt := -1
		for j := i + n; j < len(out); {
			if out[j] != '`' {
				if out[j] == '\n' && j+1 < len(out) && out[j+1] == '\n' {
					break // a span does not cross a blank line
				}
				j++
				continue
			}
			k := 0
			for j+k < len(out) && out[j+k] == '`' {
				k++
			}
			if k == n {
				closeAt = j
				break
			}
			j += k
		}
		if closeAt < 0 {
			i += n
			continue
		}
		for j := i; j < closeAt+n; j++ {
			if out[j] != '\n' {
				out[j] = ' '
			}
		}
		i = closeAt + n
	}
	return out
}
