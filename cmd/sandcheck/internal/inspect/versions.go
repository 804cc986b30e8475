package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/orchestrate"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/npmcache"
	"github.com/sandcheck/sandcheck/versions"
)

func init() {
	cli.Register("versions", "list a sandbox's published versions, what a selector picks, and which are installed", versionsCmd)
}

// versionRow is one line of `sandcheck versions`.
type versionRow struct {
	Version   string `json:"version"`
	Tags      string `json:"tags,omitempty"`
	Installed string `json:"installed,omitempty"` // the executable in the npm cache
}

func versionsCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("versions", "[NAME[@SELECTOR]] [--json]", `  sandcheck versions srt                 # every release, oldest first; * = in the npm cache
  sandcheck versions 'srt@>=0.0.60'      # what a selector picks (as a matrix's versions: would)
  sandcheck versions srt@last:5 --json
  sandcheck versions claude-code@2.1.215 --install   # what make deps does for the pinned Claude Code`, stderr)
	asJSON := fs.Bool("json", false, "one JSON object: package, source of the list, the versions")
	install := fs.Bool("install", false, "install the selected versions into the npm cache first (a version already there is kept)")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	arg := "srt"
	switch fs.NArg() {
	case 0:
	case 1:
		arg = fs.Arg(0)
	default:
		fmt.Fprintln(stderr, "sandcheck versions: one NAME[@SELECTOR] at most")
		return cli.ExitUsage
	}
	name, selText := orchestrate.SplitTarget(arg)
	if err := orchestrate.Registry().Target(name, nil); err != nil {
		fmt.Fprintf(stderr, "sandcheck versions: %v\n", err)
		return cli.ExitUsage
	}
	npm, ok := targets.NPMOf(name)
	if !ok {
		fmt.Fprintf(stderr, "sandcheck versions: %v\n", orchestrate.VersionedCheck(name))
		return cli.ExitUsage
	}
	limit := 2 * time.Minute
	if *install {
		limit = 15 * time.Minute // Claude Code is about 250 MB a version
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	c := orchestrate.NpmCache()
	idx, err := c.Published(ctx, npm.Package)
	if err != nil {
		fmt.Fprintf(stderr, "sandcheck versions: %v\n", err)
		return 1
	}
	if idx.Warning != "" {
		fmt.Fprintf(stderr, "warning: %s\n", idx.Warning)
	}
	list := idx.Releases()
	if selText != "" {
		sel, err := versions.ParseSelector(selText)
		if err != nil {
			fmt.Fprintf(stderr, "sandcheck versions: %v\n", err)
			return cli.ExitUsage
		}
		pinned := ""
		if sel.Kind == versions.Pinned {
			if pinned, err = orchestrate.PinnedVersion(matrix.Target{Name: name}); err != nil {
				fmt.Fprintf(stderr, "sandcheck versions: %v\n", err)
				return 1
			}
		}
		if list, err = sel.Resolve(idx.Published, pinned); err != nil {
			fmt.Fprintf(stderr, "sandcheck versions: %v\n", err)
			return 1
		}
	}
	if *install {
		if selText == "" {
			fmt.Fprintln(stderr, "sandcheck versions: --install needs NAME@SELECTOR (it would install every release)")
			return cli.ExitUsage
		}
		for _, v := range list {
			in, err := c.Install(ctx, npmcache.Spec{Package: npm.Package, Version: v, Bin: npm.Bin, IgnoreScripts: npm.IgnoreScripts})
			if err != nil {
				fmt.Fprintf(stderr, "sandcheck versions: %v\n", err)
				return 1
			}
			if in.Fresh {
				fmt.Fprintf(stderr, "installed %s into %s (%.1fs)\n", in.Spec, in.Dir, in.Took.Seconds())
			}
		}
	}
	tags := map[string][]string{}
	for t, v := range idx.Tags {
		tags[v] = append(tags[v], t)
	}
	var rows []versionRow
	installed := 0
	for _, v := range list {
		r := versionRow{Version: v, Tags: strings.Join(tags[v], ",")}
		if in, ok := c.Lookup(npmcache.Spec{Package: npm.Package, Version: v, Bin: npm.Bin}); ok {
			r.Installed = in.BinPath()
			installed++
		}
		rows = append(rows, r)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		enc.Encode(struct {
			Package   string       `json:"package"`
			Source    string       `json:"source"`
			FetchedAt time.Time    `json:"fetched_at"`
			Cache     string       `json:"cache"`
			Versions  []versionRow `json:"versions"`
		}{npm.Package, idx.Source, idx.FetchedAt, c.Root(), rows})
		return 0
	}
	fmt.Fprintf(stdout, "%s (%s): %d version(s), %d installed in %s; list from the %s, fetched %s ago\n", name, npm.Package, len(rows), installed,
		c.Root(), idx.Source, time.Since(idx.FetchedAt).Round(time.Second))
	for _, r := range rows {
		mark := " "
		if r.Installed != "" {
			mark = "*"
		}
		line := fmt.Sprintf("%s %s", mark, r.Version)
		if r.Tags != "" {
			line += "  (" + r.Tags + ")"
		}
		fmt.Fprintln(stdout, line)
	}
	return 0
}
