package aggregate

import (
	"encoding/json"

	"github.com/sandcheck/sandcheck/model"
)

// takeSettings keeps the first trial's sandbox settings for the Settings section. A trial whose
// scenarios ran sessions of their own keys its evidence by scenario: then the settings of the
// first scenario that failed (in any trial), else of its first scenario, named in settingsOf.
func (a *Aggregator) takeSettings(r model.Record) {
	if len(r.Evidence) == 0 || (a.settings != nil && (a.settingsOf == "" || a.settingsFailed)) {
		return
	}
	type withSettings struct {
		Settings json.RawMessage `json:"settings"`
	}
	var ev withSettings
	if json.Unmarshal(r.Evidence, &ev) == nil && len(ev.Settings) > 0 {
		if a.settings == nil {
			a.settings = append(json.RawMessage(nil), ev.Settings...)
		}
		return
	}
	var keyed map[string]withSettings
	if json.Unmarshal(r.Evidence, &keyed) != nil {
		return
	}
	for _, sc := range r.Scenarios {
		k, ok := keyed[sc.Name]
		if !ok || len(k.Settings) == 0 || (a.settings != nil && sc.Pass) {
			continue
		}
		a.settings, a.settingsOf, a.settingsFailed = append(json.RawMessage(nil), k.Settings...), sc.Name, !sc.Pass
		if !sc.Pass {
			return
		}
	}
}
