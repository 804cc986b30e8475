// Package verdict turns what a scenario's classifier saw into its verdict's breaches
// (model.Breach), in the terms a known finding is keyed by, each with the egress lines it
// accounts for: specs (suites/judge) and preflight describe a failure the same way. It knows
// nothing of Ginkgo.
package verdict

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/suites/classify"
	"github.com/sandcheck/sandcheck/suites/classify/filesystem"
	"github.com/sandcheck/sandcheck/suites/probe"
)

// failing says whether a per-channel or per-check outcome is something breached.
func failing(o model.Outcome) bool { return o != model.Correct && o != model.NotApplicable }

// Hosts names the fixture hosts, for the words of network breaches.
type Hosts struct{ Allowed, Denied string }

func (h Hosts) name(role string) string {
	n := h.Denied
	if role == "allowed" {
		n = h.Allowed
	}
	if n == "" {
		return "the " + role + " host"
	}
	return n
}

// ChannelRole is who a network channel's breach concerns: the denied host (or, for a sandbox
// whose namespace is not isolated, the allowed host) reached, the allowed host refused, or the
// proxy dead. Other outcomes have no role.
func ChannelRole(c classify.ChannelResult) string {
	switch c.Outcome {
	case model.NonEnforcing:
		// "allowed" only when nothing points at the denied host, by the client's word or the
		// fixture servers' log: a breach read as the lesser one could be covered by mistake.
		if c.Allowed == classify.Reached && c.Denied != classify.Reached && !strings.Contains(c.Server, "denied") {
			return "allowed"
		}
		return "denied"
	case model.AllowedBlocked:
		return "allowed"
	case model.ProxyDead:
		return "proxy"
	}
	return ""
}

// ChannelBreach is the breach one network channel shows, keyed to the channel's scenario; its
// check is CHANNEL:ROLE (or CHANNEL when the outcome has no role).
func ChannelBreach(c classify.ChannelResult, h Hosts) model.Breach {
	role := ChannelRole(c)
	b := model.Breach{Scenario: ChannelScenario(c.Channel), Check: c.Channel, Outcome: c.Outcome, Egress: c.Egress}
	if role != "" {
		b.Check += ":" + role
	}
	switch {
	case c.Outcome == model.NonEnforcing && role == "allowed":
		b.What = fmt.Sprintf("%s: %s reached outside the policy", c.Channel, h.name("allowed"))
	case c.Outcome == model.NonEnforcing:
		b.What = fmt.Sprintf("%s: %s reached", c.Channel, h.name("denied"))
	case c.Outcome == model.AllowedBlocked:
		b.What = fmt.Sprintf("%s: %s refused", c.Channel, h.name("allowed"))
	case c.Outcome == model.ProxyDead:
		b.What = fmt.Sprintf("%s: proxy dead", c.Channel)
	default:
		b.What = fmt.Sprintf("%s: %s", c.Channel, c.Outcome)
		if c.Hint != "" {
			b.What += " (" + c.Hint + ")"
		}
	}
	return b
}

// NetworkBreaches are the breaches of a network verdict: every channel whose outcome is
// breached (only the given outcome, when only is set), in channel order. A verdict outcome no
// channel shows is left to Decide, which adds the trial as a breach of its own.
func NetworkBreaches(r classify.Result, only model.Outcome, h Hosts) []model.Breach {
	var out []model.Breach
	for _, ch := range channelOrder(r.Channels) {
		c := r.Channels[ch]
		if !failing(c.Outcome) || only != "" && c.Outcome != only {
			continue
		}
		out = append(out, ChannelBreach(c, h))
	}
	return out
}

