package inspect

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/fixtures/faults"
)

func init() {
	cli.Register("faults", "list the fault injectors and the outcome each must produce", func(args []string, stdout, stderr io.Writer) int {
		fs := cli.NewFlags("faults", "", "  sandcheck faults", stderr)
		if ok, code := cli.Parse(fs, args); !ok {
			return code
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "FAULT\tEXPECT\tPARAMS\tWHAT IT BREAKS")
		for _, f := range faults.All() {
			var ps []string
			for _, p := range f.Params {
				ps = append(ps, fmt.Sprintf("%s=%s", p.Name, p.Default))
			}
			expect := string(f.Expect)
			if f.Rate != nil {
				expect += " (rate p)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, expect, strings.Join(ps, ","), f.Summary)
		}
		tw.Flush()
		return 0
	})
}
