package progress

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal reports whether f is a console that understands the bar's escape sequences (\x1b[K):
// VT processing is switched on where it is off; a console refusing it gets plain lines.
func isTerminal(f *os.File) bool {
	h := windows.Handle(f.Fd())
	var mode uint32
	if windows.GetConsoleMode(h, &mode) != nil {
		return false
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}
