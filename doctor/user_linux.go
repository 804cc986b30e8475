package doctor

import "github.com/sandcheck/sandcheck/fixtures/users"

// UserOf is the user part of a fingerprint: who the sandbox runs as for spec. A trial has
// resolved its user (and created the dedicated account) before it fingerprints; doctor only
// looks (create false).
func UserOf(spec string, create bool) *User {
	spec = users.Normalize(spec)
	u := &User{Spec: spec}
	var a *users.Account
	var err error
	switch {
	case create || spec == users.Root:
		a, err = users.Resolve(spec)
	case spec == users.Unprivileged:
		a, err = users.Lookup(users.DedicatedName)
		if err != nil {
			u.Note = users.DedicatedName + " does not exist yet: the first trial creates it (or `sandcheck user`)"
			return u
		}
	default:
		a, err = users.Lookup(spec)
	}
	if err != nil {
		u.Note = err.Error()
		return u
	}
	u.Name, u.UID, u.GID, u.Groups, u.Home = a.Name, a.UID, a.GID, a.Groups, a.Home
	return u
}
