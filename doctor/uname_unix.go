//go:build unix

package doctor

import "golang.org/x/sys/unix"

// uname returns the running kernel's release and machine (uname -r, uname -m).
func uname() (release, machine string, err error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", "", err
	}
	return unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:]), nil
}
