//go:build linux

package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/suites"
	"github.com/sandcheck/sandcheck/suites/catalog"
)

func init() {
	cli.Register("list", "list the scenarios: what each checks, what it needs, its known-bads and known findings", listCmd)
}

func listCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("list", "[--label-filter FILTER] [--json | --markdown]", `  sandcheck list
  sandcheck list --label-filter 'bypass-matching'
  sandcheck list --json | jq '.[] | select(.known_bads == []) | .id'
  sandcheck list --markdown > docs/scenarios.md      # what make scenarios-doc writes`, stderr)
	filter := fs.String("label-filter", "", "Ginkgo label filter selecting scenarios, as run takes it (e.g. network, 'network && seed')")
	asJSON := fs.Bool("json", false, "print JSON: every field of every scenario")
	asMarkdown := fs.Bool("markdown", false, "print Markdown (docs/scenarios.md)")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	if *asJSON && *asMarkdown {
		fmt.Fprintln(stderr, "sandcheck list: --json or --markdown, not both")
		return cli.ExitUsage
	}
	scs, err := suites.Catalogue()
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck list: %v\n", err)
		return 1
	}
	if scs, err = selectScenarios(scs, *filter); err != nil {
		fmt.Fprintf(stderr, "sandcheck list: %v\n", err)
		return cli.ExitUsage
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(scs)
	case *asMarkdown:
		err = writeMarkdown(stdout, scs)
	default:
		err = writeTable(stdout, scs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck list: %v\n", err)
		return 1
	}
	return 0
}

// selectScenarios keeps the scenarios a label filter selects, matched as Ginkgo matches a spec's
// labels when run takes the same filter.
func selectScenarios(scs []catalog.Scenario, filter string) ([]catalog.Scenario, error) {
	if filter == "" {
		return scs, nil
	}
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return nil, fmt.Errorf("--label-filter %q: %w", filter, err)
	}
	var out []catalog.Scenario
	for _, sc := range scs {
		if match(sc.Labels) {
			out = append(out, sc)
		}
	}
	return out, nil
}

const noneDeclared = "none declared"

// knownBadNames is a scenario's known-bads by fault name, a few at most, for the table.
func knownBadNames(kbs []catalog.KnownBad) string {
	var names []string
	for _, kb := range kbs {
		if !slices.Contains(names, kb.Name()) {
			names = append(names, kb.Name())
		}
	}
	switch {
	case len(names) == 0:
		return noneDeclared
	case len(names) > 3:
		return fmt.Sprintf("%s +%d more", strings.Join(names[:2], ", "), len(names)-2)
	}
	return strings.Join(names, ", ")
}

// findingCounts is how many known findings each target pins to a scenario: "srt:2 claude-code:1".
func findingCounts(fs []catalog.Finding) string {
	n := map[string]int{}
	var targets []string
	for _, f := range fs {
		if n[f.Target] == 0 {
			targets = append(targets, f.Target)
		}
		n[f.Target]++
	}
	sort.Strings(targets)
	var out []string
	for _, t := range targets {
		out = append(out, fmt.Sprintf("%s:%d", t, n[t]))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, " ")
}

func writeTable(w io.Writer, scs []catalog.Scenario) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tAGG\tNEEDS\tKNOWN-BADS\tFINDINGS\tWHAT IT CHECKS")
	for _, sc := range scs {
		agg := ""
		if sc.Aggregate {
			agg = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sc.ID, agg, sc.Needs, knownBadNames(sc.KnownBads), findingCounts(sc.Findings), sc.What)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d scenarios; labels, every known-bad and finding: --json or --markdown (docs/scenarios.md)\n", len(scs))
	return err
}
