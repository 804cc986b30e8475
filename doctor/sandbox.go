package doctor

import "github.com/sandcheck/sandcheck/targets"

// SandboxBuild is what a fingerprint says of the sandbox under test, from its adapter as built
// (t, err): the build's version and executable (the build of a version's install when the cell
// chose one), or why it is missing.
func SandboxBuild(t targets.Target, err error) (version, path string) {
	if err != nil {
		return "missing: " + err.Error(), ""
	}
	if p, ok := t.(interface{ Path() string }); ok {
		path = p.Path()
	}
	return t.Version(), path
}

// UseSandbox names, in o, the sandbox under test: name (the target's), its build and its path.
func (o *Options) UseSandbox(name string, t targets.Target, err error) {
	o.SandboxName = name
	o.SandboxVersion, o.SandboxPath = SandboxBuild(t, err)
}
