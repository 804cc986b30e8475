#!/usr/bin/env bash
# Installs what the vm hosts need on a Debian machine (idempotent, silent the second time):
# QEMU (TCG is enough: no KVM needed), debootstrap and e2fsprogs for the root filesystem,
# busybox-static for the initramfs, xz/zstd to unpack Debian kernels and modules, npm for node
# and srt inside the guest. Kernels are fetched later, by `sandcheck run`, into
# /var/cache/sandcheck/vm (never installed on this machine).
set -euo pipefail
# command -> Debian package
declare -A NEED=(
  [qemu-system-x86_64]=qemu-system-x86 [debootstrap]=debootstrap [busybox]=busybox-static
  [mkfs.ext4]=e2fsprogs [xz]=xz-utils [zstd]=zstd [dpkg-deb]=dpkg [npm]=npm
)
missing=()
for c in "${!NEED[@]}"; do
  command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || [ -x "/sbin/$c" ] || missing+=("${NEED[$c]}")
done
# busybox must be the static build: the initramfs has no libc.
if command -v busybox >/dev/null 2>&1 && ! dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed"; then
  missing+=(busybox-static)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "vm-deps: apt-get install ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
