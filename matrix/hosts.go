package matrix

import (
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sandcheck/sandcheck/matrix/yamlread"
	"github.com/sandcheck/sandcheck/model"
)

// Host is where trials run: a name, a kind, who the sandbox runs as there, and the kind's own
// settings as its driver read them from the entry (runner/hosts/<kind>).
type Host struct {
	Name string
	Kind string
	// Users are who the sandbox runs as on this host, each its own cell: unprivileged (the
	// default: a dedicated account sandcheck creates), root, or an account's name.
	Users []string
	// Settings are what the kind's HostKind.Settings returned (nil for a kind without any, or
	// when the registry knows no kinds).
	Settings any
}

// HostKind is what the matrix needs of a host kind's driver: the keys an entry of that kind may
// have besides name, kind and user, and how to read them.
type HostKind struct {
	Keys []string
	// Settings reads the kind's keys from an entry; problems go to s, which names file:line
	// and the field. Nil: the kind has no settings.
	Settings func(s *HostSettings) any
	// Unavailable says why this build cannot drive the kind ("" = it can); a matrix naming it
	// is refused while it is read, rather than every trial failing.
	Unavailable string
}

// HostSettings is one host entry as its kind's driver reads it: each read checks the value's
// type and records a file:line error naming the field when it is wrong.
type HostSettings struct {
	p      *parser
	item   *yaml.Node
	field  string // hosts[i]
	kind   string
	values map[string]*yaml.Node
	users  []string
}

// Name is the entry's name (for messages).
func (s *HostSettings) Name() string {
	if v := s.values["name"]; v != nil {
		return v.Value
	}
	return ""
}

// Users is the entry's user: list as read.
func (s *HostSettings) Users() []string { return s.users }

// Has says whether the entry sets key.
func (s *HostSettings) Has(key string) bool { return s.values[key] != nil }

// Errorf records a problem with key (at its line, or the entry's when it is not set).
func (s *HostSettings) Errorf(key, format string, args ...any) {
	n := s.values[key]
	if n == nil {
		n = s.item
	}
	s.p.Errorf(n, s.field+"."+key, format, args...)
}

// Required is a string the kind cannot do without; what describes it.
func (s *HostSettings) Required(key, what string) string {
	v := s.values[key]
	if v == nil {
		s.p.Errorf(s.item, s.field+"."+key, "missing (a %s host needs %s)", s.kind, what)
		return ""
	}
	str, _ := s.p.Str(v, s.field+"."+key, what)
	if str == "" && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		s.p.Errorf(v, s.field+"."+key, "empty (a %s host needs %s)", s.kind, what)
	}
	return str
}

// Optional is a string, "" when not set.
func (s *HostSettings) Optional(key, what string) string {
	if v := s.values[key]; v != nil {
		str, _ := s.p.Str(v, s.field+"."+key, what)
		return str
	}
	return ""
}

// OneOf is a string that must be one of values, "" when not set.
func (s *HostSettings) OneOf(key string, values ...string) string {
	str := s.Optional(key, "one of: "+strings.Join(values, ", "))
	if str != "" && !slices.Contains(values, str) {
		s.Errorf(key, "unknown value %q (expected one of: %s)", str, strings.Join(values, ", "))
	}
	return str
}

// PositiveInt is a whole number of at least 1, 0 when not set (or wrong).
func (s *HostSettings) PositiveInt(key, what string) int {
	if v := s.values[key]; v != nil {
		n, _ := s.p.PosInt(v, s.field+"."+key, what)
		return n
	}
	return 0
}

// Bool is true or false, false when not set.
func (s *HostSettings) Bool(key string) bool {
	var b bool
	if v := s.values[key]; v != nil && (v.Kind != yaml.ScalarNode || v.Decode(&b) != nil) {
		s.Errorf(key, "expected true or false, got %s", yamlread.Describe(v))
	}
	return b
}

// Strings is one string or a list of them, nil when not set; what describes them.
func (s *HostSettings) Strings(key, what string) []string {
	v := s.values[key]
	if v == nil {
		return nil
	}
	if v.Kind == yaml.ScalarNode {
		return []string{v.Value}
	}
	var out []string
	if v.Decode(&out) != nil {
		s.Errorf(key, "expected %s, got %s", what, yamlread.Describe(v))
	}
	return out
}

