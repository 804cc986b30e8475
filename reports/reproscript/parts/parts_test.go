package parts

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestAsAccount: the account switch comes off a command line, naming who the sandbox ran as.
func TestAsAccount(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		account string
		user    string
		rest    []string
	}{
		{[]string{"srt", "-c", "x"}, "", "root", []string{"srt", "-c", "x"}},
		{[]string{"setpriv", "--reuid=1001", "--", "srt", "-c", "x"}, "", "sandcheck", []string{"srt", "-c", "x"}},
		{[]string{"setpriv", "--reuid=1002", "--", "bwrap"}, "alice", "alice", []string{"bwrap"}},
	} {
		user, rest, err := AsAccount(c.argv, c.account)
		if err != nil || user != c.user || !slices.Equal(rest, c.rest) {
			t.Errorf("AsAccount(%q, %q) = %s %q %v, want %s %q", c.argv, c.account, user, rest, err, c.user, c.rest)
		}
	}
	if _, _, err := AsAccount([]string{"setpriv", "--reuid=1"}, ""); err == nil {
		t.Error("setpriv without -- is read as a command line")
	}
}

// TestArgvSandbox: the sandbox's own arguments are those between its executable and the probe's;
// a command line that does not end in the probe has none.
func TestArgvSandbox(t *testing.T) {
	user, args, err := ArgvSandbox([]string{"setpriv", "--", "/usr/bin/firejail", "--quiet", "--", "/opt/sandcheck", ProbeVerb, "/t/spec.json"}, "")
	if err != nil || user != "sandcheck" || !slices.Equal(args, []string{"--quiet", "--"}) {
		t.Errorf("got %s %q %v", user, args, err)
	}
	if _, _, err := ArgvSandbox([]string{"/srt", "--settings", "f", "-c", "'probe' '" + ProbeVerb + "' 'x'"}, ""); err == nil || !strings.Contains(err.Error(), "one string") {
		t.Errorf("srt's one-string command: %v", err)
	}
}

// TestInScriptAndMakeDirs: a trial's path becomes the script's, quoted for sh whatever it holds;
// the directories the arguments name are made once each.
func TestInScriptAndMakeDirs(t *testing.T) {
	got := InScript("--read-write=/t/trial/it's", "/t/trial")
	if got != `'--read-write='"$w"'/it'\''s'` {
		t.Errorf("InScript: %s", got)
	}
	out, err := exec.Command("sh", "-c", `w=/W; printf '%s' `+got).Output()
	if err != nil || string(out) != "--read-write=/W/it's" {
		t.Errorf("sh reads %s back as %q (%v)", got, out, err)
	}
	dirs := MakeDirs([]string{"--bind", "/t/trial/ws", "/t/trial/ws", "--env=TMPDIR=/t/trial/tmp", "/etc"}, "/t/trial")
	if dirs != "mkdir -p ''\"$w\"'/ws'\nmkdir -p ''\"$w\"'/tmp'\n" {
		t.Errorf("MakeDirs: %q", dirs)
	}
}

// TestInScriptArgs: the sandbox's arguments, each quoted as InScript does, each led by a space;
// none is nothing.
func TestInScriptArgs(t *testing.T) {
	if got := InScriptArgs([]string{"--bind", "/t/trial/ws", "/t/trial/ws"}, "/t/trial"); got != ` '--bind' ''"$w"'/ws' ''"$w"'/ws'` {
		t.Errorf("InScriptArgs: %s", got)
	}
	if got := InScriptArgs(nil, "/t/trial"); got != "" {
		t.Errorf("no arguments: %q", got)
	}
}

// TestSandboxAs: the opening of a script that runs another sandbox than srt names no srt.
func TestSandboxAs(t *testing.T) {
	s := SandboxAs("bwrap", "sandcheck")
	if !strings.Contains(s, "SANDBOX=${SANDBOX:-bwrap}") || !strings.Contains(s, "set SANDBOX=/path/to/it") || strings.Contains(s, "srt") {
		t.Errorf("SandboxAs:\n%s", s)
	}
}

// TestInScriptAddr: the trial's address becomes the script's wherever it stands alone, never as
// the start of a longer number; the trial's directory becomes the script's as InScript does it.
func TestInScriptAddr(t *testing.T) {
	for _, c := range []struct{ in, quoted, expanded string }{
		{`domains={"198.18.7.2"="allow","198.18.7.25"="allow"}`, `'domains={"'"$b.2"'"="allow","198.18.7.25"="allow"}'`,
			`domains={"198.19.3.2"="allow","198.18.7.25"="allow"}`},
		{"198.18.7.2", `''"$b.2"''`, "198.19.3.2"},
		{"/tmp/t-1/ws 1.2.3.4", `''"$w"'/ws 1.2.3.4'`, "/w/ws 1.2.3.4"},
	} {
		got := InScriptAddr(c.in, "/tmp/t-1", "198.18.7.2", AllowedAddr)
		if got != c.quoted {
			t.Errorf("%s: %s, want %s", c.in, got, c.quoted)
		}
		if out, err := exec.Command("sh", "-c", "b=198.19.3; w=/w; printf %s "+got).Output(); err != nil || string(out) != c.expanded {
			t.Errorf("%s in sh: %q, %v; want %q", c.in, out, err, c.expanded)
		}
	}
}
