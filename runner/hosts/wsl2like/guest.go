package wsl2like

// What makes the guest look like a WSL distribution from inside: the kernel's release, the drive
// under /mnt/c, the interop environment and socket, /etc/wsl.conf, a Windows-like host name.

import (
	"fmt"
	"strings"
)

// Variant is which WSL the guest plays.
type Variant string

const (
	WSL2 Variant = "wsl2" // a Linux kernel in a light VM: what WSL 2 is, and what sandboxes support
	WSL1 Variant = "wsl1" // Windows translating Linux system calls, no Linux kernel: srt refuses it
)

// ReleaseSuffix is what the variant appends to the Debian kernel's release, as WSL's own
// kernels name themselves: WSL 2's "5.15.167.4-microsoft-standard-WSL2", WSL 1's
// "4.4.0-19041-Microsoft". Sandboxes read /proc/version for it (srt: "WSL<n>" is that version of
// WSL; "microsoft" without it is WSL 1).
func (v Variant) ReleaseSuffix() string {
	if v == WSL1 {
		return "-Microsoft"
	}
	return "-microsoft-standard-WSL2"
}

// The guest's layout.
const (
	DriveDir    = "/mnt/c"                          // the drive, a 9p share as WSL's drvfs mounts C:
	DriveTag    = "drvfs"                           // its 9p mount tag
	WorkDir     = DriveDir + "/Users/sandcheck/src" // the trials' directories (and so workspaces)
	InteropSock = "/run/WSL/1_interop"              // WSL_INTEROP: init's socket in WSL
	InteropLog  = "/run/WSL/interop.log"            // who connected to it, for a scenario to read
	Hostname    = "SANDCHECK-PC"                    // WSL names the distribution's host after Windows'
)

// The drive's 9p protocol. WSL 2's drvfs is 9P2000.L whose server (Windows') answers statfs(2)
// with 9p's own type (V9FS_MAGIC); srt reads that type to take its Windows-drive branch for mount
// points. QEMU's server answers the host directory's type instead (ext4 here), so no virtio share
// gives both: 9p2000.L (default) keeps drvfs's semantics, fsync and renames included; 9p2000.u
// makes the guest's kernel answer 9p itself, but QEMU 7.2 never answers the blank Twstat that
// Linux sends for fsync over 9P2000.u, so every fsync on that drive hangs the caller in
// p9_client_rpc (unkillable): Claude Code (atomic writes of ~/.claude.json), git and dd
// conv=fsync never finish there. Use it for srt's filesystem scenarios only.
const (
	Drive9P2000L = "9p2000.L" // default: drvfs's semantics; statfs says the host's type
	Drive9P2000U = "9p2000.u" // statfs says 9p, as on WSL 2; fsync hangs
)

// DriveOptions are the v9fs options of the drive, as close to WSL's drvfs mount as a virtio
// share allows (WSL: "rw,noatime,dirsync,aname=drvfs;path=C:\;uid=1000;gid=1000;
// symlinkroot=/mnt/,mmap,access=client,msize=65536,trans=fd"): mmap caching, 64 KiB messages,
// permission checks on the client over 9p2000.L (9p2000.u has no client mode: the user's own
// attach). aname, uid, gid and symlinkroot belong to Windows' 9p server.
func DriveOptions(protocol string) string {
	access := "client"
	if protocol == Drive9P2000U {
		access = "user"
	}
	return "version=" + protocol + ",access=" + access + ",cache=mmap,msize=65536,noatime,dirsync"
}

// windowsPath is what WSL appends to PATH from Windows (appendWindowsPath, the default): lookups
// walk these directories on the drive first-come, so a missing tool costs 9p round trips.
var windowsPath = []string{DriveDir + "/Windows/system32", DriveDir + "/Windows", DriveDir + "/Windows/System32/Wbem",
	DriveDir + "/Windows/System32/WindowsPowerShell/v1.0"}

// Env is what the trials see of WSL: the distribution's name, the interop socket, WSLENV, the
// Windows directories on PATH, and their directories on the drive.
func Env(distro string) map[string]string {
	return map[string]string{
		"WSL_DISTRO_NAME":   distro,
		"WSL_INTEROP":       InteropSock,
		"WSLENV":            "",
		"PATH":              "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:" + strings.Join(windowsPath, ":"),
		"SANDCHECK_WORKDIR": WorkDir,
	}
}

// Setup is the boot's setup script (run as root before the agent, after the drive is mounted):
// Windows' directories on the drive, the interop socket (a listener that logs and drops every
// connection: nothing Windows is behind it), /etc/wsl.conf as a distribution has it, the host
// name, and with homeOnDrive every account's HOME on the drive (/home bound to C:\Users).
func Setup(homeOnDrive bool) []byte {
	var b strings.Builder
	b.WriteString("set -e\n")
	fmt.Fprintf(&b, "mkdir -p %s %s/Users/sandcheck %s /run/WSL /mnt/wsl\n", strings.Join(windowsPath, " "), DriveDir, WorkDir)
	fmt.Fprintf(&b, "chmod 1777 %s\n", WorkDir)
	fmt.Fprintf(&b, "socat -lf %s -d -d UNIX-LISTEN:%s,fork,mode=0666 /dev/null </dev/null >/dev/null 2>&1 &\n", InteropLog, InteropSock)
	fmt.Fprintf(&b, "i=0; while [ ! -S %s ] && [ $i -lt 600 ]; do i=$((i+1)); sleep 0.05; done; [ -S %s ]\n", InteropSock, InteropSock)
	b.WriteString("printf '[automount]\\nenabled = true\\nroot = /mnt/\\noptions = \"metadata\"\\n[interop]\\nenabled = true\\nappendWindowsPath = true\\n' > /etc/wsl.conf\n")
	fmt.Fprintf(&b, "hostname %s\nprintf '127.0.0.1\\tlocalhost\\n127.0.1.1\\t%s\\n::1\\tlocalhost ip6-localhost ip6-loopback\\n' > /etc/hosts\n", Hostname, Hostname)
	if homeOnDrive {
		fmt.Fprintf(&b, "mkdir -p %s/Users/home && mount --bind %s/Users/home /home\n", DriveDir, DriveDir)
	}
	return []byte(b.String())
}
