//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/sandcheck/sandcheck/doctor"
	"github.com/sandcheck/sandcheck/suites/harness"
	"github.com/sandcheck/sandcheck/suites/specreport"
	"github.com/sandcheck/sandcheck/targets/srt"

	_ "github.com/sandcheck/sandcheck/suites" // the compiled specs
)

// testingT is the minimal testing.T Ginkgo needs outside `go test`.
type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

func init() {
	register("trial", "run the specs once, in this process (what `run` repeats)", trialCmd)
}

// env turns the options into the environment the specs read.
func (o *trialOptions) config() (harness.Config, error) {
	for k, v := range map[string]string{
		harness.EnvTarget: o.target, harness.EnvTargetPath: o.targetPath, harness.EnvFault: o.fault,
		harness.EnvSettings: o.settings, harness.EnvHostnames: o.hostnames,
	} {
		os.Setenv(k, v)
	}
	if o.targetSettings != "" {
		os.Setenv(harness.EnvTargetSet, o.targetSettings)
	}
	return harness.FromEnv()
}

func trialCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("trial", "[flags]", `  sandcheck trial --label-filter network -v
  sandcheck trial --fault bridge-absent --report out/ginkgo.json
  sandcheck trial --emit --fingerprint     # what the runner starts on every host`, stderr)
	var o trialOptions
	o.bind(fs, true)
	report := fs.String("report", "", "write Ginkgo's JSON report here")
	verbose := fs.Bool("v", false, "verbose Ginkgo output")
	emit := fs.Bool("emit", false, "end stdout with one "+strings.TrimSpace(specreport.EmitPrefix)+" line (for the runner)")
	fingerprint := fs.Bool("fingerprint", false, "include this host's fingerprint (sandcheck doctor) in the emitted result")
	if ok, code := parse(fs, args); !ok {
		return code
	}
	if _, err := o.config(); err != nil {
		fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
		return 2
	}
	reportFile := *report
	if reportFile == "" {
		f, err := os.CreateTemp("", "sandcheck-ginkgo-*.json")
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
			return 1
		}
		f.Close()
		reportFile = f.Name()
		defer os.Remove(reportFile)
	}
	ok := runSpecs(o.labels, reportFile, *verbose, stdout)
	t, err := specreport.ReadFile(reportFile)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
		return 1
	}
	if *emit {
		var fp json.RawMessage
		if *fingerprint {
			fp = hostFingerprint()
		}
		if err := specreport.Emit(stdout, t, fp); err != nil {
			fmt.Fprintf(stderr, "sandcheck trial: %v\n", err)
			return 1
		}
	} else {
		fmt.Fprintf(stdout, "outcome: %s  %s\n", t.Outcome, t.Hint)
	}
	if !ok {
		return 1
	}
	return 0
}

// runSpecs runs the compiled specs once in this process.
func runSpecs(labels, report string, verbose bool, out io.Writer) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	sc, rc := ginkgo.GinkgoConfiguration()
	sc.LabelFilter = labels
	sc.RandomizeAllSpecs = false
	rc.JSONReport = report
	rc.NoColor = true
	rc.Succinct = !verbose
	rc.Verbose = verbose
	ginkgo.GinkgoWriter.TeeTo(out)
	return ginkgo.RunSpecs(&testingT{}, "sandcheck", sc, rc)
}

// hostFingerprint describes the host a trial ran on, collected where it ran (a container or VM
// reports itself, not the runner's machine).
func hostFingerprint() json.RawMessage {
	opts := doctor.Options{}
	if t, err := srt.New(""); err == nil {
		opts.SandboxVersion, opts.SandboxPath = t.Version(), t.Path()
	}
	b, _ := json.Marshal(doctor.Collect(opts))
	return b
}