// channelOrder is probe's channel order, then any channel it does not list, sorted.
func channelOrder(m map[string]classify.ChannelResult) []string {
	var out []string
	known := map[string]bool{}
	for _, ch := range model.AllChannels {
		known[ch] = true
		if _, ok := m[ch]; ok {
			out = append(out, ch)
		}
	}
	var rest []string
	for ch := range m {
		if !known[ch] {
			rest = append(rest, ch)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// fsNonce is the per-trial part of the names a filesystem trial writes.
var fsNonce = regexp.MustCompile(`sandcheck-fs-[0-9a-f]+`)

// FSPath is how a filesystem check's path reads in a finding: the workspace, the trial directory
// and HOME spelled $WORKSPACE, $TRIAL and $HOME, the per-trial nonce *, so that the same check
// reads the same in every trial.
func FSPath(p, ws, trial, home string) string {
	if p == "" {
		return ""
	}
	proc := ""
	if rest, ok := strings.CutPrefix(p, "/proc/self/root/"); ok {
		proc, p = "/proc/self/root", "/"+rest
	}
	for _, r := range []struct{ dir, name string }{{ws, "$WORKSPACE"}, {trial, "$TRIAL"}, {home, "$HOME"}} {
		if r.dir == "" || r.dir == "/" {
			continue
		}
		if p == r.dir {
			p = r.name
			break
		}
		if rest, ok := strings.CutPrefix(p, r.dir+"/"); ok {
			p = r.name + "/" + rest
			break
		}
	}
	return proc + fsNonce.ReplaceAllString(p, "sandcheck-fs-*")
}

// FSPaths maps each check the probe reported to its path (FSPath).
func FSPaths(results []probe.FSResult, ws, trial, home string) map[string]string {
	out := map[string]string{}
	for _, r := range results {
		out[r.Name] = FSPath(r.Path, ws, trial, home)
	}
	return out
}

// FSCheckBreach is the breach one filesystem check shows, keyed to the check's scenario; its
// check is the path (FSPath). A check whose path is unknown has check "", which no finding has.
func FSCheckBreach(c filesystem.CheckResult, path string) model.Breach {
	b := model.Breach{Scenario: FSScenario(c.Name), Check: path, Outcome: c.Outcome}
	verb := "write"
	if c.Op == probe.OpRead || strings.HasPrefix(c.Name, "secret/") { // a record from before Op
		verb = "read"
	}
	shown := path
	if shown == "" {
		shown = "(path not reported)"
	}
	if c.Op == probe.OpSymlink && c.Outcome == model.NonEnforcing {
		// A link made inside is no breach by itself (the setup class): the next session's was.
		b.What = "link " + shown + ", followed out of the sandbox by the next session's set-up"
		return b
	}
	switch c.Outcome {
	case model.NonEnforcing:
		b.What = verb + " " + shown
	case model.AllowedBlocked:
		b.What = fmt.Sprintf("%s %s refused", verb, shown)
		if c.Errno != "" {
			b.What += " (" + c.Errno + ")"
		}
	default:
		b.What = fmt.Sprintf("%s %s: %s", verb, shown, c.Outcome)
		if c.Hint != "" {
			b.What += " (" + c.Hint + ")"
		}
	}
	return b
}

// FSBreaches are the breaches of a filesystem verdict: every check whose outcome is breached,
// in the given order (suites/harness/filesystem.CheckNames), then any other, sorted.
func FSBreaches(r filesystem.Result, order []string, paths map[string]string) []model.Breach {
	var out []model.Breach
	done := map[string]bool{}
	add := func(name string) {
		c, ok := r.Checks[name]
		if !ok || done[name] {
			return
		}
		done[name] = true
		if failing(c.Outcome) {
			out = append(out, FSCheckBreach(c, paths[name]))
		}
	}
	for _, n := range order {
		add(n)
	}
	var rest []string
	for n := range r.Checks {
		if !done[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		add(n)
	}
	return out
}

// ConditionBreach is the breach of a fail-closed or untrusted scenario: the sandbox ran the
// command under the condition instead of enforcing or refusing; the check is the condition.
// egress is the egress lines of the session whose classification gave o: a fail-open condition
// breach accounts for every one of them.
func ConditionBreach(scenario, condition string, o model.Outcome, what string, egress []string) model.Breach {
	b := model.Breach{Scenario: scenario, Check: condition, Outcome: o, What: "condition " + condition + ": " + what}
	if o.Severity() == model.SevFailOpen {
		b.Egress = egress
	}
	return b
}

// SessionBreaches are the breaches of concurrent sessions, keyed to the concurrency scenario
// itself: each failing channel of any session (CHANNEL:ROLE), a session that failed as a whole
// ("session"), and each workspace entry left behind or removed ("leftover:NAME",
// "removed:NAME", NAME relative to its workspace). The same breach in several sessions counts once.
func SessionBreaches(scenario string, sessions []classify.Result, leftovers, workspaces []string, h Hosts) []model.Breach {
	var out []model.Breach
	seen := map[string]bool{}
	add := func(b model.Breach) {
		if k := b.Check + "|" + string(b.Outcome); !seen[k] {
			seen[k] = true
			out = append(out, b)
		}
	}
	for _, r := range sessions {
		if !failing(r.Outcome) {
			continue
		}
		bs := NetworkBreaches(r, "", h)
		for _, b := range bs {
			b.Scenario = scenario
			b.What = "a session: " + b.What
			add(b)
		}
		if !showsOutcome(bs, r.Outcome) {
			// Which session, and its workspace's path, differ from trial to trial: the words do not.
			hint := r.Hint
			for _, ws := range workspaces {
				if ws != "" {
					hint = strings.ReplaceAll(hint, ws, "$WORKSPACE")
				}
			}
			what := "a session failed as a whole: " + string(r.Outcome)
			if hint != "" {
				what += " (" + hint + ")"
			}
			b := model.Breach{Scenario: scenario, Check: "session", Outcome: r.Outcome, What: what}
			if r.Outcome.Severity() == model.SevFailOpen {
				b.Egress = r.Egress
			}
			add(b)
		}
	}
	for _, l := range leftovers {
		p, removed := strings.CutSuffix(l, " (removed)")
		rel := p
		for _, ws := range workspaces {
			if r, ok := strings.CutPrefix(p, ws+"/"); ok {
				rel = r
				break
			}
		}
		b := model.Breach{Scenario: scenario, Check: "leftover:" + rel, Outcome: model.Residue, What: "left $WORKSPACE/" + rel + " behind"}
		if removed {
			b.Check, b.What = "removed:"+rel, "removed $WORKSPACE/"+rel
		}
		add(b)
	}
	return out
}

// FSPathsIn is FSPaths for a trial whose workspace is ws, directly under the trial directory,
// run by this user (HOME).
func FSPathsIn(results []probe.FSResult, ws string) map[string]string {
	home, _ := os.UserHomeDir()
	return FSPathsHome(results, ws, home)
}

// FSPathsHome is FSPathsIn for a sandbox run by a user whose HOME is home.
func FSPathsHome(results []probe.FSResult, ws, home string) map[string]string {
	trial := ""
	if ws != "" {
		trial = filepath.Dir(ws)
	}
	return FSPaths(results, ws, trial, home)
}

// ChannelScenario is the per-check scenario of a network channel.
func ChannelScenario(channel string) string { return "network/channel/" + channel }

// FSScenario is the per-check scenario of a filesystem check.
func FSScenario(check string) string { return "filesystem/" + check }

func showsOutcome(bs []model.Breach, o model.Outcome) bool {
	for _, b := range bs {
		if b.Outcome == o {
			return true
		}
	}
	return false
}

// Lines are hits as egress lines (model.Hit.String): what a breach that accounts for a whole
// session's traffic lists.
func Lines(hits []model.Hit) []string {
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.String())
	}
	return out
}
