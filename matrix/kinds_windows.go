package matrix

// wslHint is where a Windows user is sent instead of a Linux-only host kind.
const wslHint = "on Windows use a wsl host (matrix/examples/wsl.yaml)"

// unavailableKinds maps a host kind this platform cannot drive to the reason. Refusing them
// while the matrix is read makes `run` fail at once rather than log every trial as a harness error.
var unavailableKinds = map[string]string{
	KindLocal:     "kind local runs trials on this machine, and they need Linux (network namespaces, the sandbox); " + wslHint,
	KindContainer: "kind container needs a Linux runner (Docker, debootstrap images); " + wslHint,
	KindVM:        "kind vm needs a Linux runner (QEMU, Debian kernels); " + wslHint,
}
