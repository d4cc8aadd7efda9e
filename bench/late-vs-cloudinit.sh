#!/bin/bash
# Wall time to power-off of one Debian bookworm root applying one NoCloud
# user-data (a sudo user with an ssh key, write_files plain + b64, bootcmd,
# runcmd, network v2 set-name + static address, power_state poweroff) two
# ways, under the same QEMU and kernel:
#   A) Debian's cloud-init 22.4.2, booted with Debian's initramfs-tools image;
#   B) earlyinit: build/initramfs.img, cloud-init.disabled in the root.
# Also the kernel time the real init started, the guest uptime when runcmd
# ran, whether the user-data was applied (read from the disk afterwards),
# and `earlyinit analyze` for B. Figures, not assertions. Under TCG (no
# usable KVM) every figure is many times what it is on KVM.
#
#   bench/late-vs-cloudinit.sh [runs] [-j 1|2] [other flags of bench/latevscloudinit]
#
# Needs root (debootstrap, chroot) and what `make deps` installs. The root
# with cloud-init is cached next to the e2e's in qemu-tests/testdata/cache;
# images and consoles are left in build/bench-late.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=2
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
	runs=$1
	shift
fi
kver=${KVER:-$(ls /boot/vmlinuz-* | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)}
for tool in qemu-system-x86_64 debootstrap mkfs.ext4 debugfs xorriso; do
	command -v "$tool" >/dev/null || { echo "$tool missing: run make deps" >&2; exit 1; }
done
[[ -x build/earlyinit ]] || make build
[[ -f build/initramfs.img ]] || make initramfs KVER="$kver"
# analyze reads B's boot record with this tree's earlyinit (build/earlyinit
# may predate the verb); the initramfs booted is build's, as it is.
mkdir -p build/bench-late
CGO_ENABLED=0 go build -o build/bench-late/earlyinit ./cmd/earlyinit
exec go run ./bench/latevscloudinit -kver "$kver" -runs "$runs" -earlyinit build/bench-late/earlyinit "$@"
