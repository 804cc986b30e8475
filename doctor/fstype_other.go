//go:build !linux

package doctor

func fsType(string) string { return "unknown (statfs is read on Linux only)" }
