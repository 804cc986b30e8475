package srt

import (
	"fmt"
	"sort"

	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/versions"
)

// srt's command line and settings changed over its releases; the adapter drives each release the
// way that release expects. Read from the published packages themselves (`srt --help` and
// dist/cli.js, dist/utils/settings.js, dist/sandbox/sandbox-config.js of 0.0.1 .. 0.0.5, 0.0.10,
// 0.0.15, 0.0.20, 0.0.21, 0.0.23 .. 0.0.25, 0.0.30, 0.0.40 .. 0.0.50, 0.0.60, 0.0.70, 0.0.80, 0.0.83):
//
//	0.0.1    settings are Claude Code's: the merge of ~/.claude/settings.json, the project's
//	         .claude/settings{,.local}.json, /etc/claude-code/managed-settings.json and --settings,
//	         with the policy as permission rules (permissions.allow "WebFetch(domain:H)",
//	         "Edit(PATH)"; permissions.deny "Read(PATH)", "Edit(PATH)") and proxy ports under
//	         sandbox.network. The command is the argument list, joined with spaces and run by a
//	         shell; "Running: CMD" is printed on stdout first.
//	0.0.2    srt's own settings file (--settings, default ~/.srt-settings.json) with
//	         network.{allowedDomains,deniedDomains,...} and filesystem.{denyRead,allowWrite,
//	         denyWrite}; a missing, empty or invalid file falls back to an all-deny default.
//	0.0.21   -c 'STRING' runs a shell command string; the argument list remains.
//	0.0.50   the argument list is shell-quoted (run as argv), no longer joined into a shell
//	         string: only -c takes a shell command from here on.
//	0.0.68   an allowedDomains entry may name a port (host:port). 0.0.60 to 0.0.67 refuse the
//	         whole file for one ("Invalid domain pattern"), earlier releases fall back to their
//	         all-deny default (measured here, each release's bypass-resolved-address trial).
//
// Every published release (0.0.1 .. 0.0.83) is drivable by one of these shapes; a build the
// table does not know (newer than the adapter, or no version at all) gets the newest shape.

// Dialect is the settings file format a release reads.
type Dialect string

// Settings dialects.
const (
	// DialectSRT is srt's own file: network and filesystem objects (0.0.2 and later).
	DialectSRT Dialect = "srt"
	// DialectPermissions is Claude Code's settings: permission rules plus a sandbox object (0.0.1).
	DialectPermissions Dialect = "claude-permissions"
)

// CommandForm is how a release takes the command to run.
type CommandForm string

// Command forms.
const (
	// CommandFlag is -c 'STRING', a shell command string (0.0.21 and later).
	CommandFlag CommandForm = "-c"
	// CommandJoined is the argument list, joined with spaces and run by a shell (before 0.0.21).
	CommandJoined CommandForm = "joined-args"
)

// Shape is how one release is driven.
type Shape struct {
	Since   string // the first release with this shape
	Dialect Dialect
	Command CommandForm
	// Claims are the capabilities this release claims beyond those every release does
	// (model.CapPortRules: allowedDomains entries may name a port).
	Claims   []model.Capability
	Changed  string // what changed in Since, for reports and --help
	Drivable string // "" when the adapter can drive it; else why not (the trial is not-applicable)
}

// History is every shape, oldest first. Each holds from its Since up to the next one's.
var History = []Shape{
	{Since: "0.0.1", Dialect: DialectPermissions, Command: CommandJoined,
		Changed: "first release: Claude Code settings (permission rules), command as joined arguments"},
	{Since: "0.0.2", Dialect: DialectSRT, Command: CommandJoined,
		Changed: "own settings file (~/.srt-settings.json): network.allowedDomains, filesystem.allowWrite/denyRead/denyWrite"},
	{Since: "0.0.21", Dialect: DialectSRT, Command: CommandFlag,
		Changed: "-c 'COMMAND' runs a shell command string"},
	{Since: "0.0.43", Dialect: DialectSRT, Command: CommandFlag, Claims: []model.Capability{model.CapParentProxy},
		Changed: "network.parentProxy: what the proxy allows goes through a parent proxy"},
	{Since: "0.0.56", Dialect: DialectSRT, Command: CommandFlag, Claims: []model.Capability{model.CapParentProxy, model.CapCredentials},
		Changed: "credentials.envVars and credentials.files: declared secrets withheld from the command (mode deny)"},
	{Since: "0.0.58", Dialect: DialectSRT, Command: CommandFlag, Claims: []model.Capability{model.CapParentProxy, model.CapCredentials, model.CapCredentialMasking},
		Changed: "credentials mode mask for environment variables: the command sees a stand-in, swapped for the real value only towards injectHosts"},
	{Since: "0.0.61", Dialect: DialectSRT, Command: CommandFlag, Claims: []model.Capability{model.CapParentProxy, model.CapCredentials, model.CapCredentialMasking, model.CapFileMasking},
		Changed: "credentials mode mask for files"},
	{Since: "0.0.68", Dialect: DialectSRT, Command: CommandFlag, Claims: []model.Capability{model.CapParentProxy, model.CapCredentials, model.CapCredentialMasking, model.CapFileMasking, model.CapPortRules},
		Changed: "allowedDomains entries may name a port (host:port)"},
	{Since: "0.0.80", Dialect: DialectSRT, Command: CommandFlag, Claims: []model.Capability{model.CapParentProxy, model.CapCredentials, model.CapCredentialMasking, model.CapFileMasking, model.CapPortRules, model.CapNestedUserns},
		Changed: "allowNestedUserNamespaces: the command may make user namespaces of its own"},
}

// ShapeOf returns the shape of a release ("0.0.60", or an adapter's "@pkg@0.0.60"); an unknown
// or unreadable version gets the newest shape.
func ShapeOf(version string) Shape {
	v, err := versions.Parse(versions.Extract(version))
	if err != nil {
		return History[len(History)-1]
	}
	i := sort.Search(len(History), func(i int) bool {
		return versions.Compare(versions.MustParse(History[i].Since), v) > 0
	})
	if i == 0 {
		return Shape{Since: "", Dialect: DialectPermissions, Command: CommandJoined,
			Drivable: fmt.Sprintf("srt %s is older than the first release the adapter knows (%s)", v, History[0].Since)}
	}
	return History[i-1]
}
