package wording

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sandcheck/sandcheck/reports/schema"
	"github.com/sandcheck/sandcheck/versions"
)

// envRow is one line of the Environment table: a label and the fingerprint keys that may hold it.
// The doctor's fingerprint may spell keys several ways (or nest them); we match on normalised
// dotted keys and their last segment, and print "unknown" rather than drop a row, because a bug
// report that silently omits "WSL networking mode" invites the wrong guess.
type envRow struct {
	label string
	keys  []string
}

var envRows = []envRow{
	{"kernel", []string{"kernel", "kernel_release", "uname", "uname_r"}},
	{"distro", []string{"distro", "os_release", "pretty_name", "os"}},
	{"WSL version", []string{"wsl_version", "wsl.version"}},
	{"WSL networking mode", []string{"wsl_networking", "wsl_networking_mode", "wsl.networking_mode", "wsl.networking", "networking_mode"}},
	{"bubblewrap", []string{"bwrap", "bwrap_version", "bubblewrap", "versions.bwrap"}},
	{"socat", []string{"socat", "socat_version", "versions.socat"}},
	{"node", []string{"node", "node_version", "versions.node"}},
	{"sandbox", []string{"sandbox", "sandbox_version", "sandbox_runtime", "srt", "srt_version", "versions.sandbox", "versions.srt"}},
	{"userns sysctls", []string{"userns", "userns_sysctls", "sysctls", "sysctl"}},
	{"proxy env", []string{"proxy_env", "env_proxy"}},
	{"curlrc", []string{"curlrc"}},
	{"git proxy", []string{"git_proxy", "git_http_proxy", "git.http.proxy"}},
}

type kv struct{ key, val string }

// flatten turns a fingerprint into dotted keys with scalar values, in key order.
func flatten(prefix string, v any, out *[]kv) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && prefix != "" {
			*out = append(*out, kv{prefix, "(none)"})
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x[k], out)
		}
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			b, _ := json.Marshal(e)
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(b))
			}
		}
		*out = append(*out, kv{prefix, strings.Join(parts, ", ")})
	case nil:
		*out = append(*out, kv{prefix, "absent"})
	case string:
		if x == "" {
			x = "(empty)"
		}
		*out = append(*out, kv{prefix, x})
	default:
		b, _ := json.Marshal(x)
		*out = append(*out, kv{prefix, string(b)})
	}
}

func normKey(k string) string { return strings.ToLower(strings.ReplaceAll(k, "-", "_")) }

// EnvTable matches fingerprint keys to the standard rows, then lists what is left over.
func EnvTable(fp json.RawMessage) [][2]string {
	var flat []kv
	var v any
	if len(fp) > 0 && json.Unmarshal(fp, &v) == nil {
		if _, ok := v.(map[string]any); ok {
			flatten("", v, &flat)
		}
	}
	used := make([]bool, len(flat))
	var rows [][2]string
	for _, r := range envRows {
		var vals []string
		for _, cand := range r.keys {
			for i, e := range flat {
				if used[i] {
					continue
				}
				k := normKey(e.key)
				last := k[strings.LastIndex(k, ".")+1:]
				switch {
				case k == cand || (!strings.Contains(cand, ".") && last == cand):
					vals = append(vals, e.val)
				case strings.HasPrefix(k, cand+"."):
					vals = append(vals, e.key[len(cand)+1:]+"="+e.val)
				default:
					continue
				}
				used[i] = true
			}
			if len(vals) > 0 {
				break
			}
		}
		val := "unknown"
		if len(vals) > 0 {
			val = strings.Join(vals, "; ")
		}
		rows = append(rows, [2]string{r.label, val})
	}
	for i, e := range flat {
		if !used[i] {
			rows = append(rows, [2]string{e.key, e.val})
		}
	}
	return rows
}

// HostEnv is a host's environment table. On a host whose cells ran chosen versions, the one
// fingerprint kept per host names only the first trial's build: the sandbox row says which
// versions ran instead.
func HostEnv(rep *schema.Report, host string) [][2]string {
	rows := EnvTable(rep.Hosts[host])
	byTarget := map[string][]string{}
	var names []string
	for _, o := range rep.Overall {
		if o.Host != host || o.Version == "" {
			continue
		}
		if _, ok := byTarget[o.Target]; !ok {
			names = append(names, o.Target)
		}
		byTarget[o.Target] = append(byTarget[o.Target], o.Version)
	}
	if len(names) == 0 {
		return rows
	}
	var parts []string
	for _, n := range names {
		vs := versions.Sorted(byTarget[n])
		if len(vs) == 1 {
			parts = append(parts, n+" "+vs[0])
		} else {
			parts = append(parts, fmt.Sprintf("%s %s … %s (%d versions)", n, vs[0], vs[len(vs)-1], len(vs)))
		}
	}
	val := "per cell: " + strings.Join(parts, "; ")
	for i, r := range rows {
		if r[0] == "sandbox" {
			rows[i][1] = val
			return rows
		}
	}
	return append(rows, [2]string{"sandbox", val})
}
