//go:build !initrd

package userdata

import (
	"errors"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jinja"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// jinjaInstanceData is instance-data-sensitive.json as earlyinit writes
// it for an EC2-like instance (instance.InstanceData), so the templates
// see what they see at boot.
func jinjaInstanceData(t *testing.T) string {
	t.Helper()
	d := &instance.Data{Datasource: "ec2", CloudName: "aws", Platform: "ec2", Subplatform: "metadata (http://169.254.169.254)",
		InstanceID: "i-0abc", LocalHostname: "ip-10-0-0-5.ec2.internal", AvailabilityZone: "us-east-1a", Region: "us-east-1",
		PublicKeys: []string{"ssh-ed25519 AAAA user@host"}, AdminPass: "s3cr3t",
		Meta: map[string]any{"instance-id": "i-0abc", "local-hostname": "ip-10-0-0-5.ec2.internal", "public-hostname": "ec2-1-2-3-4.compute.amazonaws.com",
			"placement": map[string]any{"availability-zone": "us-east-1a"}, "block-device-mapping": map[string]any{"ami": "/dev/xvda", "root": "/dev/xvda"},
			"network": map[string]any{"interfaces": map[string]any{"macs": map[string]any{"02:00:00:00:00:01": map[string]any{"local-ipv4s": "10.0.0.5", "device-number": "0"}}}},
			"tags":    map[string]any{"instance": map[string]any{"Name": "web-1", "Env.Stage": "prod"}}}}
	_, sensitive, err := instance.InstanceData(d, instance.SysInfo{Distro: "debian", DistroVersion: "12", DistroRelease: "bookworm", Variant: "debian", KernelRelease: "6.1.0", Machine: "x86_64"})
	if err != nil {
		t.Fatal(err)
	}
	return string(sensitive)
}

// jinjaPayloads are user-data templates, as users write them (cloud-init's
// documentation's examples among them), and the corners of the handler:
// the header line, the rendered part's type, failures.
var jinjaPayloads = []string{
	"## template: jinja\n#cloud-config\nhostname: {{ v1.local_hostname }}\nfqdn: {{ ds.meta_data.local_hostname }}\nruncmd:\n  - echo {{ v1.instance_id }} {{ instance_id }} {{ v1['availability-zone'] }} {{ availability_zone }}\n",
	"## template: jinja\n#!/bin/bash\n{% if v1.region == 'us-east-1' -%}\necho 'Installing custom proxies for {{ v1.region }}'\n{%- endif %}\necho done\n",
	"## template: jinja\n#cloud-config\nruncmd:\n    - echo 'EC2 public hostname allocated to instance: {{\n      ds.meta_data.public_hostname }}' > /tmp/instance_metadata\n    - echo 'EC2 availability zone: {{ v1.availability_zone }}' >>\n      /tmp/instance_metadata\n",
	"## template: jinja\n#cloud-config\nwrite_files:\n{% for mac, nic in ds.meta_data.network.interfaces.macs.items() %}\n  - path: /etc/nic-{{ nic['device-number'] }}\n    content: \"{{ mac }} {{ nic.local_ipv4s }}\"\n{% endfor %}\n",
	"## template: jinja\n#cloud-config\nfinal_message: {{ ds.meta_data.tags.instance.Name | default('x') }} {{ ds.meta_data.tags.instance.Env_Stage }} {{ ds.meta_data.tags.instance['Env.Stage'] }}\n",
	"## template: jinja\n#cloud-config\nmessage: {{ merged_cfg._doc | default('none') }} {{ v1.distro }} {{ distro_release }} {{ v1.public_ssh_keys | tojson }} {{ sys_info | default('no sys_info') }}\n",
	"## template: jinja\n#cloud-config\nsecret: {{ ds.meta_data.admin_pass }} {{ sensitive_keys | join(',') }} {{ base64_encoded_keys }}\n",
	"## template: jinja\n#cloud-config\nmissing: {{ nope }} {{ v1.nope }}{{ also_missing }}\n",
	"## template: jinja\n#cloud-config\n{{ ds.meta_data.nope.deeper }}\n",
	"## template: jinja\n#cloud-config\n{{ local-hostname }}\n",
	"## template: jinja\n#cloud-config\n{% if %}\n",
	"## template: jinja\n#cloud-boothook\necho {{ v1.region }}\n",
	"## template: jinja\n#include\nhttp://example.com/{{ v1.region }}\n",
	"## template: jinja\n#cloud-config-jsonp\n[]\n",
	"## template: jinja\nno type line {{ v1.region }}\n",
	"## template: jinja\n{% if false %}#cloud-config{% endif %}",
	"## template: jinja\n",
	"## template: jinja",
	"##template:JINJA \r\n#cloud-config\r\na: {{ v1.region }}\r\n",
	"## template: basic\n#cloud-config\n",
	"## template: jinja2\n#cloud-config\n",
	"\n## template: jinja\n#cloud-config\n",
	"## template: jinja\n   #cloud-config\nx: 1",
	"## template: jinja\n{{ '#cloud-config' }}\n{{ 'a: 1' }}",
}

// TestRenderJinjaAgainstCloudInit runs each payload through cloud-init's
// JinjaTemplatePartHandler (its sub-handlers recording what they get, the
// instance data in its run directory) and through RenderJinja: the same
// parts, of the same type, with the same content; and the same undefined
// names in the warning (cloud-init's "Could not render jinja template
// variables").
func TestRenderJinjaAgainstCloudInit(t *testing.T) {
	data := jinjaInstanceData(t)
	type ciOut struct {
		CloudConfig []string `json:"cc"`
		Shell       []string `json:"ss"`
		Missing     []string `json:"missing"`
		Exc         string   `json:"exc"`
	}
	var want []ciOut
	oracle.Run(t, jinjaHandlerScript, map[string]any{"data": data, "payloads": jinjaPayloads}, &want)
	for i, payload := range jinjaPayloads {
		parts := []Part{{Type: TypeJinja, Filename: "part-001", Content: []byte(payload), MergeType: "list(append)"}}
		got, warns := RenderJinja(parts, func() ([]byte, error) { return []byte(data), nil }, nil)
		var cc, ss []string
		for _, p := range got {
			switch p.Type {
			case TypeCloudConfig:
				cc = append(cc, string(p.Content))
			case TypeShellScript:
				ss = append(ss, string(p.Content))
			default:
				t.Errorf("payload %d: a part of type %s", i, p.Type)
			}
			if p.Filename != "part-001" || p.MergeType != "list(append)" {
				t.Errorf("payload %d: file name %q, merge type %q", i, p.Filename, p.MergeType)
			}
		}
		w := want[i]
		if strings.HasPrefix(payload, "## template: jinja\n#cloud-config-jsonp") {
			// earlyinit has no JSON patches: the part is dropped, said.
			if len(got) != 0 || len(warns) != 1 || !strings.Contains(string(warns[0]), "#cloud-config-jsonp, which earlyinit does not support") {
				t.Errorf("payload %d: parts %v, warnings %q", i, got, warns)
			}
			continue
		}
		if strings.Join(cc, "\x00") != strings.Join(w.CloudConfig, "\x00") || strings.Join(ss, "\x00") != strings.Join(w.Shell, "\x00") {
			t.Errorf("payload %d %q:\n got cloud-config %q, scripts %q (warnings %q)\nwant cloud-config %q, scripts %q (%s)", i, payload, cc, ss, warns, w.CloudConfig, w.Shell, w.Exc)
		}
		var missing []string
		for _, wn := range warns {
			if _, names, ok := strings.Cut(string(wn), "could not render jinja template variables in the template: "); ok {
				for _, n := range strings.Split(names, ", ") {
					missing = append(missing, strings.Trim(n, "'"))
				}
			}
		}
		// cloud-init shows each match of CI_MISSING_JINJA_VAR/[^\s]+ whole,
		// earlyinit only the name it starts with.
		for j := range w.Missing {
			if j < len(missing) && strings.HasPrefix(w.Missing[j], missing[j]) {
				w.Missing[j] = missing[j]
			}
		}
		if strings.Join(missing, ",") != strings.Join(w.Missing, ",") {
			t.Errorf("payload %d: missing %q, cloud-init's %q", i, missing, w.Missing)
		}
		if len(got) == 0 && len(warns) == 0 && w.Exc != "" {
			t.Errorf("payload %d: dropped without a warning; cloud-init: %s", i, w.Exc)
		}
		for _, wn := range warns {
			if strings.Contains(string(wn), "s3cr3t") {
				t.Errorf("payload %d: a warning shows a secret: %s", i, wn)
			}
		}
	}
}

const jinjaHandlerScript = `
import os, re, tempfile
from cloudinit import handlers
from cloudinit.helpers import Paths
from cloudinit.handlers.jinja_template import JinjaTemplatePartHandler
logging.disable(logging.NOTSET)
class Rec(handlers.Handler):
    def __init__(self, types):
        handlers.Handler.__init__(self, "always", version=3)
        self.types, self.calls = types, []
    def list_types(self):
        return self.types
    def handle_part(self, data, ctype, filename, payload, frequency, headers):
        self.calls.append(payload)
class Catch(logging.Handler):
    def emit(self, record):
        self.msgs.append(record.getMessage())
catch = Catch()
logging.getLogger().addHandler(catch)
logging.getLogger().setLevel(logging.WARNING)
inp = json.load(sys.stdin)
run = tempfile.mkdtemp()
paths = Paths({"run_dir": run})
with open(paths.get_runpath("instance_data_sensitive"), "w") as f:
    f.write(inp["data"])
out = []
for p in inp["payloads"]:
    catch.msgs = []
    cc, ss = Rec(["text/cloud-config", "text/cloud-config-jsonp"]), Rec(["text/x-shellscript"])
    h = JinjaTemplatePartHandler(paths, sub_handlers=[cc, ss])
    res = {"missing": []}
    try:
        h.handle_part(None, "text/jinja2", "part-001", p, "always", {})
    except Exception as e:
        res["exc"] = type(e).__name__ + ": " + str(e)
    res["cc"], res["ss"] = cc.calls, ss.calls
    for m in catch.msgs:
        if m.startswith("Could not render jinja template variables"):
            res["missing"] = [n.strip("'") for n in m.split(": ", 1)[1].split(", ")]
    out.append(res)
print(json.dumps(out))
`

// TestJinjaVarsAgainstCloudInit: the variables JinjaVars makes of the
// instance data are cloud-init's convert_jinja_instance_data's, keys,
// aliases and order (as Jinja prints the dict); merged_cfg and
// base64-encoded-keys as cloud-init reads them.
func TestJinjaVarsAgainstCloudInit(t *testing.T) {
	// The variables as cloud-init converts them, printed as a Python
	// repr: every key and alias, in order. The base64-encoded-keys one
	// (cloud-init reads that key, with hyphens, where it writes
	// base64_encoded_keys) decodes only paths without a hyphen.
	docs := []string{jinjaInstanceData(t),
		`{"base64-encoded-keys": ["ds/meta_data/b64", "ds/x-y"], "ds": {"meta_data": {"b64": "aGk=", "a.b-c": {"v2": {"k": 1}}}, "x-y": "aGk="},
		  "v1": {"a//b": 1, "c**d": 2, "e==f<=g": 3, "x": {"y-z": [{"in-list": 1}]}}, "v22": {"top": true}, "top": "v22 wins?", "k[0]": null}`}
	var want []string
	oracle.Run(t, `
from cloudinit.handlers.jinja_template import convert_jinja_instance_data
out = []
for doc in json.load(sys.stdin):
    d = json.loads(doc)
    v = convert_jinja_instance_data(d, decode_paths=d.get("base64-encoded-keys", []), include_key_aliases=True)
    out.append(repr(v))
print(json.dumps(out))
`, docs, &want)
	for i, doc := range docs {
		vars, err := JinjaVars([]byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := RenderJinjaPayload([]byte("## template: jinja\n{{ vars }}"), dictWith("vars", vars))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[i] {
			t.Errorf("variables of %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	data := jinjaInstanceData(t)
	// merged_cfg comes from the image's configuration when the instance
	// data has none; the instance data's own wins.
	vars, err := JinjaVars([]byte(data), map[string]any{"b": 1, "a": []any{"x", 2}})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := RenderJinjaPayload([]byte("## template: jinja\n{{ merged_cfg }}"), vars)
	if err != nil || string(out) != "{'_doc': '"+mergedCfgDoc+"', 'a': ['x', 2], 'b': 1}" {
		t.Errorf("merged_cfg: %q, %v", out, err)
	}
	vars, _ = JinjaVars([]byte(`{"merged_cfg": {"own": true}}`), map[string]any{"b": 1})
	out, _, err = RenderJinjaPayload([]byte("## template: jinja\n{{ merged_cfg }}"), vars)
	if err != nil || string(out) != "{'own': True}" {
		t.Errorf("own merged_cfg: %q, %v", out, err)
	}
	for _, bad := range []string{"[]", "{", "", `{"ds": 1} x`} {
		if _, err := JinjaVars([]byte(bad), nil); err == nil {
			t.Errorf("instance data %q: no error", bad)
		}
	}
	if _, _, err := RenderJinjaPayload([]byte("#cloud-config\n"), vars); !errors.Is(err, ErrNotJinja) {
		t.Errorf("not a template: %v", err)
	}
}

func dictWith(k string, v any) *jinja.Dict {
	d := jinja.NewDict()
	d.Set(k, v)
	return d
}

// TestRenderJinjaNoInstanceData: without the instance data, templates are
// dropped with a warning naming why, other parts kept; the instance data
// is read once, and not at all without a template.
func TestRenderJinjaNoInstanceData(t *testing.T) {
	reads := 0
	read := func() ([]byte, error) {
		reads++
		return nil, errors.New("no /run/earlyinit/instance-data-sensitive.json")
	}
	parts := []Part{
		{Type: TypeJinja, Filename: "a", Content: []byte("## template: jinja\n#cloud-config\n")},
		{Type: TypeShellScript, Filename: "b", Content: []byte("#!/bin/sh\n")},
		{Type: TypeJinja, Filename: "c", Content: []byte("## template: jinja\n#!/bin/sh\n")},
	}
	got, warns := RenderJinja(parts, read, nil)
	if len(got) != 1 || got[0].Filename != "b" || len(warns) != 2 || reads != 1 || !strings.Contains(string(warns[0]), "instance-data-sensitive.json") {
		t.Errorf("parts %v, warnings %q, reads %d", got, warns, reads)
	}
	reads = 0
	if got, warns := RenderJinja(parts[1:2], read, nil); len(got) != 1 || len(warns) != 0 || reads != 0 {
		t.Errorf("no template: parts %v, warnings %q, reads %d", got, warns, reads)
	}
}

// TestDecodeThenRender: a MIME message with a template among other parts
// renders in place, keeping the order cloud-init's handlers see.
func TestDecodeThenRender(t *testing.T) {
	mime := "Content-Type: multipart/mixed; boundary=XX\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho 1\n" +
		"--XX\nContent-Type: text/jinja2\nMerge-Type: list(append)\n\n## template: jinja\n#cloud-config\nruncmd: [echo {{ v1.region }}]\n" +
		"--XX\nContent-Type: text/plain\n\n## template: jinja\n#!/bin/sh\necho {{ v1.instance_id }}\n--XX--\n"
	parts, warns, err := Decode([]byte(mime))
	if err != nil || len(warns) > 0 {
		t.Fatalf("Decode: %v %q", err, warns)
	}
	data := jinjaInstanceData(t)
	parts, warns = RenderJinja(parts, func() ([]byte, error) { return []byte(data), nil }, nil)
	if len(warns) > 0 || len(parts) != 3 {
		t.Fatalf("parts %v, warnings %q", parts, warns)
	}
	for i, w := range []Part{
		{Type: TypeShellScript, Filename: "part-001", Content: []byte("#!/bin/sh\necho 1")},
		{Type: TypeCloudConfig, Filename: "part-002", Content: []byte("#cloud-config\nruncmd: [echo us-east-1]"), MergeType: "list(append)"},
		{Type: TypeShellScript, Filename: "part-003", Content: []byte("#!/bin/sh\necho i-0abc")},
	} {
		if p := parts[i]; p.Type != w.Type || p.Filename != w.Filename || string(p.Content) != string(w.Content) || p.MergeType != w.MergeType {
			t.Errorf("part %d: %+v, want %+v", i, p, w)
		}
	}
}
