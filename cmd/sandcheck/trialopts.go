package main

import (
	"flag"
	"time"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
)

// trialOptions are shared by trial, run and preflight.
type trialOptions struct {
	orchestrate.Trial // --settings, --hostnames, --target-path, and the versions installed
	target, fault     string
	labels            string
	targetSettings    string        // the matrix target's settings, one JSON object
	user              string        // who the sandbox runs as (one-trial commands)
	budget            time.Duration // trial --budget
	// targets is every --target given, in order (run takes several; the others use the last,
	// target). Each is NAME or NAME@VERSION (a version, dist-tag, range or last:N).
	targets []string
}

// targetFlag is --target: repeatable, the last one is the target of a single trial.
type targetFlag struct{ o *trialOptions }

func (f targetFlag) String() string {
	if f.o == nil {
		return ""
	}
	return f.o.target
}

func (f targetFlag) Set(v string) error {
	f.o.target = v
	f.o.targets = append(f.o.targets, v)
	return nil
}

// userHelp is the --user flag's help, shared by every command that has it.
const userHelp = cli.UserHelp

// bind registers the shared flags; withFault is for the commands that run one cell (trial,
// preflight, repro): they also take one --fault and one --user (run takes lists of both).
func (o *trialOptions) bind(fs *flag.FlagSet, withFault bool) {
	o.target = "srt"
	fs.Var(targetFlag{o}, "target", "sandbox under test: `NAME[@VERSION]`, a version of an npm sandbox being a published one "+
		"(srt@0.0.60, srt@latest, 'srt@>=0.0.60 <=0.0.83', srt@last:5, srt@pinned; installed once into the npm cache); run takes several")
	fs.StringVar(&o.TargetPath, "target-path", "", "the sandbox's executable (default: found by the adapter)")
	if withFault {
		fs.StringVar(&o.fault, "fault", "", "inject a fault: NAME[:k=v,...] (see `sandcheck faults`)")
		fs.StringVar(&o.user, "user", model.UserDefault, userHelp)
	}
	fs.StringVar(&o.Settings, "settings", "", "your own sandbox settings file, merged under the fixture's policy")
	fs.StringVar(&o.Hostnames, "hostnames", "name", "address fixture hosts by name (private /etc/hosts) or ip")
	fs.StringVar(&o.targetSettings, "target-settings", "", "the target's settings as one JSON object (as in a matrix)")
	fs.StringVar(&o.labels, "label-filter", "", "Ginkgo label filter selecting scenarios (e.g. network, 'network && seed')")
}
