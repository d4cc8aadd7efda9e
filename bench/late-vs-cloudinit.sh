#!/bin/bash
# One Debian bookworm root applying one NoCloud user-data (a sudo user with
# an ssh key, write_files plain + b64, bootcmd, runcmd, network v2 set-name
# + static address) two ways, under the same QEMU, kernel and VM:
#   A) Debian's cloud-init 22.4.2, booted with Debian's initramfs-tools image;
#   B) earlyinit: build/initramfs.img, cloud-init.disabled in the root and
#      this tree's earlyinit as /usr/bin/earlyinit, as the package installs it
#      (-initrd LABEL=PATH again: C, D... other earlyinit images).
# -until poweroff (default): wall time to power-off (power_state in the
#   user-data), the kernel time the real init started, the guest uptime
#   when runcmd ran, and `earlyinit analyze` for B.
# -until provisioned: the guest uptime (from the kernel's start) when user,
#   key and sshd on :22 all hold, checked inside the guest; the tools' units
#   as systemd timed them; each tool's own account (cloud-init analyze
#   show/blame run in the guest, earlyinit analyze) and the ratio; B's
#   timeline in build/bench-late/earlyinit-plot.svg. Also "bare" (-bare=false
#   leaves it out): Debian's image with the user, key and host keys baked
#   in and no datasource tool at all, booted in turn with the others; each
#   tool's overhead over it and the ratio of the two overheads, from the
#   medians (3 runs by default), with the host's load average before and
#   after; the last line says them all:
#   provisioned: bare S s, earlyinit S s, cloud-init S s; overhead earlyinit S s, cloud-init S s
# Both check on the disk afterwards that the user-data was applied and
# the host keys made anew. A run during which another QEMU ran on the host,
# or other processes took over a tenth of a CPU, is shown but left out of
# the means; -idle 40m -j 1 waits (up to 40 min)
# before each boot until none runs. Figures, not assertions. Under TCG (no
# usable KVM) every figure is many times what it is on KVM.
#
#   bench/late-vs-cloudinit.sh [runs] [-j 1|2] [-until poweroff|provisioned]
#       [-smp N] [-initrd [LABEL=]PATH]... [-cloudinit=false] [-bare=false]
#       [-idle DURATION]
# runs: 2, or 3 with -until provisioned.
#
# Needs root (debootstrap, chroot) and what `make deps` installs. The root
# with cloud-init is cached with the tests' roots (vm.CacheDir: ~/.cache/earlyinit);
# images and consoles are left in build/bench-late.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=()
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
	runs=(-runs "$1")
	shift
fi
kver=${KVER:-$(ls /boot/vmlinuz-* | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)}
for tool in qemu-system-x86_64 debootstrap mkfs.ext4 debugfs xorriso; do
	command -v "$tool" >/dev/null || { echo "$tool missing: run make deps" >&2; exit 1; }
done
# The default earlyinit image is build's, as it is; -initrd names others.
if [[ " $* " != *" -initrd "* && " $* " != *" -initrd="* ]]; then
	[[ -f build/initramfs.img ]] || make initramfs KVER="$kver"
fi
# This tree's earlyinit, built as make build builds it: B's /usr/bin/earlyinit,
# and what reads the boot records (build/earlyinit may predate analyze).
mkdir -p build/bench-late
CGO_ENABLED=0 go build -trimpath -gcflags=all=-l -ldflags="-s -w -buildid=" -o build/bench-late/earlyinit ./cmd/earlyinit
exec go run ./bench/latevscloudinit -kver "$kver" "${runs[@]}" -earlyinit build/bench-late/earlyinit "$@"
