#!/bin/bash
# Issue 18's figures, side by side in one run (`make bench`):
#  - start-up: a static hello-world, `earlyinit version` of this tree and of
#    BEFORE (median of STARTUP_RUNS runs each, alternating);
#  - net-convert of a two-NIC network_data.json: this tree's and BEFORE's
#    against `cloud-init devel net-convert`, and the ratio (NET_RUNS runs);
#  - the demo VM's boot, per step of earlyinit's boot record (`earlyinit
#    analyze`), with BEFORE's initramfs and this tree's (BOOT_RUNS boots
#    each, alternating; consoles in build/bench).
# BEFORE (default 45dbdbf, the tree before issue 18) is built in a git
# worktree under build/, removed afterwards. This tree's binary and image
# are build/earlyinit and build/initramfs.img (make build initramfs).
# Figures, not assertions. Under TCG (no usable KVM) the boot figures are
# many times what they are on KVM.
#
#   bench/before-after.sh [BEFORE]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
before=${1:-45dbdbf}
startup_runs=${STARTUP_RUNS:-200}
net_runs=${NET_RUNS:-10}
boot_runs=${BOOT_RUNS:-3}
kver=${KVER:-$(ls /boot/vmlinuz-* | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)}
for tool in git go qemu-system-x86_64 cloud-init mkfs.ext4 xorriso zstd; do
	command -v "$tool" >/dev/null || { echo "$tool missing: run make deps" >&2; exit 1; }
done
[[ -x build/earlyinit && -f build/initramfs.img ]] || { echo "no build/earlyinit or build/initramfs.img: run make build initramfs" >&2; exit 1; }
git rev-parse -q --verify "$before^{commit}" >/dev/null || { echo "$before: not a commit of this repository" >&2; exit 1; }

wt=build/bench-before
out=build/bench
mkdir -p "$out"
remove_worktree() {
	if git worktree list --porcelain | grep -qxF "worktree $top/$wt"; then
		git worktree remove --force "$wt"
	fi
	rm -rf "$wt"
	git worktree prune
}
trap remove_worktree EXIT
remove_worktree # one an interrupted run left
git worktree add -q --detach "$wt" "$before"

echo "== building $before (before) in $wt"
(
	cd "$wt"
	# The version variable's package: internal/boot, or pkg/boot before
	# the packages moved under internal/.
	bootpkg=internal/boot
	[[ -d internal/boot ]] || bootpkg=pkg/boot
	CGO_ENABLED=0 go build -trimpath -gcflags=all=-l \
		-ldflags="-s -w -buildid= -X github.com/earlyinit/earlyinit/$bootpkg.Version=before-$before" \
		-o "$top/$out/earlyinit-before" ./cmd/earlyinit
	CGO_ENABLED=0 go run ./cmd/mkinitramfs -kver "$kver" -o "$top/$out/initramfs-before.img"
)
remove_worktree
trap - EXIT

echo
echo "== start-up and net-convert: this tree against $before"
go run ./bench/startup -earlyinit build/earlyinit -before "$out/earlyinit-before" \
	-runs "$startup_runs" -net -net-runs "$net_runs"

echo
echo "== the demo VM's boot per step: $before (before) and this tree (after)"
go run ./bench/bootsteps -kernel "/boot/vmlinuz-$kver" -runs "$boot_runs" -earlyinit build/earlyinit -consoles "$out" \
	-initrd "before=$out/initramfs-before.img" -initrd "after=build/initramfs.img"
