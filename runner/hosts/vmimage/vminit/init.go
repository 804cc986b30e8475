//go:build linux

package vminit

import "github.com/sandcheck/sandcheck/runner/hosts/vmagent"

// GuestBinary is where the run's sandcheck is inside the guest.
const GuestBinary = "/usr/local/bin/sandcheck"

// Init is the initramfs's /init (busybox sh): load the kernel's modules, mount the read-only
// root disk under a tmpfs overlay, take the boot's nonce (and the optional items of the boot's
// shape: FwMounts, FwSetup, FwCPUMax) from fw_cfg and the run's binary from the appended archive
// (/sandcheck-bin), then switch to the overlay root and run Stage2.
// Any failure is reported on the job port (ttyS1) as SC-INIT-ERROR and the VM powers off.
const Init = `#!/bin/busybox sh
B=/bin/busybox
$B --install -s /bin
export PATH=/bin
$B mount -t proc proc /proc
$B mount -t sysfs sysfs /sys
$B mount -t devtmpfs devtmpfs /dev
fail() {
	echo "SC-INIT-ERROR $*" > /dev/ttyS1
	echo "sandcheck init: $*" > /dev/ttyS0
	$B poweroff -f
}
for m in $($B cat /sc/modules/order); do
	$B insmod /sc/modules/$m.ko || echo "sandcheck init: insmod $m failed" > /dev/ttyS0
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 200 ]; do $B sleep 0.05; i=$((i+1)); done
$B mount -t ext4 -o ro /dev/vda /ro || fail "cannot mount the root disk /dev/vda"
$B mount -t tmpfs -o mode=0755 tmpfs /rw
$B mkdir -p /rw/upper /rw/work
$B mount -t overlay overlay -o lowerdir=/ro,upperdir=/rw/upper,workdir=/rw/work /newroot || fail "cannot mount the overlay root"
$B mkdir -p /newroot/run/sc
F=/sys/firmware/qemu_fw_cfg/by_name/opt/sandcheck
$B cp $F/nonce/raw /newroot/run/sc/nonce || fail "no nonce in fw_cfg opt/sandcheck/nonce"
for o in ` + FwMounts + ` ` + FwSetup + ` ` + FwCPUMax + `; do
	if [ -e $F/$o/raw ]; then $B cp $F/$o/raw /newroot/run/sc/$o || fail "cannot read fw_cfg opt/sandcheck/$o"; fi
done
if [ -d /sandcheck-bin ]; then $B cp -a /sandcheck-bin/. /newroot/usr/local/bin/; fi
$B cp $B /sc/stage2 /newroot/run/sc/
$B mount --move /dev /newroot/dev
$B mount --move /proc /newroot/proc
$B mount --move /sys /newroot/sys
exec $B switch_root /newroot /run/sc/busybox sh /run/sc/stage2
`

// Stage2 runs in the overlay root: the host's 9p shares mounted, the boot's setup script run
// and its CPU budget set (each when the boot has one), then the job agent (vmagent) on the job
// port (ttyS1) until the host says quit, then power off. The agent runs every job in a mount
// namespace of its own; the budget holds the agent and so every job and what it starts.
const Stage2 = `B=/run/sc/busybox
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
fail() {
	echo "SC-INIT-ERROR $*" > /dev/ttyS1
	echo "sandcheck stage2: $*" > /dev/ttyS0
	$B poweroff -f
}
$B mount -t tmpfs -o mode=1777 tmpfs /tmp
$B mkdir -p /dev/shm /dev/pts
$B mount -t tmpfs -o mode=1777 tmpfs /dev/shm
$B mount -t devpts devpts /dev/pts
$B hostname sandcheck-vm
$B ip link set lo up
if [ -f /run/sc/` + FwMounts + ` ]; then
	while read -r tag dir opts; do
		[ -n "$tag" ] || continue
		$B mkdir -p "$dir" && $B mount -t 9p -o "trans=virtio,$opts" "$tag" "$dir" || fail "cannot mount the 9p share $tag at $dir ($opts)"
	done < /run/sc/` + FwMounts + `
fi
if [ -f /run/sc/` + FwSetup + ` ]; then
	$B sh /run/sc/` + FwSetup + ` >/dev/ttyS0 2>&1 || fail "the boot's setup script failed (see the console)"
fi
if [ -f /run/sc/` + FwCPUMax + ` ]; then
	$B mkdir -p /sys/fs/cgroup && $B mount -t cgroup2 cgroup2 /sys/fs/cgroup &&
		echo +cpu > /sys/fs/cgroup/cgroup.subtree_control && $B mkdir /sys/fs/cgroup/sandcheck &&
		$B cat /run/sc/` + FwCPUMax + ` > /sys/fs/cgroup/sandcheck/cpu.max &&
		echo $$ > /sys/fs/cgroup/sandcheck/cgroup.procs || fail "cannot set the CPU budget $($B cat /run/sc/` + FwCPUMax + `)"
fi
cd /
` + GuestBinary + ` ` + vmagent.Arg + ` /dev/ttyS1 /run/sc/nonce </dev/null >/dev/ttyS0 2>&1
rc=$?
[ $rc -eq 0 ] || echo "SC-INIT-ERROR the job agent exited $rc (see the console)" > /dev/ttyS1
$B sync
$B poweroff -f
`
