#!/bin/sh
# Installs, with apt-get, the Debian packages earlyinit's build, tests and
# demo use, only those missing. Go itself is expected on PATH.
set -eu
# netplan.io, ifupdown, gir1.2-nm-1.0 and python3-gi are the programs the
# network renderers' output is checked with (internal/netcfg/render's
# consumer_test.go; systemd-networkd comes with systemd): installing them
# starts no service and changes no network.
PKGS="qemu-system-x86 linux-image-amd64 initramfs-tools e2fsprogs xfsprogs btrfs-progs gdisk zstd xz-utils lz4 busybox-static xorriso dosfstools mtools fdisk util-linux cloud-init dnsmasq-base iproute2 cpio debootstrap rpm lintian lvm2 udftools gnupg openssl genisoimage openssh-client openssh-server netplan.io ifupdown gir1.2-nm-1.0 python3-gi systemd cloud-image-utils dnf"
# `deps.sh demo` installs only what make demo uses: QEMU, a kernel and its
# modules (for the initramfs), busybox for the sample root, e2fsprogs to make
# and read its disk, zstd to compress the initramfs.
if [ "${1:-}" = demo ]; then
	PKGS="qemu-system-x86 linux-image-amd64 busybox-static e2fsprogs zstd"
fi
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# cloud-init is only an oracle for differential tests: keep its
	# services from ever running on this machine.
	apt-get install -y -qq --no-install-recommends $missing
	if [ -d /etc/cloud ] && [ ! -e /etc/cloud/cloud-init.disabled ]; then
		touch /etc/cloud/cloud-init.disabled
	fi
fi
command -v go >/dev/null || { echo "deps: go is not on PATH (Go 1.26 is required)" >&2; exit 1; }
ls /boot/vmlinuz-* >/dev/null 2>&1 || { echo "deps: no /boot/vmlinuz-* after installing linux-image-amd64" >&2; exit 1; }
