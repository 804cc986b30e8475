package orchestrate

import (
	"testing"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/model"
)

// TestBisectCellRunsAsTheUser: a bisect's trials run as the user it was given, as a run's do
// (its cells' user and ID), not as root whatever --user said: a release band that refuses root
// only (srt 0.0.66 to 0.0.75) would otherwise decide every search on the unprivileged account's
// behalf.
func TestBisectCellRunsAsTheUser(t *testing.T) {
	tg := matrix.Target{ID: "srt", Name: "srt"}
	for _, user := range []string{model.UserUnprivileged, model.UserRoot} {
		c := bisectCell(tg, "0.0.75", user, "", "bypass")
		want := matrix.VersionedCellID("srt", "0.0.75", matrix.HostAs("local", user), "", "bypass")
		if c.User != user || c.ID != want || c.Host != "local" {
			t.Errorf("user %s: cell %+v, want user %s, id %s", user, c, user, want)
		}
	}
}
