//go:build qemu

package qemutests

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

var netnsSeq atomic.Int32

// metadataNS makes a namespace like Neutron's qdhcp one, with dnsmasq when
// dhcp and h serving 169.254.169.254:80 when h is not nil.
func metadataNS(t *testing.T, dhcp bool, h http.Handler) *vm.NetNS {
	t.Helper()
	name := fmt.Sprintf("eitest%d-%d", time.Now().UnixNano()%100000, netnsSeq.Add(1))
	ns, err := vm.NewNetNS(name, dhcp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dnsmasq log:\n%s", ns.DHCPLog())
		}
		ns.Close()
	})
	if h != nil {
		if err := ns.Serve(h); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// nova plays nova's metadata API: the version list and one version.
func nova(iid, host string) http.Handler {
	files := map[string]string{
		"/openstack":                           "2012-08-10\n2013-04-04\n2018-08-27\nlatest",
		"/openstack/2018-08-27/meta_data.json": `{"uuid": "` + iid + `", "hostname": "` + host + `", "name": "md-vm", "availability_zone": "nova"}`,
		"/openstack/2018-08-27/user_data":      "#cloud-config\nruncmd: [echo from-metadata]\n",
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[strings.TrimSuffix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, b)
	})
}

// imds plays EC2's IMDS; with v2 it wants the token dance, without it
// answers the token PUT with 403 like an IMDSv1-only service.
func imds(iid, host string, v2 bool) http.Handler {
	const token = "tok-123"
	tree := map[string]string{
		"/":                                "2009-04-04\nlatest",
		"/latest/meta-data/":               "instance-id\nlocal-hostname\nplacement/\npublic-keys/",
		"/latest/meta-data/instance-id":    iid,
		"/latest/meta-data/local-hostname": host,
		"/latest/meta-data/placement/":     "availability-zone",
		"/latest/meta-data/placement/availability-zone": "us-east-1a",
		"/latest/meta-data/public-keys/":                "0=key",
		"/latest/meta-data/public-keys/0/":              "openssh-key",
		"/latest/meta-data/public-keys/0/openssh-key":   "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImds test@imds",
		"/latest/user-data":                             "#cloud-config\n",
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/latest/api/token" {
			if r.Method != http.MethodPut || !v2 {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			fmt.Fprint(w, token)
			return
		}
		if v2 && r.Header.Get("X-aws-ec2-metadata-token") != token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/openstack") {
			http.NotFound(w, r)
			return
		}
		p := strings.Replace(r.URL.Path, "/2009-04-04/", "/latest/", 1)
		b, ok := tree[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, b)
	})
}

// novaDMI is the SMBIOS system table of an OpenStack Nova guest: the
// platform discovery recognises before it tries the metadata service.
const novaDMI = "type=1,manufacturer=OpenStack Foundation,product=OpenStack Nova"

// metadataBoot boots a busybox root with one NIC on the namespace's tap,
// with OpenStack Nova's DMI.
func metadataBoot(t *testing.T, ns *vm.NetNS, extra string) (string, *vm.Result) {
	t.Helper()
	root := busyboxDisk(t, "root", "")
	res := boot(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20 " + extra, Disks: []vm.Disk{{Path: root}},
		NICs: []vm.NIC{{MAC: macA, Netdev: "tap:" + ns.Tap}}, RNG: true, Wrap: ns.Wrap(), SMBIOS: []string{novaDMI}})
	mustContain(t, "console", res.Console, "TESTINIT: /sbin/init pid=1")
	return root, res
}

// noLeftovers asserts the real init found no temporary address or route.
func noLeftovers(t *testing.T, root string) {
	t.Helper()
	s := seen(t, root)
	i, j := strings.Index(s, "--- addresses"), strings.Index(s, "--- end")
	if i < 0 || j < i {
		t.Fatalf("no address record:\n%s", s)
	}
	if rec := s[i:j]; strings.Contains(rec, "10.77.0.") || strings.Contains(rec, "169.254.") || strings.Contains(rec, "default") {
		t.Errorf("the temporary network survived the handoff:\n%s", rec)
	}
}

func TestMetadataOpenStack(t *testing.T) {
	parallel(t)
	ns := metadataNS(t, true, nova("md-openstack-1", "md-os.example.net"))
	root, res := metadataBoot(t, ns, "")
	mustContain(t, "console", res.Console, `datasource: platform openstack (sys_vendor="OpenStack Foundation" product_name="OpenStack Nova"`, "metadata: DHCP lease 10.77.0.", "2 classless routes, MTU 1400", `datasource openstack: instance "md-openstack-1"`, "temporary network on eth0 torn down")
	checkIdentity(t, root, "md-openstack-1", "md-os")
	wantFile(t, root, "/var/lib/earlyinit/instances/md-openstack-1/user-data.txt", "#cloud-config\nruncmd: [echo from-metadata]\n")
	noLeftovers(t, root)
}

func TestMetadataEC2IMDSv2(t *testing.T) {
	parallel(t)
	ns := metadataNS(t, true, imds("i-0123456789abcdef0", "ip-10-77-0-50.ec2.internal", true))
	root, res := metadataBoot(t, ns, "earlyinit.ds=ec2")
	mustContain(t, "console", res.Console, `datasource ec2: instance "i-0123456789abcdef0"`)
	checkIdentity(t, root, "i-0123456789abcdef0", "ip-10-77-0-50")
	noLeftovers(t, root)
}

func TestMetadataIMDSv1Fallback(t *testing.T) {
	parallel(t)
	ns := metadataNS(t, true, imds("i-00000000000000001", "v1host", false))
	root, res := metadataBoot(t, ns, "earlyinit.ds=openstack,ec2")
	mustContain(t, "console", res.Console, "datasource openstack rejected", `datasource ec2: instance "i-00000000000000001"`)
	checkIdentity(t, root, "i-00000000000000001", "v1host")
	noLeftovers(t, root)
}

func TestMetadataServerError(t *testing.T) {
	parallel(t)
	ns := metadataNS(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	root, res := metadataBoot(t, ns, "earlyinit.ds=openstack,ec2")
	mustContain(t, "console", res.Console, "datasource openstack rejected", "500", "datasource ec2 rejected")
	if _, err := vm.Stat(root, "/var/lib/earlyinit/data/instance-id"); err == nil {
		t.Errorf("a rejected metadata service left an instance cache")
	}
	noLeftovers(t, root)
}

func TestMetadataServerSilent(t *testing.T) {
	parallel(t)
	ns := metadataNS(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Minute)
	}))
	root, res := metadataBoot(t, ns, "earlyinit.timeout=10")
	mustContain(t, "console", res.Console, "datasource openstack rejected")
	noLeftovers(t, root)
}

func TestMetadataNoDHCP(t *testing.T) {
	parallel(t)
	ns := metadataNS(t, false, nil)
	root, res := metadataBoot(t, ns, "earlyinit.timeout=8")
	mustContain(t, "console", res.Console, "metadata: no DHCP lease on eth0")
	noLeftovers(t, root)
}
