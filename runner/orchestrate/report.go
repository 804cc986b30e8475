package orchestrate

import (
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format"
	"github.com/sandcheck/sandcheck/reports/schema"
)

// Reports turns journals into the report model and writes it as report.json, report.md,
// junit.xml and report.html in dir; the model is returned even when writing fails. version is
// sandcheck's, repro the command line that reproduces the run; warnings go to log.
func Reports(dir string, journals []string, version, repro string, log io.Writer) (*schema.Report, error) {
	rep, res, err := aggregate.FromJournals(journals, aggregate.Options{SandcheckVersion: version})
	if err != nil {
		return nil, err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(log, "warning: %s\n", w)
	}
	return rep, format.WriteAll(dir, rep, format.Options{Repro: repro})
}
