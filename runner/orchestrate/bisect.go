package orchestrate

import (
	"context"
	"fmt"
	"io"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/runner/bisect"
	"github.com/sandcheck/sandcheck/runner/hosts"
	"github.com/sandcheck/sandcheck/targets"
	"github.com/sandcheck/sandcheck/targets/npmcache"
	"github.com/sandcheck/sandcheck/versions"
)

// BisectRange resolves --good and --bad (defaults: the oldest release and latest) and lists the
// releases from one to the other.
func BisectRange(ctx context.Context, t matrix.Target, npm targets.NPM, good, bad string, stderr io.Writer) ([]string, string, string, error) {
	idx, err := NpmCache().Published(ctx, npm.Package)
	if err != nil {
		return nil, "", "", err
	}
	if idx.Warning != "" {
		fmt.Fprintf(stderr, "warning: %s\n", idx.Warning)
	}
	rel := idx.Releases()
	if len(rel) < 2 {
		return nil, "", "", fmt.Errorf("%s has fewer than two releases", npm.Package)
	}
	one := func(flag, text, def string) (string, error) {
		if text == "" {
			return def, nil
		}
		sel, err := versions.ParseSelector(text)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", flag, err)
		}
		pinned := ""
		if sel.Kind == versions.Pinned {
			if pinned, err = PinnedVersion(t); err != nil {
				return "", fmt.Errorf("--%s: %w", flag, err)
			}
		}
		vs, err := sel.Resolve(idx.Published, pinned)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", flag, err)
		}
		if len(vs) != 1 {
			return "", fmt.Errorf("--%s %s selects %d versions; name one", flag, text, len(vs))
		}
		return vs[0], nil
	}
	latest := rel[len(rel)-1]
	if l, ok := idx.Tags["latest"]; ok {
		latest = l
	}
	g, err := one("good", good, rel[0])
	if err != nil {
		return nil, "", "", err
	}
	b, err := one("bad", bad, latest)
	if err != nil {
		return nil, "", "", err
	}
	list, err := versions.Between(idx.Published, g, b)
	if err != nil {
		return nil, "", "", fmt.Errorf("--good %s --bad %s: %w (good must be the older one)", g, b, err)
	}
	return list, g, b, nil
}

// Bisect searches the published versions list (oldest first: good .. bad) of target t for the
// first whose outcomes on labels (with fault) differ from good's (runner/bisect): each version is
// installed into the npm cache as the search reaches it, and its trials run on this machine as
// user (self is this binary). opt holds the search's own settings (trials, alpha, beta,
// directory).
func Bisect(ctx context.Context, self string, t matrix.Target, npm targets.NPM, list []string, labels, fault, user string, o *Trial, opt bisect.Options) (*bisect.Result, error) {
	m := &matrix.Matrix{Targets: []matrix.Target{t}, Scenarios: labels, Faults: []string{fault}}
	user = model.NormalizeUser(user)
	if o.VersionPaths == nil {
		o.VersionPaths = map[string]string{}
	}
	local, err := hosts.New(matrix.Host{Name: "local", Kind: matrix.KindLocal, Users: []string{user}}, hosts.Options{})
	if err != nil {
		return nil, err
	}
	defer local.Close()
	exec, err := hosts.NewExecutor(local, TrialsOn(self, m, o))
	if err != nil {
		return nil, err
	}
	opt.Versions, opt.Exec = list, exec
	if _, err := local.Prepare(ctx, self); err != nil { // the user's account exists, or no trial runs
		return nil, err
	}
	opt.Cell = func(v string) model.Cell { return bisectCell(t, v, user, fault, labels) }
	opt.Prepare = func(ctx context.Context, v string) error {
		in, err := NpmCache().Install(ctx, npmcache.Spec{Package: npm.Package, Version: v, Bin: npm.Bin, IgnoreScripts: npm.IgnoreScripts})
		if err != nil {
			return err
		}
		o.VersionPaths[t.ID+"@"+v] = in.BinPath()
		return nil
	}
	return bisect.Run(ctx, opt)
}

// bisectCell is the cell of version v in a bisect: on this machine, as user.
func bisectCell(t matrix.Target, v, user, fault, labels string) model.Cell {
	return model.Cell{ID: matrix.VersionedCellID(t.ID, v, matrix.HostAs("local", user), fault, labels), Target: t.ID, Version: v,
		Host: "local", User: user, Fault: fault, Labels: labels}
}
