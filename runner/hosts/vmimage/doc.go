// Package vmimage builds what a vm host boots: a Debian kernel (fetched as a package through a
// private APT configuration, unpacked, never installed), a small busybox initramfs holding the few
// modules that kernel needs, and a read-only ext4 root filesystem made with debootstrap that holds
// the sandbox and its tools (bubblewrap, socat, curl, ripgrep, iproute2, node, srt). Everything
// is cached under /var/cache/sandcheck/vm and built once; concurrent builders wait on a lock.
//
// The guest's protocol (see Init and Stage2): the job is a shell script passed with
// `-fw_cfg name=opt/sandcheck/job`, its nonce with `opt/sandcheck/nonce`; the guest runs it
// after switching to the overlay root, then writes to its second serial port
//
//	SC-BEGIN nonce / SC-STDOUT nonce / base64 / SC-STDERR nonce / base64 / SC-EXIT nonce STATUS
//
// and powers off. ParseResult reads that back.
// It builds on Linux only (QEMU, debootstrap, dpkg-deb).
package vmimage
