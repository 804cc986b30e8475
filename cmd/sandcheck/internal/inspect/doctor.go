package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/sandcheck/sandcheck/cmd/sandcheck/internal/cli"
	"github.com/sandcheck/sandcheck/doctor"
	"github.com/sandcheck/sandcheck/model"
	"github.com/sandcheck/sandcheck/targets"
)

func init() {
	cli.Register("doctor", "print this host's fingerprint (kernel, WSL, tool versions, userns, proxy env)", doctorCmd)
}

func doctorCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlags("doctor", "[--json]", `  sandcheck doctor
  sandcheck doctor --json > fingerprint.json`, stderr)
	asJSON := fs.Bool("json", false, "print JSON (the keys reports read) instead of a table")
	root := fs.String("root", "/", "read /proc, /etc and home files under this `DIR` (for tests on fixture trees)")
	user := fs.String("user", model.UserDefault, cli.UserHelp+" (looked up, not created)")
	target := fs.String("target", "srt", "the sandbox whose build the fingerprint names")
	if ok, code := cli.Parse(fs, args); !ok {
		return code
	}
	if runtime.GOOS == "windows" {
		// The fingerprint's facts (kernel, sysctls, WSL mode, bwrap) live inside the distribution.
		fmt.Fprintln(stderr, "sandcheck doctor: on Windows this describes this machine only partly (Windows version, PATH, proxy settings); run `sandcheck doctor` inside the WSL distribution for the full fingerprint (kernel, WSL version and networking mode, sandbox tools)")
	}
	opts := doctor.Options{Root: *root}
	if *root == "/" || *root == "" {
		t, err := targets.New(*target, map[string]string{})
		opts.UseSandbox(*target, t, err)
		opts.User = doctor.UserOf(*user, false)
	}
	f := doctor.Collect(opts)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(f); err != nil {
			fmt.Fprintf(stderr, "sandcheck doctor: %v\n", err)
		}
		return 0
	}
	if err := doctor.WriteTable(stdout, f); err != nil {
		fmt.Fprintf(stderr, "sandcheck doctor: %v\n", err)
	}
	return 0
}