func (p *parser) hostKinds() []string {
	var k []string
	for x := range p.reg.HostKinds {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

func (p *parser) hosts(n *yaml.Node) []Host {
	var out []Host
	seen := map[string]int{}
	for _, it := range p.List(n, "hosts", "a list of hosts (- name: local, kind: local)",
		"expected at least one host, or leave hosts out for the local host") {
		item, field, i := it.Node, it.Field, it.Index
		if item.Kind != yaml.MappingNode {
			p.Errorf(item, field, "expected a mapping (name, kind, ...), got %s", yamlread.KindName(item))
			continue
		}
		h, ok := p.host(item, field)
		if !ok || h.Name == "" {
			continue
		}
		if prev, dup := seen[h.Name]; dup {
			p.Errorf(item, field+".name", "host %q is already defined as hosts[%d]", h.Name, prev)
			continue
		}
		seen[h.Name] = i
		out = append(out, h)
	}
	return out
}

// host reads one entry: its kind first (it decides which other keys are allowed), then name and
// user, then the kind's settings through its driver.
func (p *parser) host(item *yaml.Node, field string) (Host, bool) {
	var kindNode *yaml.Node
	for j := 0; j+1 < len(item.Content); j += 2 {
		if item.Content[j].Value == "kind" {
			kindNode = yamlread.Resolve(item.Content[j+1])
		}
	}
	kinds := strings.Join(p.hostKinds(), ", ")
	if kindNode == nil {
		p.Errorf(item, field+".kind", "missing (expected one of: %s)", kinds)
		return Host{}, false
	}
	kind, ok := p.Str(kindNode, field+".kind", "one of: "+kinds)
	if !ok {
		return Host{}, false
	}
	k, known := p.reg.HostKinds[kind]
	switch {
	case p.reg.HostKinds == nil: // no drivers: every key passes, nothing is read
	case !known:
		p.Errorf(kindNode, field+".kind", "unknown host kind %q (expected one of: %s)", kind, kinds)
		return Host{}, false
	case k.Unavailable != "":
		p.Errorf(kindNode, field+".kind", "%s", k.Unavailable)
		return Host{}, false
	}
	h := Host{Kind: kind}
	allowed := append([]string{"name", "kind", "user"}, k.Keys...)
	var f map[string]*yaml.Node
	if p.reg.HostKinds == nil {
		f = yamlread.AnyFields(item)
	} else {
		f = p.Fields(item, field, allowed, "a "+kind+" host")
	}
	if v := f["name"]; v != nil {
		if s, ok := p.Str(v, field+".name", "a unique host name"); ok {
			if !validName(s) {
				p.Errorf(v, field+".name", "%q is not a plain name (expected letters, digits, '.', '_' or '-')", s)
			}
			h.Name = s
		}
	} else {
		p.Errorf(item, field+".name", "missing (expected a unique host name)")
	}
	h.Users = p.users(f["user"], field+".user")
	if k.Settings != nil {
		h.Settings = k.Settings(&HostSettings{p: p, item: item, field: field, kind: kind, values: f, users: h.Users})
	}
	return h, true
}

// users reads a host's user: one spec or a list of them (an axis: each its own cell), default
// unprivileged.
func (p *parser) users(n *yaml.Node, field string) []string {
	if n == nil {
		return []string{model.UserDefault}
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			p.Errorf(n, field, "empty (expected %s, %s, an account name, or a list of them)", model.UserUnprivileged, model.UserRoot)
			return []string{model.UserDefault}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, item := range items {
		item = yamlread.Resolve(item)
		s, ok := p.Str(item, field, model.UserUnprivileged+", "+model.UserRoot+" or an account name")
		if !ok {
			continue
		}
		if err := model.CheckUser(s); err != nil {
			p.Errorf(item, field, "%v", err)
			continue
		}
		if seen[s] {
			p.Errorf(item, field, "user %q listed twice", s)
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return []string{model.UserDefault}
	}
	return out
}

// Host returns the host named name.
func (m *Matrix) Host(name string) (Host, bool) {
	for _, h := range m.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}
