package doctor

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the fingerprint as two columns, one fact a row, maps expanded one key a row.
func WriteTable(w io.Writer, f Fingerprint) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\n", k, v)
	}
	row("kernel", f.Kernel)
	row("distro", f.Distro)
	row("arch", f.Arch)
	switch f.WSLVersion {
	case "":
		row("wsl", "no")
	default:
		row("wsl", "WSL"+f.WSLVersion)
	}
	if f.WSLVersion != "" || f.WSLNetworkingMode != "" {
		row("wsl networking mode", orText(f.WSLNetworkingMode, "unknown (no wslinfo)"))
	}
	row("wsl interop", map[bool]string{true: "present", false: "absent"}[f.WSLInterop])
	row("bwrap", f.Bwrap)
	row("socat", f.Socat)
	row("node", f.Node)
	row("rg", f.Rg)
	row("sandbox", f.Sandbox)
	if u := f.User; u != nil {
		v := u.Spec + ": " + orText(u.Note, "")
		if u.Name != "" {
			v = fmt.Sprintf("%s: %s (uid %d, gid %d, groups %v, HOME %s)", u.Spec, u.Name, u.UID, u.GID, u.Groups, u.Home)
		}
		row("sandbox user", v)
	}
	for _, k := range sortedKeys(f.Paths) {
		row("path "+k, f.Paths[k])
	}
	for _, k := range sortedKeys(f.Userns) {
		row("sysctl "+k, f.Userns[k])
	}
	if len(f.ProxyEnv) == 0 {
		row("proxy env", "none")
	}
	for _, k := range sortedKeys(f.ProxyEnv) {
		row("proxy env "+k, f.ProxyEnv[k])
	}
	for _, k := range sortedKeys(f.CurlRC) {
		rc := f.CurlRC[k]
		switch {
		case !rc.Exists:
			row("curlrc "+k, "absent")
		case len(rc.ProxyLines) == 0:
			row("curlrc "+k, "present, no proxy lines")
		default:
			row("curlrc "+k, "present: "+strings.Join(rc.ProxyLines, "; "))
		}
	}
	if f.GitProxy == nil {
		row("git http.proxy", "git missing")
	}
	for _, k := range sortedKeys(f.GitProxy) {
		row("git http.proxy --"+k, f.GitProxy[k])
	}
	row("pid1 seccomp", f.PID1Seccomp)
	if f.WorkDirFS != "" {
		row("workspace file system", f.WorkDirFS)
	}
	if !f.CollectedAt.IsZero() {
		row("collected at", f.CollectedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
