package wsl2like

import (
	"regexp"
	"strings"
	"testing"
)

// srtWSLVersion is srt's own reading of /proc/version (dist/utils/platform.js, getWslVersion):
// "WSL<n>" names the version, "microsoft" without it is WSL 1, neither is not WSL.
func srtWSLVersion(procVersion string) string {
	if m := regexp.MustCompile(`(?i)WSL(\d+)`).FindStringSubmatch(procVersion); m != nil {
		return m[1]
	}
	if strings.Contains(strings.ToLower(procVersion), "microsoft") {
		return "1"
	}
	return ""
}

func TestVariantsReadAsTheirWSLBySRTsRule(t *testing.T) {
	banner := func(release string) string {
		return "Linux version " + release + " (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0) #1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2026-07-02)"
	}
	for v, want := range map[Variant]string{WSL2: "2", WSL1: "1"} {
		if got := srtWSLVersion(banner("6.1.0-50-amd64" + v.ReleaseSuffix())); got != want {
			t.Errorf("%s: srt reads WSL %q, want %q", v, got, want)
		}
	}
	if got := srtWSLVersion(banner("6.1.0-50-amd64")); got != "" {
		t.Errorf("the plain Debian kernel reads as WSL %q", got)
	}
}

func TestEnvPutsTrialsOnTheDrive(t *testing.T) {
	env := Env("Debian")
	if env["WSL_DISTRO_NAME"] != "Debian" || env["WSL_INTEROP"] != InteropSock || !strings.HasPrefix(env["SANDCHECK_WORKDIR"], DriveDir+"/") {
		t.Fatalf("env: %v", env)
	}
	if !strings.Contains(env["PATH"], ":/usr/bin:") || !strings.HasSuffix(env["PATH"], "WindowsPowerShell/v1.0") {
		t.Fatalf("PATH %q: the distribution's directories, then Windows'", env["PATH"])
	}
}

func TestSetupMakesWhatTheEnvNames(t *testing.T) {
	s := string(Setup(false))
	for _, want := range []string{"set -e", WorkDir, "UNIX-LISTEN:" + InteropSock, "[ -S " + InteropSock + " ]", "/etc/wsl.conf", "hostname " + Hostname} {
		if !strings.Contains(s, want) {
			t.Errorf("setup lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "/home") {
		t.Error("HOME moved to the drive without homeOnDrive")
	}
	if !strings.Contains(string(Setup(true)), "mount --bind "+DriveDir+"/Users/home /home") {
		t.Error("homeOnDrive does not bind /home to the drive")
	}
}
