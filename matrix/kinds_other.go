//go:build !windows

package matrix

// unavailableKinds maps a host kind this platform cannot drive to the reason; every kind works here.
var unavailableKinds map[string]string
