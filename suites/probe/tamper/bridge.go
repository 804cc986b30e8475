package tamper

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SwapBridge replaces the unix sockets under dir (two levels at most) by links to to: "swapped
// PATH" or "PATH: error" for each, "no unix socket under DIR" for none.
func SwapBridge(dir, to string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= 64 { // a sandbox keeps a few sockets there

			return filepath.SkipDir
		}
		if d.IsDir() && strings.Count(strings.TrimPrefix(p, dir), "/") > 1 {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSocket == 0 || p == to {
			return nil
		}
		if err := os.Remove(p); err != nil {
			out = append(out, p+": "+err.Error())
		} else if err := os.Symlink(to, p); err != nil {
			out = append(out, p+": removed, but "+err.Error())
		} else {
			out = append(out, "swapped "+p)
		}
		return nil
	})
	if len(out) == 0 {
		out = append(out, "no unix socket under "+dir)
	}
	return out
}
