#!/bin/bash
# Times `earlyinit net-convert` against `cloud-init devel net-convert` on a
# two-NIC network_data.json, for each renderer: runs alternate (earlyinit,
# cloud-init, earlyinit...) on the same input, and each figure is the
# median of RUNS, with the ratio and the host's load average before and
# after (bench/startup -startup=false). Prints figures; asserts nothing.
#
#   bench/net-convert.sh [path/to/earlyinit] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
EARLYINIT=${1:-build/earlyinit}
RUNS=${2:-10}

[ -x "$EARLYINIT" ] || { echo "no $EARLYINIT: run make build" >&2; exit 1; }
command -v cloud-init >/dev/null || { echo "no cloud-init: run make deps" >&2; exit 1; }
exec go run ./bench/startup -startup=false -earlyinit "$EARLYINIT" -net -net-runs "$RUNS" \
	-renderers networkd,netplan,sysconfig,eni,network-manager
