// Package vmimage builds what a vm host boots: a Debian kernel (fetched as a package through a
// private APT configuration, unpacked, never installed), a small busybox initramfs holding the few
// modules that kernel needs (assembled by vmimage/initramfs), and a read-only ext4 root
// filesystem made with debootstrap that holds the sandbox and its tools (bubblewrap, socat, curl,
// ripgrep, iproute2, node, srt). Everything is cached under /var/cache/sandcheck/vm and built
// once; concurrent builders wait on a lock.
//
// What the guest does with them once booted (its init stages, the fw_cfg items a boot takes) is
// vmimage/vminit's; the job protocol on its second serial port is vmagent's.
// It builds on Linux only (QEMU, debootstrap, dpkg-deb).
package vmimage
