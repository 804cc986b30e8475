package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format"
)

// writeReports turns journals into report.json, report.md, junit.xml and report.html in dir.
func writeReports(dir string, journals []string, stderr io.Writer) error {
	rep, res, err := aggregate.FromJournals(journals, aggregate.Options{SandcheckVersion: Version})
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	return format.WriteAll(dir, rep, format.Options{Repro: "sandcheck " + strings.Join(reproArgs, " ")})
}

// reproArgs is the command line of this invocation, for the report's Repro section.
var reproArgs []string
