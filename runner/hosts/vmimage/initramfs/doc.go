// Package initramfs assembles a vm guest's initramfs: a newc cpio writer, the kernel modules a
// boot loads (found with their dependencies in an unpacked kernel, and decompressed), a kernel's
// archive of busybox and those modules, and each run's archive appended to it, holding the init
// stages (vminit) and the run's sandcheck binary. It builds on Linux only.
package initramfs
