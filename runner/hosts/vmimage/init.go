//go:build linux

package vmimage

// Init is the initramfs's /init (busybox sh): load the kernel's modules, mount the read-only
// root disk under a tmpfs overlay, take the job and nonce from fw_cfg and the run's binary from
// the appended archive (/sandcheck-bin), then switch to the overlay root and run Stage2.
// Any failure is reported on the result port as SC-INIT-ERROR and the VM powers off.
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
$B cp $F/job/raw /newroot/run/sc/job.sh || fail "no job in fw_cfg opt/sandcheck/job"
$B cp $F/nonce/raw /newroot/run/sc/nonce || fail "no nonce in fw_cfg opt/sandcheck/nonce"
if [ -d /sandcheck-bin ]; then $B cp -a /sandcheck-bin/. /newroot/usr/local/bin/; fi
$B cp $B /sc/stage2 /newroot/run/sc/
$B mount --move /dev /newroot/dev
$B mount --move /proc /newroot/proc
$B mount --move /sys /newroot/sys
exec $B switch_root /newroot /run/sc/busybox sh /run/sc/stage2
`

// Stage2 runs in the overlay root: the job, with its output framed on the result port
// (ttyS1), then power off.
const Stage2 = `B=/run/sc/busybox
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
$B mount -t tmpfs -o mode=1777 tmpfs /tmp
$B mkdir -p /dev/shm /dev/pts
$B mount -t tmpfs -o mode=1777 tmpfs /dev/shm
$B mount -t devpts devpts /dev/pts
$B hostname sandcheck-vm
$B ip link set lo up
N=$($B cat /run/sc/nonce)
cd /root
exec 3>/dev/ttyS1
echo "SC-BEGIN $N" >&3
/bin/sh /run/sc/job.sh >/run/sc/stdout 2>/run/sc/stderr </dev/null
rc=$?
{
	echo "SC-STDOUT $N"; $B base64 /run/sc/stdout
	echo "SC-STDERR $N"; $B base64 /run/sc/stderr
	echo "SC-EXIT $N $rc"
} >&3
$B sync
$B poweroff -f
`
