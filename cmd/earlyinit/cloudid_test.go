//go:build !initrd

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// TestCloudIDAgainstCloudInit: for every datasource earlyinit has, the
// cloud id cloud-id prints from the instance data earlyinit writes is
// cloud-init's canonical_cloud_id of what cloud-init writes on that
// platform (its datasource class's cloud_name and platform_type), in
// every kind of region: no region, an ordinary one, AWS's China and
// GovCloud ones, Azure's China ones.
func TestCloudIDAgainstCloudInit(t *testing.T) {
	// What each reader (internal/datasource/NAME) puts in v1: cloud_name and
	// platform; and cloud-init's for the same platform (ci: its class
	// name in cloudinit.sources, "" for a platform cloud-init 22.4 has
	// no datasource for). On a platform it identifies, cloud-init's Ec2
	// and AliYun name the cloud from DMI: given here (ciCloud).
	type row struct {
		cloud, platform string
		ci              string
		ciCloud, ciPlat string
		differs         string // why earlyinit's cloud id is not cloud-init's
	}
	rows := map[string]row{
		"configdrive": {cloud: "openstack", platform: "openstack", ci: "DataSourceConfigDrive",
			differs: "internal/datasource/configdrive writes cloud_name and platform openstack; cloud-init's ConfigDrive writes configdrive"},
		"nocloud":      {cloud: "nocloud", platform: "nocloud", ci: "DataSourceNoCloud"},
		"opennebula":   {cloud: "opennebula", platform: "opennebula", ci: "DataSourceOpenNebula"},
		"openstack":    {cloud: "openstack", platform: "openstack", ci: "DataSourceOpenStack"},
		"ec2":          {cloud: "aws", platform: "ec2", ci: "DataSourceEc2", ciCloud: "aws"},
		"azure":        {cloud: "azure", platform: "azure", ci: "DataSourceAzure"},
		"gce":          {cloud: "gce", platform: "gce", ci: "DataSourceGCE"},
		"oracle":       {cloud: "oracle", platform: "oracle", ci: "DataSourceOracle"},
		"aliyun":       {cloud: "aliyun", platform: "aliyun", ci: "DataSourceAliYun", ciCloud: "aliyun"},
		"zstack":       {cloud: "zstack", platform: "ec2", ci: "DataSourceEc2", ciCloud: "zstack"},
		"outscale":     {cloud: "outscale", platform: "ec2", ci: "DataSourceEc2", ciCloud: "outscale"},
		"digitalocean": {cloud: "digitalocean", platform: "digitalocean", ci: "DataSourceDigitalOcean"},
		"hetzner":      {cloud: "hetzner", platform: "hetzner", ci: "DataSourceHetzner"},
		"vultr":        {cloud: "vultr", platform: "vultr", ci: "DataSourceVultr"},
		"upcloud":      {cloud: "upcloud", platform: "upcloud", ci: "DataSourceUpCloud"},
		"scaleway":     {cloud: "scaleway", platform: "scaleway", ci: "DataSourceScaleway"},
		"akamai":       {cloud: "akamai", platform: "akamai"},
		"cloudstack":   {cloud: "cloudstack", platform: "cloudstack", ci: "DataSourceCloudStack"},
		"exoscale":     {cloud: "exoscale", platform: "exoscale", ci: "DataSourceExoscale"},
		"vmware":       {cloud: "vmware", platform: "vmware", ci: "DataSourceVMware"},
		"ovf":          {cloud: "ovf", platform: "ovf", ci: "DataSourceOVF"},
		"none":         {cloud: "none", platform: "none", ci: "DataSourceNone"},
	}
	names := []string{"none"}
	for _, s := range discover.Sources {
		names = append(names, s.Name)
		if _, ok := rows[s.Name]; !ok {
			t.Errorf("datasource %s: no row here: add what its reader writes as v1.cloud_name and platform", s.Name)
		}
	}
	regions := []any{nil, "", "us-east-1", "cn-north-1", "us-gov-west-1", "chinaeast2", "eu-central-1"}
	type q struct {
		Class  string `json:"class"`
		Cloud  string `json:"cloud"`
		Region any    `json:"region"`
	}
	var qs []q
	for _, n := range names {
		for _, r := range regions {
			qs = append(qs, q{rows[n].ci, rows[n].ciCloud, r})
		}
	}
	var want []struct {
		ID       string `json:"id"`
		Cloud    string `json:"cloud"`
		Platform string `json:"platform"`
	}
	oracle.Run(t, `
import importlib
from cloudinit import helpers, sources
out = []
for c in json.load(sys.stdin):
    if not c["class"]:
        out.append({})
        continue
    ds = getattr(importlib.import_module("cloudinit.sources." + c["class"]), c["class"])(sys_cfg={}, distro=None, paths=helpers.Paths({}))
    cloud = c["cloud"] or ds.cloud_name
    out.append({"id": sources.canonical_cloud_id(cloud, c["region"], ds.platform_type), "cloud": cloud, "platform": ds.platform_type})
print(json.dumps(out))
`, qs, &want)
	dir := t.TempDir()
	i := 0
	for _, n := range names {
		rw := rows[n]
		for _, region := range regions {
			w := want[i]
			i++
			v1 := map[string]any{"cloud_name": rw.cloud, "platform": rw.platform, "region": region}
			b, _ := json.Marshal(map[string]any{"v1": v1})
			file := filepath.Join(dir, n+".json")
			os.WriteFile(file, b, 0o644)
			code, out, errOut := captureAll(t, "cloud-id", "-i", file, "--root", statusRoot(t))
			got := strings.TrimSuffix(out, "\n")
			if code != 0 || errOut != "" {
				t.Errorf("%s %v: exit %d, %q", n, region, code, errOut)
			}
			if got != canonicalCloudID(rw.cloud, strOrEmpty(region), rw.platform) {
				t.Errorf("%s %v: printed %q", n, region, got)
			}
			switch {
			case rw.ci == "":
				// No such datasource in cloud-init 22.4: the
				// canonical id of earlyinit's own names.
			case rw.differs != "":
				if got == w.ID {
					t.Errorf("%s: the same cloud id as cloud-init's (%q): the known difference (%s) is gone, remove it here", n, got, rw.differs)
				}
			case got != w.ID:
				t.Errorf("%s, region %v: cloud id %q; cloud-init's %q (its cloud_name %q, platform %q)", n, region, got, w.ID, w.Cloud, w.Platform)
			}
		}
	}
	// -l adds the region (None for null, as Python prints it), -j the v1
	// keys and cloud_id as cloud-init's JSON; disabled and not run.
	file := filepath.Join(dir, "aws.json")
	os.WriteFile(file, []byte(`{"v1": {"cloud_name": "aws", "platform": "ec2", "region": "cn-north-1", "x": "é", "n": 1.0}}`), 0o644)
	nullRegion := filepath.Join(dir, "null.json")
	os.WriteFile(nullRegion, []byte(`{"v1": {"cloud_name": "aws", "platform": "ec2", "region": null}}`), 0o644)
	done := statusRoot(t)
	notRun := t.TempDir()
	disabled := t.TempDir()
	os.MkdirAll(filepath.Join(disabled, "etc/earlyinit"), 0o755)
	os.WriteFile(filepath.Join(disabled, "etc/earlyinit/disabled"), nil, 0o644)
	for _, c := range []cliCase{
		{args: []string{"cloud-id", "-i", file, "--root", done}, code: 0, stdout: []string{"aws-china\n"}, noStderr: true},
		{args: []string{"cloud-id", "-l", "-i", file, "--root", done}, code: 0, stdout: []string{"aws-china\tcn-north-1\n"}, noStderr: true},
		{args: []string{"cloud-id", "--long", "-i", nullRegion, "--root", done}, code: 0, stdout: []string{"aws\tNone\n"}, noStderr: true},
		{args: []string{"cloud-id", "-j", "-i", file, "--root", done}, code: 0,
			stdout: []string{"{\n \"cloud_id\": \"aws-china\",\n \"cloud_name\": \"aws\",\n \"n\": 1.0,\n \"platform\": \"ec2\",\n \"region\": \"cn-north-1\",\n \"x\": \"\\u00e9\"\n}\n"},
			stderr: []string{"DEPRECATED: Use: earlyinit query v1"}},
		{args: []string{"cloud-id", "--root", notRun}, code: 3, stdout: []string{"not run\n"}, noStderr: true},
		{args: []string{"cloud-id", "--root", disabled}, code: 2, stdout: []string{"disabled\n"}, noStderr: true},
		{args: []string{"cloud-id", "--root", done}, code: 1, stderr: []string{"File not found '" + done + "/run/earlyinit/instance-data.json'"}, noStdout: true},
		{args: []string{"cloud-id", "-i", filepath.Join(dir, "ovf.json"), "x"}, code: 2, stderr: []string{"takes no operands"}, noStdout: true},
	} {
		c.check(t)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644)
	cliCase{args: []string{"cloud-id", "-i", filepath.Join(dir, "bad.json"), "--root", done}, code: 1, stderr: []string{"is not valid json"}, noStdout: true}.check(t)
}

func strOrEmpty(v any) string {
	s, _ := v.(string)
	return s
}
