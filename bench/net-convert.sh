#!/bin/bash
# Times `earlyinit net-convert` against `cloud-init devel net-convert` on a
# two-NIC network_data.json, for each renderer. Prints figures; asserts
# nothing. Uses hyperfine when installed, else a loop timed with date +%s%N.
#
#   bench/net-convert.sh [path/to/earlyinit] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
EARLYINIT=${1:-build/earlyinit}
RUNS=${2:-10}
INPUT=pkg/netcfg/render/testdata/corpus/nd-two-nics/network_data.json
MACS=(-m eth0,fa:16:3e:00:00:0a -m eth1,fa:16:3e:00:00:0b)

[ -x "$EARLYINIT" ] || { echo "no $EARLYINIT: run make build" >&2; exit 1; }
command -v cloud-init >/dev/null || { echo "no cloud-init: run make deps" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

ours()   { "$EARLYINIT" net-convert -p "$INPUT" -k network_data.json -d "$OUT/ours-$1" -D "$2" -O "$1" "${MACS[@]}"; }
theirs() { cloud-init devel net-convert -p "$INPUT" -k network_data.json -d "$OUT/ci-$1" -D "$2" -O "$1" "${MACS[@]}" 2>/dev/null; }

# mean_ms CMD...: mean wall time of RUNS runs, in milliseconds.
mean_ms() {
	local start end
	start=$(date +%s%N)
	for ((i = 0; i < RUNS; i++)); do "$@" >/dev/null; done
	end=$(date +%s%N)
	echo $(((end - start) / RUNS / 1000000))
}

for r in networkd netplan sysconfig eni network-manager; do
	d=debian
	[ "$r" = sysconfig ] && d=rhel # cloud-init has no sysconfig templates for debian
	if command -v hyperfine >/dev/null; then
		hyperfine -N --warmup 1 --runs "$RUNS" \
			-n "earlyinit $r" "$EARLYINIT net-convert -p $INPUT -k network_data.json -d $OUT/ours-$r -D $d -O $r ${MACS[*]}" \
			-n "cloud-init $r" "cloud-init devel net-convert -p $INPUT -k network_data.json -d $OUT/ci-$r -D $d -O $r ${MACS[*]}"
	else
		o=$(mean_ms ours "$r" "$d")
		c=$(mean_ms theirs "$r" "$d")
		printf '%-16s earlyinit %6d ms   cloud-init %6d ms   (%d runs each)\n' "$r" "$o" "$c" "$RUNS"
	fi
done
