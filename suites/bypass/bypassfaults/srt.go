// Package bypassfaults holds the bypass family's known-bad faults: each makes the real sandbox
// show one bypass class through a seam it offers (srt's proxy ports and seccomp helper's path,
// the bwrap on PATH, Codex's configuration). Registered when linked in (suites/bypass links it).
package bypassfaults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcheck/sandcheck/fixtures/faults"
	"github.com/sandcheck/sandcheck/fixtures/seccomp"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/bypass/badproxy"
	"github.com/sandcheck/sandcheck/targets"
)

func init() {
	faults.Register(&faults.Fault{
		Name: "bad-proxy",
		Summary: "an allow-list proxy with known matching bugs replaces srt's own (httpProxyPort/socksProxyPort): " +
			"it enforces srt's allowedDomains/deniedDomains, correctly but for the bugs chosen (suites/bypass/badproxy)",
		Expect: model.NonEnforcing,
		Params: []faults.Param{{Name: "bug", Default: "all", Help: "the bugs, joined by +: " + strings.Join(badproxy.AllBugs, ", ") + " (or all)",
			Check: func(v string) error { _, err := badproxy.ParseBugs(v); return err }}},
		Seams: []model.Seam{model.ProxyPorts, model.SettingsFormat("srt")},
		Scope: faults.ScopeBypass,
	}, func(in *faults.Injection) error {
		bugs, err := badproxy.ParseBugs(in.Params["bug"])
		if err != nil {
			return err
		}
		if in.Lookup == nil {
			return fmt.Errorf("no fixture hosts to resolve against")
		}
		p, err := badproxy.Start(badproxy.Options{Bugs: bugs, Listen: in.Listen, Dial: in.Dial, Lookup: in.Lookup, Resolver: in.Resolver, Own: in.Own})
		if err != nil {
			return err
		}
		in.OnProxy(p.Close)
		in.Add(faults.WithSettingsPatch(func(s map[string]any) {
			net := targets.SettingsObject(s, "network")
			// The proxy enforces the lists srt was given, as srt's own would.
			p.SetPolicy(targets.SettingsStrings(net["allowedDomains"]), targets.SettingsStrings(net["deniedDomains"]))
			net["httpProxyPort"] = p.HTTPPort
			net["socksProxyPort"] = p.SOCKSPort
		}))
		return nil
	})
	faults.Register(&faults.Fault{
		Name: "srt-seccomp",
		Summary: "srt's seccomp helper (seccomp.applyPath) is replaced: mode=none runs the command unfiltered (env), " +
			"mode=socket-only filters socket(AF_UNIX) but not io_uring, as srt's helper did before io_uring joined its filter",
		Expect: model.NonEnforcing,
		Params: []faults.Param{{Name: "mode", Default: "none", Help: "none or socket-only"}},
		Seams:  []model.Seam{model.SettingsFormat("srt")},
		Scope:  faults.ScopeBypass,
	}, func(in *faults.Injection) error {
		var helper string
		switch in.Params["mode"] {
		case "none":
			// srt runs its helper as HELPER SHELL -c COMMAND: env runs the rest as it is, and
			// being the system's, a reproducer's settings name it as the trial's did.
			helper = "/usr/bin/env"
			if _, err := os.Stat(helper); err != nil {
				return fmt.Errorf("mode=none runs srt's command through %s: %w", helper, err)
			}
		case "socket-only":
			if in.ProbeBin == "" {
				return fmt.Errorf("no sandcheck binary to run the seccomp stand-in")
			}
			var err error
			helper, err = in.WriteHelper("apply-seccomp", fmt.Sprintf("#!/bin/sh\n# sandcheck fault srt-seccomp: a seccomp helper that filters less than srt's own\nexec '%s' %s \"$@\"\n", in.ProbeBin, seccomp.Arg))
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("mode=%q: want none or socket-only", in.Params["mode"])
		}
		in.Add(faults.WithSettingsPatch(func(s map[string]any) {
			targets.SettingsObject(s, "seccomp")["applyPath"] = helper
		}))
		return nil
	})
	faults.Register(&faults.Fault{
		Name: "fs-unmask",
		Summary: "bwrap loses every mount that hides or pins a path of the trial (read-deny masks, write-deny " +
			"and ancestor re-binds): denied reads readable, protected files writable, masked paths movable",
		Expect: model.NonEnforcing,
		Params: []faults.Param{{Name: "under", Help: "the directory below which it drops them (default: the trial's own); " +
			"a reproducer's own, /tmp say, makes the same broken bwrap break the reproducer's run",
			Check: func(v string) error {
				if v != "" && !filepath.IsAbs(v) || filepath.Clean(v) == "/" {
					return fmt.Errorf("want an absolute directory other than /")
				}
				return nil
			}}},
		Seams: []model.Seam{model.OnPath("bwrap")},
		Scope: faults.ScopeBypass,
		// Bound to the trial's own directory unless told another.
		Portable: func(p map[string]string) bool { return p["under"] != "" },
	}, func(in *faults.Injection) error {
		r, err := faults.RealTool("bwrap")
		if err != nil {
			return err
		}
		under := in.Dir
		if u := in.Params["under"]; u != "" {
			under = filepath.Clean(u)
		}
		return faults.Shim(in, "bwrap-unmask.sh", "bwrap", map[string]any{"RealBwrap": r, "Prefix": under})
	})
	settingsFault("srt", "credentials-ignored", "srt reads no credentials section: every secret it was told to withhold or mask reaches the "+
		"command in clear", func(s map[string]any) { delete(s, "credentials") })
	settingsFault("srt", "inject-anywhere", "srt's proxy swaps a masked secret's stand-in for the real value towards every allowed host, "+
		"not only the secret's own (its injectHosts widened to allowedDomains)", func(s map[string]any) {
		allowed := targets.SettingsStrings(targets.SettingsObject(s, "network")["allowedDomains"])
		c := targets.SettingsObject(s, "credentials")
		for _, key := range []string{"envVars", "files"} {
			list, _ := c[key].([]any)
			for _, e := range list {
				if m, ok := e.(map[string]any); ok && m["mode"] == "mask" {
					targets.SettingsAdd(m, "injectHosts", allowed)
				}
			}
		}
	})
	bwrapArgFault("tty-shared", "bwrap runs the sandbox without --new-session: the command keeps the caller's terminal as its controlling one (CVE-2017-5226)")
	bwrapArgFault("pidns-shared", "bwrap runs the sandbox without --unshare-pid, the host's /proc bound in: the command sees, and can signal, every process of its user's")
}

// bwrapArgFault registers a bypass fault that drops one of bwrap's protections from every run's
// arguments (faults.BwrapShim's mode name), whatever the trial: a reproducer shows it with the
// same broken bwrap first on PATH.
func bwrapArgFault(name, summary string) {
	faults.Register(&faults.Fault{
		Name:     name,
		Summary:  summary,
		Expect:   model.NonEnforcing,
		Seams:    []model.Seam{model.OnPath("bwrap")},
		Scope:    faults.ScopeBypass,
		Portable: faults.Always,
	}, faults.BwrapShim(name))
}
