//go:build linux

package doctor

import (
	"fmt"
	"syscall"
)

// fsMagic names the statfs(2) types a workspace is likely to live on. 9p matters most: it is
// how WSL 2 mounts a Windows drive, and srt takes another branch for mount points there.
var fsMagic = map[int64]string{
	0x01021997: "9p",
	0xef53:     "ext4",
	0x01021994: "tmpfs",
	0x794c7630: "overlay",
	0x9123683e: "btrfs",
	0x58465342: "xfs",
	0x65735546: "fuse",
	0x6969:     "nfs",
	0x2fc12fc1: "zfs",
}

// fsType is the statfs(2) type of dir: a name from fsMagic, else the number in hex.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if name, ok := fsMagic[int64(st.Type)]; ok {
		return name
	}
	return fmt.Sprintf("0x%x", st.Type)
}
