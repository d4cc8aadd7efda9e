#!/usr/bin/python3
# Regenerates query-cloudinit.json: what cloud-init's own query code
# (cloudinit.cmd.query, Debian's cloud-init 22.4) answers for each key over
# query-instance-data.json. Run from this directory: python3 gen-query.py
import json

from cloudinit import util
from cloudinit.cmd.query import _find_instance_data_leaf_by_varname_path
from cloudinit.handlers.jinja_template import convert_jinja_instance_data

KEYS = [
    "", "v1", "v1.instance_id", "v1.instance-id", "instance_id", "instance-id",
    "local_hostname", "v1.public_ssh_keys", "v1.region", "v1._beta_keys",
    "ds.meta_data.local_hostname", "ds.meta_data.local-hostname",
    "ds.meta_data.hostname", "ds.meta_data.meta", "ds.meta_data.meta.role",
    "ds.meta_data.meta.user_network_config", "ds.meta_data.meta.v1_0",
    "ds.meta_data.nested_version_key", "ds.meta_data.v2.hostname",
    "ds.meta_data.hostname", "ds.meta_data.files", "ds.network_json",
    "launch_index", "weird_top_key", "weird_top_key.in_side", "weird-top.key",
    "cloud_name", "missing", "v1.missing", "ds.meta_data.nope.deeper",
    "ds.meta_data.availability_zone", "availability_zone", "availability-zone",
]

data = json.load(open("query-instance-data.json"))
out = {}
for key in KEYS:
    resp = convert_jinja_instance_data(data)
    try:
        if key:
            resp = _find_instance_data_leaf_by_varname_path(
                resp, convert_jinja_instance_data(data, include_key_aliases=True),
                key, False)
        keys = sorted(resp.keys()) if isinstance(resp, dict) else None
        if not isinstance(resp, str):
            resp = util.json_dumps(resp)
        out[key] = {"out": resp, "keys": keys}
    except (KeyError, ValueError) as e:
        out[key] = {"err": str(e)}
json.dump(out, open("query-cloudinit.json", "w"), indent=1, sort_keys=True)
