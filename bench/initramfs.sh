#!/bin/bash
# Prints the initramfs figures per compression (zstd-go: zstd by Go's
# encoder, as on a root without the zstd tool): size, and the time the
# kernel takes to unpack it (from a QEMU boot's own timestamps between
# "Trying to unpack rootfs" and "Freeing initrd memory", initramfs_async=0,
# rdinit pointing nowhere so the boot ends right after), plus the same for
# a host-only build (a virtio VM with an XFS root). Figures, not
# assertions; under TCG the unpack times are several times a real CPU's.
set -euo pipefail
cd "$(dirname "$0")/.."
kver=${KVER:-$(ls /boot/vmlinuz-* | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# KVM only when it works: a kernel with no root panics within seconds under
# KVM (internal/vm's Accel makes the same check); /dev/kvm may be there and
# still refuse QEMU.
accel=tcg
if [ -e /dev/kvm ] && timeout 8 qemu-system-x86_64 -accel kvm -cpu host -m 256 -display none -monitor none \
	-serial stdio -no-reboot -kernel "/boot/vmlinuz-$kver" -append "console=ttyS0 panic=-1 root=/dev/nonexistent" 2>&1 |
	grep -q "Kernel panic"; then
	accel=kvm
fi
# The package's initramfs build, compiled once (make build) and packed by
# every build below.
make -s build >/dev/null
bin=build/earlyinit-initrd
go build -o "$tmp/mkinitramfs" ./cmd/mkinitramfs
# zstd-go: zstd as a root without the zstd tool gets it (earlyinit
# initramfs there): Go's encoder, klauspost/compress at its best level. A
# PATH with the other tools and no zstd.
mkdir "$tmp/nozstd"
for t in xz gzip lz4; do
	if p=$(command -v "$t"); then ln -s "$p" "$tmp/nozstd/$t"; fi
done
mkinitramfs() {
	if [ "$1" = zstd-go ]; then
		shift
		PATH="$tmp/nozstd" "$tmp/mkinitramfs" -compress zstd "$@"
	else
		"$tmp/mkinitramfs" -compress "$@"
	fi
}
unpack_ms() {
	local out
	out=$(timeout 120 qemu-system-x86_64 -machine q35,accel=$accel -m 512 -nographic -no-reboot \
		-kernel "/boot/vmlinuz-$kver" -initrd "$1" \
		-append "console=ttyS0 printk.time=1 initramfs_async=0 rdinit=/none panic=-1" 2>&1 || true)
	local s e
	s=$(sed -n 's/^\[ *\([0-9.]*\)\] Trying to unpack rootfs.*/\1/p' <<<"$out")
	e=$(sed -n 's/^\[ *\([0-9.]*\)\] Freeing initrd memory.*/\1/p' <<<"$out")
	[ -n "$s" ] && [ -n "$e" ] && awk -v s="$s" -v e="$e" 'BEGIN { printf "%.0f", (e - s) * 1000 }' || echo "?"
}
# A virtio VM with an XFS root, as lsmod shows it.
printf '%s\n' virtio_pci virtio_pci_modern_dev virtio_pci_legacy_dev virtio_blk virtio_net net_failover failover virtio_console virtio_rng xfs libcrc32c crc32c_generic > "$tmp/loaded"
printf '%-34s %10s %12s %10s\n' build compression size "unpack (QEMU $accel)"
for c in zstd zstd-go xz gzip lz4; do
	mkinitramfs "$c" -binary "$bin" -kver "$kver" -o "$tmp/generic.$c" >/dev/null 2>&1
	printf '%-34s %10s %9.2f MB %7s ms\n' "generic (xfs, btrfs, ext4)" "$c" "$(stat -c %s "$tmp/generic.$c" | awk '{print $1/1e6}')" "$(unpack_ms "$tmp/generic.$c")"
done
for c in zstd xz; do
	mkinitramfs "$c" -binary "$bin" -kver "$kver" -hostonly -loaded "$tmp/loaded" -fstype xfs -o "$tmp/host.$c" >/dev/null 2>&1
	printf '%-34s %10s %9.2f MB %7s ms\n' "host-only (virtio, xfs)" "$c" "$(stat -c %s "$tmp/host.$c" | awk '{print $1/1e6}')" "$(unpack_ms "$tmp/host.$c")"
done
if [ -f "/boot/initrd.img-$kver" ]; then
	printf '%-34s %10s %9.2f MB %7s ms\n' "Debian initramfs-tools" "-" "$(stat -c %s "/boot/initrd.img-$kver" | awk '{print $1/1e6}')" "$(unpack_ms "/boot/initrd.img-$kver")"
fi
