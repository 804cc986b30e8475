package model

import (
	"fmt"
	"regexp"
	"strings"
)

// Who a sandbox runs as, spelled as a matrix host's `user:`, the --user flag and a journal's
// cell say it: besides an account's name, these. fixtures/users turns a spec into an account.
const (
	// UserUnprivileged is the dedicated account sandcheck creates and uses (DedicatedUser).
	UserUnprivileged = "unprivileged"
	// UserRoot runs the sandbox as root, as before the user axis existed (CI containers often do).
	UserRoot = "root"
	// UserDefault is what a host runs as when nothing says otherwise: as the sandboxes' users do.
	UserDefault = UserUnprivileged
)

// DedicatedUser is the account UserUnprivileged stands for; DedicatedHome its HOME.
const (
	DedicatedUser = "sandcheck"
	DedicatedHome = "/home/" + DedicatedUser
)

// accountName is what useradd accepts by default on Debian (NAME_REGEX), less '$'.
var accountName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// CheckUser validates a user spec: unprivileged, root, or an account name.
func CheckUser(spec string) error {
	switch spec {
	case UserUnprivileged, UserRoot:
		return nil
	case "":
		return fmt.Errorf("empty user (expected %s, %s or an account name)", UserUnprivileged, UserRoot)
	}
	if !accountName.MatchString(spec) {
		return fmt.Errorf("user %q: expected %s, %s or an account name (lower-case letters, digits, '_' and '-', starting with a letter or '_')", spec, UserUnprivileged, UserRoot)
	}
	return nil
}

// NormalizeUser maps "" (an unset variable or flag) to UserDefault. Callers reading records use
// RecordedUser instead: "" in a journal is root.
func NormalizeUser(spec string) string {
	if s := strings.TrimSpace(spec); s != "" {
		return s
	}
	return UserDefault
}

// RecordedUser is the user a journal record's cell ran as: "" in journals written before the
// user axis existed, when every trial ran as root.
func RecordedUser(spec string) string {
	if spec == "" {
		return UserRoot
	}
	return spec
}

// AsUser names who a recorded cell's sandbox ran as: "sandcheck (unprivileged)", "root", an
// account.
func AsUser(spec string) string {
	if u := RecordedUser(spec); u != UserUnprivileged {
		return u
	}
	return DedicatedUser + " (unprivileged)"
}
