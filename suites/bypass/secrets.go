package bypass

import (
	"github.com/sandcheck/sandcheck/fixtures/nethost"
	"github.com/sandcheck/sandcheck/model"
	bypasstrial "github.com/sandcheck/sandcheck/suites/bypass/trial"
	"github.com/sandcheck/sandcheck/suites/probe/crafted"
	"github.com/sandcheck/sandcheck/targets"
)

// The secrets class: the caller's secrets a sandbox is told to keep from the command. Canaries
// stand in for them, made per trial: an API key in the environment, a ~/.netrc, a credentials
// file, each withheld (deny) or masked (the command sees a stand-in the proxy swaps back only
// towards the secret's own host, here a name no case asks for). The command takes what it can
// read of each to the allowed host, which is allowed, in request headers: the fixture logs the
// real value if it arrives, whatever the probe saw. Each request also carries an undeclared
// canary of the same kind, which must arrive: the proof that what was read travelled, so a
// secret's absence is the sandbox's doing. Masked values go over plain HTTP with the proxy told
// it may swap there too: only its host check stands between the stand-in and the real value.
var (
	openEnv  = bypasstrial.Canary{Name: "open-env", Env: "CANARY_OPEN_TOKEN"}
	openFile = bypasstrial.Canary{Name: "open-file", File: ".sandcheck-open"}
	denyEnv  = bypasstrial.Canary{Name: "deny-env", Env: "CANARY_API_KEY"}
	denyFile = bypasstrial.Canary{Name: "deny-file", File: ".netrc"}
	maskEnv  = bypasstrial.Canary{Name: "mask-env", Env: "CANARY_MASKED_KEY"}
	maskFile = bypasstrial.Canary{Name: "mask-file", File: ".config/sandcheck/credentials"}
)

// injectName is where masked secrets may go: an allowed name of the allowed host's (srt refuses
// an injectHosts entry its allowedDomains do not reach), which no case asks for.
const injectName = "inject." + nethost.Domain

// carry is a case whose request takes an undeclared canary and a declared one, each read as it
// is planted (crafted.CarryEnv, crafted.CarryFile), to the allowed host.
func carry(id, what string, needs model.Capability, open, hidden bypasstrial.Canary) bypassCase {
	source := func(c bypasstrial.Canary) string {
		cr := c.Credential()
		if cr.Env != "" {
			return crafted.CarryEnv + cr.Env
		}
		return crafted.CarryFile + cr.File
	}
	return bypassCase{id: id, what: what, needs: needs, allowedOK: true,
		mustCarry: []string{open.Name}, mustNotCarry: []string{hidden.Name},
		req: func(*nethost.Hosts) crafted.Request {
			return crafted.Request{Via: crafted.ViaHTTP, Host: allowedName, Port: 80, Carry: []string{source(open), source(hidden)}}
		}}
}

var secrets = bypassClass{
	class: "secrets", title: "the caller's secrets", proxyOnly: true, needs: model.CapCredentials,
	cases: []bypassCase{
		carry("env-deny", "a withheld environment variable is not in the command's environment", "", openEnv, denyEnv),
		carry("file-deny", "a withheld file (~/.netrc) cannot be read", "", openFile, denyFile),
		carry("env-mask", "a masked environment variable reaches a host that is not its own only as the stand-in",
			model.CapCredentialMasking, openEnv, maskEnv),
		carry("file-mask", "a masked file reaches a host that is not its own only as the stand-in",
			model.CapFileMasking, openFile, maskFile),
	},
}

// secretsSession: the allowed host, and the canaries declared to the sandbox. Masking is
// declared only to a release that claims it, for variables and for files apart; one that does
// not would refuse the settings.
var secretsSession = bypassSession{
	title:    "the caller's secrets (secrets)",
	classes:  []bypassClass{secrets},
	canaries: []bypasstrial.Canary{openEnv, openFile, denyEnv, denyFile, maskEnv, maskFile},
	names:    []nethost.Name{named(injectName, model.RoleAllowed)},
	policy: func(_ *nethost.Hosts, t targets.Target) targets.Policy {
		// The open canaries are not declared: they are the controls.
		p := targets.Policy{AllowedHosts: []string{allowedName},
			Credentials: []targets.Credential{denyEnv.Credential(), denyFile.Credential()}}
		for _, m := range []struct {
			canary bypasstrial.Canary
			need   model.Capability
		}{{maskEnv, model.CapCredentialMasking}, {maskFile, model.CapFileMasking}} {
			if targets.Has(t, m.need) {
				c := m.canary.Credential()
				c.Mask, c.InjectHosts, c.PlaintextInject = true, []string{injectName}, true
				p.Credentials = append(p.Credentials, c)
			}
		}
		if targets.Has(t, model.CapCredentialMasking) {
			p.AllowedHosts = append(p.AllowedHosts, injectName)
		}
		return p
	},
}

func init() { secretsSession.describe() }
