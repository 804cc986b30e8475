package doctor

// What the fingerprint reads of the OS release and of WSL: version, networking, drive mounts,
// Windows PATH interop.

import (
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/sandcheck/sandcheck/internal/procfs"
)

func (c *collector) distro() string {
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		s, err := c.read(p)
		if err != nil {
			continue
		}
		vals := parseOSRelease(s)
		if v := vals["PRETTY_NAME"]; v != "" {
			return v
		}
		if v := strings.TrimSpace(vals["NAME"] + " " + vals["VERSION"]); v != "" {
			return v
		}
	}
	return "unknown"
}

// parseOSRelease reads os-release(5): KEY=value lines, values optionally shell-quoted.
func parseOSRelease(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if n := len(v); n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n-1] == v[0] {
			q := v[0]
			v = v[1 : n-1]
			if q == '"' {
				var b strings.Builder
				for i := 0; i < len(v); i++ {
					if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("\"\\$`", v[i+1]) >= 0 {
						i++
					}
					b.WriteByte(v[i])
				}
				v = b.String()
			}
		}
		m[k] = v
	}
	return m
}

// wslVersion decides from the kernel release: WSL2 kernels say "microsoft-standard" (lowercase;
// "-microsoft-standard-WSL2" since 5.10), WSL1's fake release ends in "-Microsoft". A release
// without either but with other WSL evidence (WSL_DISTRO_NAME, WSLInterop) is a custom kernel,
// which only WSL2 allows.
func wslVersion(release string, evidence bool) string {
	switch {
	case strings.Contains(strings.ToLower(release), "microsoft-standard"):
		return "2"
	case strings.Contains(release, "-Microsoft"):
		return "1"
	case strings.Contains(release, "microsoft"):
		return "2"
	case evidence:
		return "2"
	}
	return ""
}

var driveDir = regexp.MustCompile(`^[a-zA-Z]$`)

// interopMounts lists the roots under which Windows drives appear: mounts of type drvfs (9p or
// virtiofs with a drvfs tag), and on WSL the automount root (/mnt/ unless /etc/wsl.conf says
// otherwise) followed by a drive letter.
func (c *collector) interopMounts(wsl bool) (m interop) {
	if s, err := c.read("/proc/self/mounts"); err == nil {
		m.mounts = parseDrvfsMounts(s)
	} else if s, err := c.read("/proc/mounts"); err == nil {
		m.mounts = parseDrvfsMounts(s)
	}
	if wsl {
		m.autoRoot = "/mnt/"
		if s, err := c.read("/etc/wsl.conf"); err == nil {
			if r := iniValue(s, "automount", "root"); r != "" {
				m.autoRoot = strings.TrimSuffix(r, "/") + "/"
			}
		}
	}
	return m
}

type interop struct {
	mounts   []string
	autoRoot string
}

func (m interop) contains(p string) bool {
	for _, mp := range m.mounts {
		if p == mp || strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/") {
			return true
		}
	}
	if m.autoRoot != "" && strings.HasPrefix(p, m.autoRoot) {
		first, _, _ := strings.Cut(strings.TrimPrefix(p, m.autoRoot), "/")
		return driveDir.MatchString(first)
	}
	return false
}

func parseDrvfsMounts(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		dev, mp, typ, opts := f[0], procfs.UnescapeMount(f[1]), f[2], f[3]
		if typ == "drvfs" || ((typ == "9p" || typ == "virtiofs") && (strings.Contains(opts, "drvfs") || strings.Contains(dev, "drvfs"))) {
			out = append(out, mp)
		}
	}
	return out
}

// iniValue finds key in [section] of a wsl.conf-style INI file.
func iniValue(s, section, key string) string {
	in := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			in = strings.EqualFold(strings.Trim(line, "[] \t"), section)
			continue
		}
		if k, v, ok := strings.Cut(line, "="); in && ok && strings.EqualFold(strings.TrimSpace(k), key) {
			v = strings.TrimSpace(v)
			if i := strings.IndexAny(v, "#;"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// describePath renders a resolved tool: the PATH entry, where its symlinks lead, and the interop note.
func (c *collector) describePath(p string, m interop) string {
	target := c.resolveLinks(p)
	s := p
	if target != p {
		s += " -> " + target
	}
	if m.contains(p) || m.contains(target) {
		s += " [" + InteropNote + "]"
	}
	return s
}

// resolveLinks follows symlinks of p within Root (absolute targets are taken relative to Root).
func (c *collector) resolveLinks(p string) string {
	cur := path.Clean(p)
	for range 40 {
		dest, err := os.Readlink(c.rooted(cur))
		if err != nil {
			return cur
		}
		if !path.IsAbs(dest) {
			dest = path.Join(path.Dir(cur), dest)
		}
		cur = path.Clean(dest)
	}
	return cur
}

// versionRE finds a dotted version (0.9.0, v20.11.1, 1.7.4.4, 13.0.0-beta).
var versionRE = regexp.MustCompile(`\bv?\d+\.\d+(?:\.\d+)*(?:[-+~][0-9A-Za-z][0-9A-Za-z.+~-]*)?`)
