package doctor

import (
	"github.com/sandcheck/sandcheck/fixtures/users"
	"github.com/sandcheck/sandcheck/model"
)

// UserOf is the user part of a fingerprint: who the sandbox runs as for spec. A trial has
// resolved its user (and created the dedicated account) before it fingerprints; doctor only
// looks (create false).
func UserOf(spec string, create bool) *User {
	spec = model.NormalizeUser(spec)
	u := &User{Spec: spec}
	var a *users.Account
	var err error
	switch {
	case create || spec == model.UserRoot:
		a, err = users.Resolve(spec)
	case spec == model.UserUnprivileged:
		a, err = users.Lookup(model.DedicatedUser)
		if err != nil {
			u.Note = model.DedicatedUser + " does not exist yet: the first trial creates it (or `sandcheck user`)"
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
