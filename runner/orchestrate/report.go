package orchestrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/reports/aggregate"
	"github.com/sandcheck/sandcheck/reports/format"
	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/wire/journal"
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
	return rep, format.WriteAll(dir, rep, format.Options{Repro: repro, Settings: settingsUsed(journals)})
}

// settingsUsed finds the sandbox settings of the first trial that recorded them (the
// fixture's policy merged with the user's own), for the report's Settings section.
func settingsUsed(journals []string) string {
	var found string
	stop := errors.New("found")
	for _, j := range journals {
		_, _ = journal.Scan(j, func(r model.Record) error {
			var ev struct {
				Settings json.RawMessage `json:"settings"`
			}
			if json.Unmarshal(r.Evidence, &ev) == nil && len(ev.Settings) > 0 {
				var buf bytes.Buffer
				if json.Indent(&buf, ev.Settings, "", "  ") == nil {
					found = buf.String()
					return stop
				}
			}
			return nil
		})
		if found != "" {
			break
		}
	}
	return found
}
