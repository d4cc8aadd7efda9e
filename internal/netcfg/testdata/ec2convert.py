# Runs cloud-init's convert_ec2_metadata_network_config on each case read
# from stdin (a JSON list of {"network": ..., "macs": {mac: name}}) and
# writes the v2 configurations as a JSON list. Only imports cloud-init.
import json
import sys

from cloudinit.sources.DataSourceEc2 import convert_ec2_metadata_network_config

out = []
for case in json.load(sys.stdin):
    out.append(
        convert_ec2_metadata_network_config(
            case["network"], macs_to_nics=case["macs"], full_network_config=True
        )
    )
json.dump(out, sys.stdout)
