package orchestrate

// Every host kind is linked in on every platform; a kind this platform cannot drive says why
// when a matrix names it (local, container, vm and wsl2-like need a Linux runner).
import (
	_ "github.com/sandcheck/sandcheck/runner/hosts/container"
	_ "github.com/sandcheck/sandcheck/runner/hosts/local"
	_ "github.com/sandcheck/sandcheck/runner/hosts/ssh"
	_ "github.com/sandcheck/sandcheck/runner/hosts/vm"
	_ "github.com/sandcheck/sandcheck/runner/hosts/wsl"
	_ "github.com/sandcheck/sandcheck/runner/hosts/wsl2like"
)
