package targets

// Findings is a target's list of known findings (where its real, healthy sandbox fails a spec),
// as its adapter's package embeds it: the YAML text and the repository file it comes from (for
// file:line in errors and in each finding's position). package knownfindings reads them.
type Findings struct {
	File string
	Data []byte
}

var findings byName[Findings]

// RegisterFindings gives a target's known findings; its adapter calls it from init, beside
// Register.
func RegisterFindings(name string, f Findings) { findings.set(name, f) }

// AllFindings returns the known findings of every linked target that has any, by target name.
func AllFindings() map[string]Findings { return findings.all() }

// FindingsNames lists the targets with known findings, sorted.
func FindingsNames() []string { return findings.names() }
