package main

import (
	"flag"

	"github.com/sandcheck/sandcheck/fixtures/users"
)

// trialOptions are shared by trial, run and preflight.
type trialOptions struct {
	target, targetPath, fault, settings, hostnames, labels string
	targetSettings                                         string // the matrix target's settings, one JSON object
	user                                                   string // who the sandbox runs as (one-trial commands)
}

// userHelp is the --user flag's help, shared by every command that has it.
const userHelp = "who the sandbox runs as: " + users.Unprivileged + " (a dedicated account sandcheck creates: " +
	users.DedicatedName + "), " + users.Root + ", or an existing account's name"

// bind registers the shared flags; withFault is for the commands that run one cell (trial,
// preflight, repro): they also take one --fault and one --user (run takes lists of both).
func (o *trialOptions) bind(fs *flag.FlagSet, withFault bool) {
	fs.StringVar(&o.target, "target", "srt", "sandbox under test")
	fs.StringVar(&o.targetPath, "target-path", "", "the sandbox's executable (default: found by the adapter)")
	if withFault {
		fs.StringVar(&o.fault, "fault", "", "inject a fault: NAME[:k=v,...] (see `sandcheck faults`)")
		fs.StringVar(&o.user, "user", users.Default, userHelp)
	}
	fs.StringVar(&o.settings, "settings", "", "your own sandbox settings file, merged under the fixture's policy")
	fs.StringVar(&o.hostnames, "hostnames", "name", "address fixture hosts by name (private /etc/hosts) or ip")
	fs.StringVar(&o.targetSettings, "target-settings", "", "the target's settings as one JSON object (as in a matrix)")
	fs.StringVar(&o.labels, "label-filter", "", "Ginkgo label filter selecting scenarios (e.g. network, 'network && seed')")
}
