#!/bin/bash
# Prints earlyinit's size figures: the stripped static binary and the
# compressed initramfs with modules, next to Debian's initramfs-tools image
# for the same kernel when one is installed. Figures, not assertions.
set -euo pipefail
cd "$(dirname "$0")/.."
kver=${KVER:-$(ls /boot/vmlinuz-* | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)}
mb() { awk -v b="$1" 'BEGIN { printf "%.2f MB", b/1e6 }'; }
bin=$(stat -c %s build/earlyinit)
img=$(stat -c %s build/initramfs.img)
# zstd(1) also reads gzip and xz: whichever -compress made the image.
raw=$(zstd -dcq build/initramfs.img | wc -c)
echo "earlyinit binary (stripped, static): $(mb "$bin")   target <= 5 MB"
echo "initramfs ($kver):                  $(mb "$img") ($(mb "$raw") uncompressed)   target <= 6 MB with xfs and btrfs"
mods=$(zstd -dcq build/initramfs.img | cpio -t 2>/dev/null | grep -c '\.ko' || true)
echo "modules in the initramfs:            $mods"
if [ -f "/boot/initrd.img-$kver" ]; then
	echo "Debian initramfs-tools image:        $(mb "$(stat -c %s "/boot/initrd.img-$kver")")"
fi
# Reproducibility: a second build must be byte-identical.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go run ./cmd/mkinitramfs -kver "$kver" -o "$tmp/again.img" >/dev/null 2>&1
if cmp -s build/initramfs.img "$tmp/again.img"; then
	echo "reproducible:                        yes ($(sha256sum < build/initramfs.img | cut -c1-16))"
else
	echo "reproducible:                        NO (two builds differ)"
fi
