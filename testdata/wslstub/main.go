// Command wslstub stands in for Windows' wsl.exe where no Windows exists, so the wsl host driver
// can be tested on Linux. It follows wsl.exe's argument grammar and manners, and runs the Linux
// command on this machine, as the distribution would:
//
//	wsl.exe [-d|--distribution DISTRO] [-u|--user USER] [--cd DIR] [--shell-type standard|login|none]
//	        (-e|--exec CMD ARGS... | -- CMDLINE... | CMDLINE...)
//	wsl.exe --shutdown [--force]      wsl.exe -t|--terminate DISTRO
//	wsl.exe -l|--list [-v|--verbose] [-q|--quiet] [--running] [--all]
//	wsl.exe -v|--version              wsl.exe --status
//
// Manners copied from wsl.exe: its own messages (errors, listings) are UTF-16LE with CRLF unless
// WSL_UTF8=1 is set (WSLSTUB_IGNORE_UTF8=1 plays an old wsl.exe that ignores it); its own
// failures exit -1 (0xFFFFFFFF on Windows, 255 here) with an "Error code: Wsl/..." line;
// otherwise the exit status is the Linux command's. The Linux command runs in its own session,
// so killing wsl.exe does not kill it (as with the real one, whose Linux side lives in the VM).
//
// Environment: WSLSTUB_DISTROS ("Debian,Ubuntu"; the first is the default), WSLSTUB_STATE (a
// directory remembering which distributions run), WSLSTUB_LOG (appends one JSON line per call:
// argv and WSL_UTF8), WSLSTUB_DELAY (a duration slept before a stopped distribution starts: a
// cold start).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf16"
)

const failed = -1 // wsl.exe's own failure code

func main() { os.Exit(run(os.Args[1:])) }

// say writes one of wsl.exe's own messages in its encoding.
func say(f *os.File, lines ...string) {
	s := strings.Join(lines, "\r\n") + "\r\n"
	if os.Getenv("WSL_UTF8") == "1" && os.Getenv("WSLSTUB_IGNORE_UTF8") == "" {
		f.WriteString(s)
		return
	}
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	f.Write(b)
}

func fail(code string, lines ...string) int {
	say(os.Stderr, append(lines, "Error code: "+code)...)
	return failed
}

func distros() []string {
	v := os.Getenv("WSLSTUB_DISTROS")
	if v == "" {
		v = "Debian"
	}
	return strings.Split(v, ",")
}

func stateFile(d string) string {
	if s := os.Getenv("WSLSTUB_STATE"); s != "" {
		return filepath.Join(s, d+".running")
	}
	return ""
}

func running(d string) bool {
	f := stateFile(d)
	if f == "" {
		return true
	}
	_, err := os.Stat(f)
	return err == nil
}

func logCall(args []string) {
	f := os.Getenv("WSLSTUB_LOG")
	if f == "" {
		return
	}
	b, _ := json.Marshal(map[string]any{"args": args, "WSL_UTF8": os.Getenv("WSL_UTF8")})
	if lf, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		lf.Write(append(b, '\n'))
		lf.Close()
	}
}

