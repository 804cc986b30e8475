package doctor

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// uname returns the Windows version as the kernel release (e.g. "Windows 10.0.26100"); the
// machine is left to runtime.GOARCH.
func uname() (release, machine string, err error) {
	v := windows.RtlGetVersion()
	return fmt.Sprintf("Windows %d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber), "", nil
}
