#!/bin/bash
# Boots the demo VM (config drive, two NICs) N times under QEMU and prints
# earlyinit's own time before switch_root, next to module loading and
# device waits, as the boot record splits them. Figures, not assertions.
# Under TCG (no usable KVM) every figure is many times what it is on KVM.
#
#   bench/boot.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
kver=${KVER:-$(ls /boot/vmlinuz-* | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)}
for ((i = 1; i <= runs; i++)); do
	go run ./qemu-tests/demo -kernel "/boot/vmlinuz-$kver" -initrd build/initramfs.img 2>&1 |
		grep "^earlyinit: " | grep -o "time: total .*" | sed "s/^/run $i: /"
done
