//go:build linux

package vmimage

import "github.com/sandcheck/sandcheck/runner/hosts/vmagent"

// GuestBinary is where the run's sandcheck is inside the guest.
const GuestBinary = "/usr/local/bin/sandcheck"

// Init is the initramfs's /init (busybox sh): load the kernel's modules, mount the read-only
// root disk under a tmpfs overlay, take the boot's nonce from fw_cfg and the run's binary from
// the appended archive (/sandcheck-bin), then switch to the overlay root and run Stage2.
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
if [ -d /sandcheck-bin ]; then $B cp -a /sandcheck-bin/. /newroot/usr/local/bin/; fi
$B cp $B /sc/stage2 /newroot/run/sc/
$B mount --move /dev /newroot/dev
$B mount --move /proc /newroot/proc
$B mount --move /sys /newroot/sys
exec $B switch_root /newroot /run/sc/busybox sh /run/sc/stage2
`

// Stage2 runs in the overlay root: the job agent (vmagent) on the job port (ttyS1) until the
// host says quit, then power off. The agent runs every job in a mount namespace of its own.
const Stage2 = `B=/run/sc/busybox
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
$B mount -t tmpfs -o mode=1777 tmpfs /tmp
$B mkdir -p /dev/shm /dev/pts
$B mount -t tmpfs -o mode=1777 tmpfs /dev/shm
$B mount -t devpts devpts /dev/pts
$B hostname sandcheck-vm
$B ip link set lo up
cd /
` + GuestBinary + ` ` + vmagent.Arg + ` /dev/ttyS1 /run/sc/nonce </dev/null >/dev/ttyS0 2>&1
rc=$?
[ $rc -eq 0 ] || echo "SC-INIT-ERROR the job agent exited $rc (see the console)" > /dev/ttyS1
$B sync
$B poweroff -f
`
