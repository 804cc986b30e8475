package ssh

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sandcheck/sandcheck/matrix"
	"github.com/sandcheck/sandcheck/runner/hosts"
)

// An ssh entry's keys, as the matrix reads them through this kind.
func TestSettings(t *testing.T) {
	parse := func(entry string) (*matrix.Matrix, error) {
		return matrix.Parse("m.yaml", []byte("targets: [{name: srt}]\nhosts:\n  - "+entry+"\n"), matrix.Registry{HostKinds: hosts.Matrix()})
	}
	m, err := parse(`{name: box, kind: ssh, address: "h:2222", login: u, key_file: /k, known_hosts: [/a, /b], user: dev}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Address: "h:2222", User: "u", KeyFile: "/k", KnownHosts: []string{"/a", "/b"}}
	if got := m.Hosts[0].Settings.(Config); !reflect.DeepEqual(got, want) || m.Hosts[0].Users[0] != "dev" {
		t.Fatalf("settings = %+v, users %v", got, m.Hosts[0].Users)
	}
	if m, _ := parse("{name: box, kind: ssh, address: a, known_hosts: /one}"); !reflect.DeepEqual(m.Hosts[0].Settings.(Config).KnownHosts, []string{"/one"}) {
		t.Fatalf("one known_hosts file: %+v", m.Hosts[0])
	}
	for entry, want := range map[string]string{
		"{name: s, kind: ssh}":                              "m.yaml:3: hosts[0].address: missing (a ssh host needs an address host[:port])",
		"{name: s, kind: ssh, address: a, key_file: [1]}":   "m.yaml:3: hosts[0].key_file: expected a private key file, got a list",
		"{name: s, kind: ssh, address: a, login: [x]}":      "m.yaml:3: hosts[0].login: expected the account to log in as",
		"{name: s, kind: ssh, address: a, known_hosts: {}}": "m.yaml:3: hosts[0].known_hosts: expected a file or a list of files, got a mapping",
		"{name: s, kind: ssh, address: a, distro: debian}":  "m.yaml:3: hosts[0].distro: unknown key",
	} {
		if _, err := parse(entry); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", entry, err, want)
		}
	}
}
