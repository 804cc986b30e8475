package requestscript

import (
	"strings"
	"testing"
)

// TestSecretsOf: a case's carry list maps onto the secrets the trial planted, each by its source;
// one the trial did not say it planted, a name the case asks for that it did not plant, a secret
// a script could not write unquoted (a file above HOME, a variable with a space), another
// sandbox, or a case with nothing to keep get no script, saying why.
func TestSecretsOf(t *testing.T) {
	planted := []canary{{Name: "open-env", Env: "OPEN_TOKEN"}, {Name: "deny-file", File: ".config/app/credentials"}}
	e := &evidence{Canaries: planted}
	e.Target = "srt"
	s, err := e.secretsOf([]string{"env:OPEN_TOKEN", "file:~/.config/app/credentials"}, []string{"open-env"}, []string{"deny-file"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.must) != 1 || s.must[0].Env != "OPEN_TOKEN" || len(s.mustNot) != 1 || s.mustNot[0].File != ".config/app/credentials" {
		t.Errorf("must %+v, must not %+v", s.must, s.mustNot)
	}
	var b strings.Builder
	s.plant(&b)
	s.check(&b)
	for _, want := range []string{
		`caller_env="${caller_env:-} OPEN_TOKEN=$secret_open_env"`,
		`mkdir -p "$w/home/.config/app"`,
		`password %s' "$secret_deny_file" > "$w/home/.config/app/credentials"`,
		`chmod 600 "$w/home/.config/app/credentials"`,
		`grep -qF "$secret_deny_file"; then`,                                  // the bug: exit 1
		`if ! grep -F "carried" "$w/log" | grep -qF "$secret_open_env"; then`, // the control: exit 2
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the script's lines lack %q:\n%s", want, b.String())
		}
	}
	for _, c := range []struct {
		name, target   string
		planted        []canary
		carry, mustNot []string
		why            string
	}{
		{"unplanted source", "srt", planted, []string{"env:OTHER"}, []string{"deny-file"}, "does not say it planted"},
		{"unplanted name", "srt", planted, []string{"env:OPEN_TOKEN"}, []string{"deny-env"}, "did not plant"},
		{"file above HOME", "srt", []canary{{Name: "up", File: "../../etc/passwd"}}, nil, []string{"up"}, "cannot name safely"},
		{"variable with a space", "srt", []canary{{Name: "sp", Env: "A B"}}, nil, []string{"sp"}, "cannot name safely"},
		{"another sandbox", "codex", planted, []string{"env:OPEN_TOKEN"}, []string{"open-env"}, "srt only"},
		{"nothing to keep", "srt", planted, []string{"env:OPEN_TOKEN"}, nil, "names no secret"},
	} {
		e := &evidence{Canaries: c.planted}
		e.Target = c.target
		if _, err := e.secretsOf(c.carry, nil, c.mustNot); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.why)
		}
	}
}
