#!/usr/bin/python3
"""Run `cloud-init devel net-convert` for many argument lists in one process.

Each line of stdin is a JSON list: the arguments that would follow
`cloud-init devel net-convert`. They go through cloud-init's own argument
parser and handle_args, so the result is what the command writes; one
process instead of one per conversion keeps the differential test fast
(the command spends about two seconds starting up).
"""
import copy
import json
import sys

from cloudinit import distros
from cloudinit.cmd.devel import net_convert

# handle_args edits the distro classes' renderer_configs in place (it trims
# the netplan path's leading slash): restore them before every conversion.
pristine = {}
for name in ("debian", "rhel"):
    cls = distros.fetch(name)
    pristine[cls] = copy.deepcopy(cls.renderer_configs)

for line in sys.stdin:
    argv = json.loads(line)
    for cls, cfg in pristine.items():
        cls.renderer_configs = copy.deepcopy(cfg)
    args = net_convert.get_parser().parse_args(argv)
    try:
        net_convert.handle_args("net-convert", args)
    except Exception as e:  # report, and go on with the next conversion
        print("FAIL %s: %r" % (" ".join(argv), e), file=sys.stderr)
    finally:
        args.network_data.close()
