package doctor

// The proxy configuration a sandboxed program would inherit: the environment, curlrc files and
// git, with credentials redacted.

import (
	"bufio"
	"errors"
	"io/fs"
	"path"
	"strings"
)

// proxyEnv keeps every variable named *_PROXY in any case (HTTP_PROXY, https_proxy, NO_PROXY,
// npm_config_proxy, ...), with URL credentials redacted.
func proxyEnv(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasSuffix(strings.ToUpper(k), "_PROXY") {
			m[k] = RedactURL(v)
		}
	}
	return m
}

// Redacted replaces credentials.
const Redacted = "REDACTED"

// RedactURL hides the userinfo of a URL or of a bare "user:pass@host:port", and every entry of a
// comma-separated list of them.
func RedactURL(v string) string {
	if strings.Contains(v, ",") {
		parts := strings.Split(v, ",")
		for i, p := range parts {
			parts[i] = RedactURL(p)
		}
		return strings.Join(parts, ",")
	}
	start := 0
	if i := strings.Index(v, "://"); i >= 0 {
		start = i + 3
	}
	rest := v[start:]
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return v[:start] + Redacted + rest[at:]
	}
	return v
}

func (c *collector) curlrc() map[string]RCFile {
	m := map[string]RCFile{}
	files := [][2]string{{"~/.curlrc", ""}, {"/etc/curlrc", "/etc/curlrc"}}
	if c.home != "" {
		files[0][1] = path.Join(c.home, ".curlrc")
	}
	for _, f := range files {
		rc := RCFile{ProxyLines: []string{}}
		if f[1] != "" {
			if s, err := c.read(f[1]); err == nil {
				rc.Exists = true
				rc.ProxyLines = curlProxyLines(s)
			} else if !errors.Is(err, fs.ErrNotExist) {
				rc.Exists = c.exists(f[1]) // there but unreadable
			}
		}
		m[f[0]] = rc
	}
	return m
}

// curlProxyLines picks the lines of a curl config that set a proxy (proxy, -x, socks5,
// preproxy, noproxy, proxy-user, ...), hiding credentials.
func curlProxyLines(s string) []string {
	out := []string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		opt := strings.TrimLeft(line, "-")
		i := strings.IndexAny(opt, " \t=:")
		key, val := opt, ""
		if i >= 0 {
			key, val = opt[:i], strings.TrimLeft(opt[i:], " \t=:")
		}
		lk := strings.ToLower(key)
		short := strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "--")
		isProxy := strings.Contains(lk, "proxy") || strings.HasPrefix(lk, "socks") || (short && (key == "x" || key == "U"))
		if !isProxy {
			continue
		}
		if strings.Contains(lk, "user") || strings.Contains(lk, "pass") || (short && key == "U") {
			out = append(out, key+" = "+Redacted)
			continue
		}
		out = append(out, key+" = "+RedactURL(strings.Trim(val, `"'`)))
	}
	return out
}

// gitProxy asks git for http.proxy at global and system scope. Under a fixture Root it reads
// the root's ~/.gitconfig and /etc/gitconfig instead of the host's.
func (c *collector) gitProxy(git string) map[string]string {
	m := map[string]string{}
	scopes := [][]string{{"global", "--global"}, {"system", "--system"}}
	if c.root != "/" {
		scopes = [][]string{
			{"global", "--file", c.rooted(path.Join(c.home, ".gitconfig"))},
			{"system", "--file", c.rooted("/etc/gitconfig")},
		}
	}
	for _, s := range scopes {
		argv := append([]string{git, "config"}, s[1:]...)
		argv = append(argv, "--get", "http.proxy")
		out, err := c.run(argv...)
		v := strings.TrimSpace(out)
		if err != nil || v == "" {
			v = "unset"
		} else {
			v = RedactURL(firstLine(v))
		}
		m[s[0]] = v
	}
	return m
}