func run(args []string) int {
	logCall(args)
	var distro, usr, cd, action string
	var cmd []string
	viaShell, verbose := false, false
	value := func(i *int) (string, bool) {
		if *i+1 >= len(args) {
			return "", false
		}
		*i++
		return args[*i], true
	}
	i := 0
parse:
	for ; i < len(args); i++ {
		a := args[i]
		var ok bool
		switch a {
		case "-d", "--distribution":
			if distro, ok = value(&i); !ok {
				return fail("Wsl/E_INVALIDARG", "Command line argument "+a+" requires a value.", "Please use 'wsl.exe --help' to get a list of supported arguments.")
			}
		case "-u", "--user":
			if usr, ok = value(&i); !ok {
				return fail("Wsl/E_INVALIDARG", "Command line argument "+a+" requires a value.")
			}
		case "--cd":
			if cd, ok = value(&i); !ok {
				return fail("Wsl/E_INVALIDARG", "Command line argument --cd requires a value.")
			}
		case "--shell-type":
			if _, ok = value(&i); !ok {
				return fail("Wsl/E_INVALIDARG", "Command line argument --shell-type requires a value.")
			}
		case "-e", "--exec":
			if i+1 >= len(args) {
				return fail("Wsl/E_INVALIDARG", "Command line argument "+a+" requires a value.")
			}
			cmd = args[i+1:]
			break parse
		case "--":
			cmd, viaShell = args[i+1:], true
			break parse
		case "--shutdown":
			action = "shutdown"
		case "--force", "--system", "-q", "--quiet", "--running", "--all":
		case "-t", "--terminate":
			if distro, ok = value(&i); !ok {
				return fail("Wsl/E_INVALIDARG", "Command line argument "+a+" requires a value.")
			}
			action = "terminate"
		case "-l", "--list":
			action = "list"
		case "-v", "--verbose":
			verbose = true
		case "--version":
			action = "version"
		case "--status":
			action = "status"
		case "--help":
			say(os.Stdout, "Usage: wsl.exe [Argument] [Options...] [CommandLine]")
			return failed
		default:
			if strings.HasPrefix(a, "-") {
				return fail("Wsl/E_INVALIDARG", "Invalid command line argument: "+a, "Please use 'wsl.exe --help' to get a list of supported arguments.")
			}
			cmd, viaShell = args[i:], true
			break parse
		}
	}
	if action == "" && verbose && cmd == nil {
		action = "version"
	}
	switch action {
	case "shutdown":
		if s := os.Getenv("WSLSTUB_STATE"); s != "" {
			files, _ := filepath.Glob(filepath.Join(s, "*.running"))
			for _, f := range files {
				os.Remove(f)
			}
		}
		return 0
	case "terminate":
		if !known(distro) {
			return fail("Wsl/Service/WSL_E_DISTRO_NOT_FOUND", "There is no distribution with the supplied name.")
		}
		if f := stateFile(distro); f != "" {
			os.Remove(f)
		}
		say(os.Stdout, "The operation completed successfully. ")
		return 0
	case "list":
		if verbose {
			lines := []string{"  NAME      STATE           VERSION"}
			for j, d := range distros() {
				mark, state := " ", "Stopped"
				if j == 0 {
					mark = "*"
				}
				if running(d) {
					state = "Running"
				}
				lines = append(lines, fmt.Sprintf("%s %-9s %-15s 2", mark, d, state))
			}
			say(os.Stdout, lines...)
		} else {
			lines := []string{"Windows Subsystem for Linux Distributions:"}
			for j, d := range distros() {
				if j == 0 {
					d += " (Default)"
				}
				lines = append(lines, d)
			}
			say(os.Stdout, lines...)
		}
		return 0
	case "version":
		say(os.Stdout, "WSL version: 2.4.13.0 (sandcheck wslstub)", "Kernel version: "+kernel())
		return 0
	case "status":
		say(os.Stdout, "Default Distribution: "+distros()[0], "Default Version: 2")
		return 0
	}

	if distro == "" {
		distro = distros()[0]
	}
	if !known(distro) {
		return fail("Wsl/Service/WSL_E_DISTRO_NOT_FOUND", "There is no distribution with the supplied name.")
	}
	if !running(distro) {
		if d, err := time.ParseDuration(os.Getenv("WSLSTUB_DELAY")); err == nil {
			time.Sleep(d) // a cold start
		}
		os.WriteFile(stateFile(distro), nil, 0o644)
	}
	if len(cmd) == 0 {
		cmd, viaShell = []string{"sh"}, false
	}
	if viaShell {
		cmd = []string{"sh", "-c", strings.Join(cmd, " ")}
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if usr != "" {
		u, err := user.Lookup(usr)
		if err != nil {
			return fail("Wsl/Service/CreateInstance/E_FAIL", "<3>WSL ERROR: CreateProcessParseCommon: getpwnam("+usr+") failed 0")
		}
		if cur, _ := user.Current(); cur == nil || cur.Uid != u.Uid {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			c.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		}
		c.Env = append(os.Environ(), "USER="+u.Username, "HOME="+u.HomeDir)
	}
	if cd != "" {
		if cd == "~" {
			cd, _ = os.UserHomeDir()
		}
		if st, err := os.Stat(cd); err != nil || !st.IsDir() {
			return fail("Wsl/Service/CreateInstance/E_FAIL", "<3>WSL ERROR: CreateProcessCommon: chdir("+cd+") failed 2")
		}
		c.Dir = cd
	}
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	default:
		// Like wsl.exe's report of an -e command it cannot execute.
		return fail("Wsl/Service/CreateInstance/E_FAIL", "<3>WSL ERROR: CreateProcessCommon: execvpe("+cmd[0]+") failed: No such file or directory")
	}
}

func known(d string) bool {
	for _, x := range distros() {
		if strings.EqualFold(x, d) {
			return true
		}
	}
	return false
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}
