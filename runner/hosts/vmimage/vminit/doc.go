// Package vminit is the guest's side of a vm boot: the init stages every run's initramfs carries
// (Init loads the kernel's modules and mounts the overlay root; Stage2 starts the job agent,
// vmagent, on the second serial port), where the run's sandcheck lands in the guest, and the
// optional fw_cfg items a boot is given (9p shares, a setup script, a CPU budget) with the QEMU
// arguments and item contents the host makes of them. It builds on Linux only.
package vminit
