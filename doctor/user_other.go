//go:build !linux

package doctor

// UserOf: the sandbox's user lives inside the Linux (WSL) system that runs the trials, not here.
func UserOf(string, bool) *User { return nil }
