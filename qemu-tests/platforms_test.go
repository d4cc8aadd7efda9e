//go:build qemu

package qemutests

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource/ec2/ec2test"
	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/vm"
)

// The platform boots: one per datasource earlyinit knows (discover.Sources),
// with the platform's DMI strings as QEMU's SMBIOS tables and a stand-in for
// its metadata service in the test's network namespace (or its drive),
// serving the responses the source's own unit tests record. Each boot checks
// what the source leaves in the real root: the instance id, the host name,
// the SSH keys in the instance data and the network configuration the
// platform gives (rendered for networkd: the roots have systemd's markers).

// dsTestdata is where the sources' recorded responses are.
const dsTestdata = "../internal/datasource"

// fixture reads a source's recorded response, testdata/<name> of package
// internal/datasource/<source>.
func fixture(t *testing.T, source, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dsTestdata, source, "testdata", name))
	if err != nil {
		t.Fatalf("fixture of %s: %v", source, err)
	}
	return string(b)
}

// platformCase is one platform's boot.
type platformCase struct {
	// name is the subtest's; source is the datasource's name in
	// discover.Sources (name when empty).
	name, source string
	// smbios are the platform's DMI strings (vm.Config.SMBIOS).
	smbios []string
	// serve gives the platform's stand-in services by "address:port" in
	// the namespace; nil for a drive platform, which boots without one.
	serve func(t *testing.T) map[string]http.Handler
	// drive makes the platform's drive.
	drive func(t *testing.T) vm.Disk
	// macs are the VM's NICs, in PCI order (eth0, eth1, ...): the first
	// on the namespace's tap when there is one, the others without link.
	// Empty means one NIC, macA.
	macs []string
	// iid and host are the instance id and the host name the source reads
	// (local-hostname, as discovery logs it; "" when the platform gives
	// none). etcHostname is what /etc/hostname holds after the boot when
	// it is not host's short name: user-data's hostname, which the late
	// stage applies, or the image's when host is "" or not a valid name.
	iid, host, etcHostname string
	// keys are the public keys the instance data must list, and no others.
	keys []string
	// network are the networkd units the platform's network configuration
	// must render, each given as lines one unit file holds all of; netNote
	// is what the network step logs of the configuration ("yaml config
	// with 2 interfaces"). Both empty: the platform gives none and the
	// fallback applies.
	network [][]string
	netNote string
	// userData is user-data.txt in the instance's cache, when not nil.
	userData *string
	// console are more lines the console must hold.
	console []string
	// check checks more, after the boot.
	check func(t *testing.T, root, console string)
}

func str(s string) *string { return &s }

// answers serves fixed answers by request path (query included when
// the key has one): an answer missing is a 404.
func answers(m map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := m[r.URL.RequestURI()]
		if !ok {
			b, ok = m[r.URL.Path]
		}
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, b)
	})
}

// novaFiles plays nova's metadata API from a config drive tree, as the
// openstack source's unit test does: GET /openstack lists the version
// directories, GET /openstack/<path> serves the drive's file.
func novaFiles(dir string) http.Handler {
	fsys := os.DirFS(dir)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimSuffix(r.URL.Path, "/")
		if p == "/openstack" {
			ents, err := fs.ReadDir(fsys, "openstack")
			if err != nil {
				http.NotFound(w, r)
				return
			}
			var vs []string
			for _, e := range ents {
				if e.IsDir() && e.Name() != "content" {
					vs = append(vs, e.Name())
				}
			}
			io.WriteString(w, strings.Join(vs, "\n"))
			return
		}
		b, err := fs.ReadFile(fsys, strings.TrimPrefix(p, "/"))
		if err != nil || !strings.HasPrefix(p, "/openstack/") {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	})
}

// configDriveFixture is the openstack and configdrive sources' recorded
// config drive.
var configDriveFixture = filepath.Join(dsTestdata, "configdrive/testdata/config-2")

// nocloudFixture is the nocloud source's recorded seed.
var nocloudFixture = filepath.Join(dsTestdata, "nocloud/testdata/cidata")

// Keys of the recorded responses.
const (
	fixtureAliceKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVhcmx5aW5pdCB0ZXN0IGtleSBvbmx5 alice@laptop"
	fixtureBobKey   = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCearlyinit bob@desk"
)

// openstackCase is nova's metadata service answering for the recorded
// config drive, on a platform recognised by smbios.
func openstackCase(name string, smbios ...string) platformCase {
	return platformCase{
		name: name, source: "openstack", smbios: smbios,
		serve: func(t *testing.T) map[string]http.Handler {
			return map[string]http.Handler{vm.MetadataIP + ":80": novaFiles(configDriveFixture)}
		},
		macs: []string{"fa:16:3e:69:b0:58"},
		iid:  "2b3c84ef-9c33-4a1e-b7a6-2d3b4c07c5f1", host: "web-1.example.internal", keys: []string{fixtureAliceKey},
		network:  [][]string{{"Name=eth0", "MACAddress=fa:16:3e:69:b0:58", "MTUBytes=1450", "DHCP=ipv4", "DNS=192.0.2.53"}},
		netNote:  "network_data.json config with 1 interfaces",
		userData: str("#cloud-config\nhostname: web-1\nruncmd:\n  - [touch, /run/user-data-ran]\n"),
		check: func(t *testing.T, root, console string) {
			wantFile(t, root, "/etc/motd.d/10-cloud", "Welcome to web-1.\n")
			wantFile(t, root, "/etc/app/app.conf", "[app]\nlisten = 0.0.0.0:8080\n")
			wantFile(t, root, "/var/lib/earlyinit/instances/2b3c84ef-9c33-4a1e-b7a6-2d3b4c07c5f1/vendor-data.txt", "#cloud-config\npackages: [htop]\n")
		},
	}
}

// azureIMDS plays Azure's IMDS as the azure source's unit test does: the
// document only with "Metadata: true" and a known api-version.
func azureIMDS(doc string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata") != "true" {
			http.Error(w, `{"error": "Bad request. Required metadata header not specified"}`, http.StatusBadRequest)
			return
		}
		if r.URL.Path != "/metadata/instance" {
			http.NotFound(w, r)
			return
		}
		if v := r.URL.Query().Get("api-version"); v != "2021-08-01" && v != "2019-06-01" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		io.WriteString(w, doc)
	})
}

// wireServer plays Azure's wire server: the recorded goal state, and the
// health reports posted.
type wireServer struct {
	goalState string
	mu        sync.Mutex
	reports   []string
}

func (s *wireServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("x-ms-version") == "" {
		http.Error(w, "no x-ms-version", http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/machine/" && r.URL.Query().Get("comp") == "goalstate":
		io.WriteString(w, s.goalState)
	case r.Method == http.MethodPost && r.URL.Path == "/machine" && r.URL.Query().Get("comp") == "health":
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.mu.Lock()
		s.reports = append(s.reports, string(b))
		s.mu.Unlock()
	default:
		http.NotFound(w, r)
	}
}

func (s *wireServer) Reports() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reports...)
}

// gceServer plays GCE's metadata server as the gce source's unit test
// does: text values, attributes as JSON when asked recursively, 403
// without Metadata-Flavor: Google.
func gceServer(meta map[string]any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		p, ok := strings.CutPrefix(r.URL.Path, "/computeMetadata/v1/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		v, ok := meta[strings.TrimSuffix(p, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Metadata-Flavor", "Google")
		if strings.HasSuffix(p, "/") {
			if r.URL.Query().Get("recursive") != "true" {
				http.Error(w, "not recursive", http.StatusBadRequest)
				return
			}
			json.NewEncoder(w).Encode(v)
			return
		}
		io.WriteString(w, v.(string))
	})
}

// oracleIMDS plays OCI's IMDSv2: /opc/v2/ only with "Authorization:
// Bearer Oracle".
func oracleIMDS(instance, vnics string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/opc/v2/") {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer Oracle" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/opc/v2/instance/":
			io.WriteString(w, instance)
		case "/opc/v2/vnics/":
			io.WriteString(w, vnics)
		default:
			http.NotFound(w, r)
		}
	})
}

// passwordServer plays CloudStack's password server (Exoscale's too):
// the password for send_my_password, and the acknowledgements.
type passwordServer struct {
	password string
	mu       sync.Mutex
	asked    []string
}

func (p *passwordServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Get("DomU_Request")
	p.mu.Lock()
	p.asked = append(p.asked, h)
	p.mu.Unlock()
	switch h {
	case "send_my_password":
		io.WriteString(w, p.password)
	case "saved_password":
		io.WriteString(w, "saved_password")
	default:
		io.WriteString(w, "bad_request")
	}
}

func (p *passwordServer) Asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// passwordKept checks that pw is in the sensitive instance data only, never
// on the console or in the public instance data, and that the password
// server was told it was saved.
func passwordKept(t *testing.T, root, console, pw string, srv *passwordServer) {
	t.Helper()
	if strings.Contains(console, pw) {
		t.Errorf("the password is on the console")
	}
	if strings.Contains(catRoot(t, root, "/seen/run-earlyinit/instance-data.json"), pw) {
		t.Errorf("the password is in instance-data.json")
	}
	mustContain(t, "instance-data-sensitive.json", catRoot(t, root, "/seen/run-earlyinit/instance-data-sensitive.json"), pw)
	if got := strings.Join(srv.Asked(), ","); got != "send_my_password,saved_password" {
		t.Errorf("the password server was asked %q, want send_my_password then saved_password", got)
	}
}

// cloudStackRouter is the cloudstack source's recorded virtual router
// meta-data.
func cloudStackRouter() http.Handler {
	meta := []struct{ k, v string }{
		{"service-offering", "Small Instance"},
		{"availability-zone", "zone1"},
		{"local-ipv4", "10.1.1.23"},
		{"local-hostname", "VM-8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11"},
		{"public-ipv4", "192.0.2.10"},
		{"public-hostname", "192.0.2.10"},
		{"instance-id", "8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11"},
		{"vm-id", "8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11"},
		{"public-keys", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host\n"},
		{"cloud-identifier", "CloudStack-{7e1f2c1a-2f1e-4c55-b1a4-6f0c8b9e2d10}"},
		{"hypervisor-host-name", "kvm1"},
	}
	m := map[string]string{"/latest/user-data": "#cloud-config\nhostname: cs\n"}
	var names []string
	for _, e := range meta {
		m["/latest/meta-data/"+e.k] = e.v
		names = append(names, e.k)
	}
	m["/latest/meta-data/"] = strings.Join(names, "\n")
	return answers(m)
}

// scalewayAPI plays Scaleway's metadata API: conf?format=json, and the
// user and vendor data only to a privileged source port (below 1024), as
// the API gives them (403 otherwise); neither is set (404).
func scalewayAPI(conf string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/conf":
			if r.URL.Query().Get("format") != "json" {
				http.Error(w, "format", http.StatusBadRequest)
				return
			}
			io.WriteString(w, conf)
		case "/user_data/cloud-init", "/vendor_data/cloud-init":
			_, port, _ := net.SplitHostPort(r.RemoteAddr)
			if p, err := strconv.Atoi(port); err != nil || p >= 1024 {
				http.Error(w, "source port must be privileged", http.StatusForbidden)
				return
			}
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

// linodeService plays the Akamai (Linode) metadata service as the linode
// source's unit test does: a token for PUT /v1/token, then the recorded
// instance and network descriptions and base64 user-data with it.
func linodeService(instance, network, userData string) http.Handler {
	const token = "linode-test-token"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/token" {
			if r.Method != http.MethodPut || r.Header.Get("Metadata-Token-Expiry-Seconds") == "" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			io.WriteString(w, token)
			return
		}
		if r.Header.Get("Metadata-Token") != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/v1/instance":
			io.WriteString(w, instance)
		case "/v1/network":
			io.WriteString(w, network)
		case "/v1/user-data":
			io.WriteString(w, base64.StdEncoding.EncodeToString([]byte(userData)))
		default:
			http.NotFound(w, r)
		}
	})
}

// hetznerCase is Hetzner Cloud's metadata service with the hetzner
// source's recorded answers, its metadata document edited by edit (nil:
// as recorded), and pc's expectations of the network.
func hetznerCase(name string, edit func(string) string, pc platformCase) platformCase {
	pc.name, pc.source = name, "hetzner"
	pc.smbios = []string{"type=1,manufacturer=Hetzner,product=vServer,serial=123456"}
	pc.serve = func(t *testing.T) map[string]http.Handler {
		md := fixture(t, "hetzner", "metadata.yaml")
		if edit != nil {
			if md = edit(md); md == fixture(t, "hetzner", "metadata.yaml") {
				t.Fatalf("the edit changed nothing in hetzner's metadata.yaml")
			}
		}
		return map[string]http.Handler{vm.MetadataIP + ":80": answers(map[string]string{
			"/hetzner/v1/metadata":                  md,
			"/hetzner/v1/metadata/private-networks": fixture(t, "hetzner", "private-networks.yaml"),
			"/hetzner/v1/userdata":                  fixture(t, "hetzner", "userdata"),
		})}
	}
	pc.macs = []string{"96:00:00:08:19:da", "86:00:00:aa:5d:f8"}
	pc.iid, pc.host = "123456", "cloudinit-test"
	pc.keys = []string{"ssh-ed25519 AAAAC3Nzac1lZdI1NTE5AaaAIaFrcac0yVITsmRrmueq6MD0qYNKlEvW8O1Ib4nkhmWh test-key@workstation"}
	pc.userData = str("#cloud-config\nruncmd:\n- [touch, /root/cloud-init-worked ]\n")
	return pc
}

// isoOf makes an ISO9660 drive labelled label of the tree at dir.
func isoOf(t *testing.T, dir, label string) vm.Disk {
	t.Helper()
	iso := filepath.Join(t.TempDir(), label+".iso")
	if err := vm.ISO(iso, dir, label); err != nil {
		t.Fatal(err)
	}
	return vm.Disk{Path: iso, If: "ide-cd"}
}

// udfOf is Azure's provisioning media: ovf-env.xml on a UDF disc (a
// UDF/ISO 9660 bridge, which blkid and earlyinit call udf), with a label
// no config-drive source knows.
func udfOf(t *testing.T, ovf string) vm.Disk {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ovf-env.xml"), []byte(ovf), 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "ovf.iso")
	if out, err := exec.Command("genisoimage", "-quiet", "-udf", "-V", "rd_rdfe_stable.cloudapp.net", "-o", img, dir).CombinedOutput(); err != nil {
		t.Fatalf("genisoimage (make deps installs it): %v\n%s", err, out)
	}
	return vm.Disk{Path: img, If: "ide-cd"}
}

func platformCases() []platformCase {
	awsDMI := "type=1,manufacturer=Amazon EC2,product=t3.micro,uuid=ec2e1916-9099-7caf-fd21-012345abcdef,serial=ec2e1916-9099-7caf-fd21-012345abcdef"
	wire, wireOVF := &wireServer{}, &wireServer{}
	csPW := &passwordServer{password: "SekritSquirrel\n"}
	exoPW := &passwordServer{password: "p@ssw0rd"}
	return []platformCase{
		{
			name: "configdrive", smbios: []string{novaDMI},
			drive: func(t *testing.T) vm.Disk { return isoOf(t, configDriveFixture, "config-2") },
			macs:  []string{"fa:16:3e:69:b0:58"},
			iid:   "2b3c84ef-9c33-4a1e-b7a6-2d3b4c07c5f1", host: "web-1.example.internal", keys: []string{fixtureAliceKey},
			network:  [][]string{{"Name=eth0", "MACAddress=fa:16:3e:69:b0:58", "MTUBytes=1450", "DHCP=ipv4", "DNS=192.0.2.53"}},
			netNote:  "network_data.json config with 1 interfaces",
			userData: str("#cloud-config\nhostname: web-1\nruncmd:\n  - [touch, /run/user-data-ran]\n"),
			console:  []string{"config-disk (/dev/sr0)"},
			check: func(t *testing.T, root, console string) {
				wantFile(t, root, "/etc/motd.d/10-cloud", "Welcome to web-1.\n")
				wantFile(t, root, "/etc/app/app.conf", "[app]\nlisten = 0.0.0.0:8080\n")
			},
		},
		{
			// A Proxmox VE or plain QEMU guest: no platform DMI.
			name:  "nocloud",
			drive: func(t *testing.T) vm.Disk { return isoOf(t, nocloudFixture, "cidata") },
			macs:  []string{"52:54:00:12:34:56"},
			iid:   "iid-db-7f3a91", host: "db-1", keys: []string{fixtureAliceKey, fixtureBobKey},
			network:  [][]string{{"Name=uplink", "MACAddress=52:54:00:12:34:56", "DHCP=ipv4"}},
			netNote:  "yaml config with 1 interfaces",
			userData: str("#cloud-config\nusers:\n  - name: alice\n    sudo: ALL=(ALL) NOPASSWD:ALL\npackage_update: true\n"),
			console:  []string{"datasource: no platform recognised (", "drives and seeds only: "},
			check: func(t *testing.T, root, console string) {
				mustContain(t, "the real init's NICs", seen(t, root), "nic uplink 52:54:00:12:34:56\n")
			},
		},
		{
			// H3C CAS's professional (cloud-init) mode: its 64 MB vfat
			// disk, read by configdrive as a config-2 drive (see
			// internal/datasource/h3c); CAS guests are plain KVM ones.
			name: "configdrive-h3c", source: "configdrive",
			drive: func(t *testing.T) vm.Disk {
				img := filepath.Join(t.TempDir(), "cas.img")
				if err := vm.VFAT(img, filepath.Join(dsTestdata, "h3c", "testdata", "professional-mode"), "CONFIG-2", 64); err != nil {
					t.Fatal(err)
				}
				return vm.Disk{Path: img}
			},
			macs: []string{"0c:da:41:1d:5e:01"},
			iid:  "5f0a1c52-8b7e-4f0c-9d1a-3e2b7c6d4a10", host: "cas-vm-01", keys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH ops@cas"},
			network: [][]string{{"Name=eth0", "MACAddress=0c:da:41:1d:5e:01", "DHCP=no", "Address=192.168.10.21/24", "Gateway=192.168.10.1", "DNS=192.168.10.2"}},
			netNote: "network_data.json config with 1 interfaces",
			console: []string{"config-disk (/dev/vdb)"},
			check: func(t *testing.T, root, console string) {
				if strings.Contains(console, "Cas@Passw0rd") || strings.Contains(catRoot(t, root, "/seen/run-earlyinit/instance-data.json"), "Cas@Passw0rd") {
					t.Errorf("the admin password is on the console or in instance-data.json")
				}
				mustContain(t, "instance-data-sensitive.json", catRoot(t, root, "/seen/run-earlyinit/instance-data-sensitive.json"), "Cas@Passw0rd")
			},
		},
		openstackCase("openstack", novaDMI),
		openstackCase("openstack-HUAWEICLOUD", "type=3,asset=HUAWEICLOUD"),
		openstackCase("openstack-OpenTelekomCloud", "type=3,asset=OpenTelekomCloud"),
		{
			name: "ec2", smbios: []string{awsDMI},
			serve: func(t *testing.T) map[string]http.Handler {
				ud := "#cloud-config\nhostname: web\n"
				return map[string]http.Handler{vm.MetadataIP + ":80": &ec2test.Service{
					Version: "2021-03-23", Versions: "1.0\n2009-04-04\n2016-09-02\n2021-03-23\nlatest", Tree: ec2test.AWSTree(), UserData: &ud,
					TokenHeader: "X-aws-ec2-metadata-token", TokenTTLHeader: "X-aws-ec2-metadata-token-ttl-seconds", Token: "AQAEAtoken==", TokenRequired: true,
				}}
			},
			macs: []string{ec2test.AWSMAC0, ec2test.AWSMAC1},
			iid:  "i-0123456789abcdef0", host: "ip-172-31-20-5.eu-west-1.compute.internal", etcHostname: "web",
			keys: []string{ec2test.AWSKey},
			network: [][]string{
				{"Name=eth0", "MACAddress=0a:49:e5:e5:4a:01", "DHCP=ipv4"},
				{"Name=eth1", "MACAddress=0a:49:e5:e5:4a:02", "DHCP=yes", "Address=172.31.30.9/20", "Address=172.31.30.8/20", "Address=2a05:d018::8/128"},
			},
			netNote:  "ec2 config with 2 interfaces",
			userData: str("#cloud-config\nhostname: web\n"),
		},
		{
			name: "azure",
			smbios: []string{"type=1,manufacturer=Microsoft Corporation,product=Virtual Machine",
				"type=3,manufacturer=Microsoft Corporation,asset=7783-7084-3265-9085-8269-3286-77"},
			serve: func(t *testing.T) map[string]http.Handler {
				wire.goalState = fixture(t, "azure", "goalstate.xml")
				return map[string]http.Handler{
					vm.MetadataIP + ":80": azureIMDS(fixture(t, "azure", "imds.json")),
					"168.63.129.16:80":    wire,
				}
			},
			macs: []string{"00:0d:3a:04:75:98"},
			iid:  "ff702a6b-cb6a-4fcd-ad68-b4ce38227642", host: "hostname1", keys: []string{"ssh-rsa key1"},
			network:  [][]string{{"MACAddress=00:0d:3a:04:75:98", "Driver=hv_netvsc", "DHCP=ipv4"}},
			netNote:  "yaml config with 1 interfaces",
			userData: str("userdataImds"),
			console:  []string{"datasource azure: reported ready to the platform"},
			check: func(t *testing.T, root, console string) {
				r := wire.Reports()
				if len(r) != 1 {
					t.Fatalf("%d health reports reached the wire server, want 1", len(r))
				}
				mustContain(t, "the health report", r[0], "<GoalStateIncarnation>1</GoalStateIncarnation>",
					"<ContainerId>b4c2a3e5-7f21-4c3b-a8d4-2f6e1d0c9b87</ContainerId>",
					"<InstanceId>a7f3c1d2-86b4-4e0f-9c2a-5d1b3e7f9a60.vm-azure-1</InstanceId>", "<State>Ready</State>")
				mustContain(t, "vendor-data.txt", catRoot(t, root, "/var/lib/earlyinit/instances/ff702a6b-cb6a-4fcd-ad68-b4ce38227642/vendor-data.txt"), "username1")
			},
		},
		{
			// The provisioning media: ovf-env.xml's CustomData is the
			// user-data; IMDS's names and keys still win; the password
			// in it is never shown.
			name: "azure-ovf", source: "azure",
			smbios: []string{"type=1,manufacturer=Microsoft Corporation,product=Virtual Machine",
				"type=3,manufacturer=Microsoft Corporation,asset=7783-7084-3265-9085-8269-3286-77"},
			serve: func(t *testing.T) map[string]http.Handler {
				wireOVF.goalState = fixture(t, "azure", "goalstate.xml")
				return map[string]http.Handler{
					vm.MetadataIP + ":80": azureIMDS(fixture(t, "azure", "imds.json")),
					"168.63.129.16:80":    wireOVF,
				}
			},
			drive: func(t *testing.T) vm.Disk { return udfOf(t, fixture(t, "azure", "ovf-env-full.xml")) },
			macs:  []string{"00:0d:3a:04:75:98"},
			iid:   "ff702a6b-cb6a-4fcd-ad68-b4ce38227642", host: "hostname1", keys: []string{"ssh-rsa key1"},
			network:  [][]string{{"MACAddress=00:0d:3a:04:75:98", "Driver=hv_netvsc", "DHCP=ipv4"}},
			netNote:  "yaml config with 1 interfaces",
			userData: str("#cloud-config\nruncmd: [touch /run/azure]\n"),
			console:  []string{"datasource azure: provisioning media sr0 udf", "datasource azure: reported ready to the platform"},
			check: func(t *testing.T, root, console string) {
				if strings.Contains(console, "test-password") {
					t.Errorf("ovf-env.xml's password reached the console")
				}
				if len(wireOVF.Reports()) != 1 {
					t.Errorf("%d health reports reached the wire server, want 1", len(wireOVF.Reports()))
				}
			},
		},
		{
			name: "gce", smbios: []string{"type=1,manufacturer=Google,product=Google Compute Engine,serial=GoogleCloud-8f2e88f"},
			serve: func(t *testing.T) map[string]http.Handler {
				// The gce source's "real zone path" fixture.
				return map[string]http.Handler{vm.MetadataIP + ":80": gceServer(map[string]any{
					"instance/id":       "4917325431875231234",
					"instance/zone":     "projects/123456789012/zones/europe-west1-b",
					"instance/hostname": "vm-1.europe-west1-b.c.my-project.internal",
					"instance/attributes": map[string]any{
						"ssh-keys":       "cloudinit:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGce cloudinit\nalice:ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice alice",
						"enable-oslogin": "FALSE",
						"user-data":      "#!/bin/sh\necho hi mom\ntouch /run/up-now\n",
					},
					"project/attributes": map[string]any{"ssh-keys": "cloudinit:ssh-rsa AAAAB3NzaC1yc2EAAAADAQABProject p"},
				})}
			},
			iid: "4917325431875231234", host: "vm-1",
			keys:     []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGce cloudinit", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABProject p"},
			userData: str("#!/bin/sh\necho hi mom\ntouch /run/up-now\n"),
		},
		{
			name: "oracle", smbios: []string{"type=1,manufacturer=QEMU", "type=3,manufacturer=QEMU,asset=OracleCloud.com"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{vm.MetadataIP + ":80": oracleIMDS(fixture(t, "oracle", "instance-v2.json"), fixture(t, "oracle", "vnics-vm-secondary.json"))}
			},
			macs: []string{"02:00:17:05:d1:db", "00:00:17:02:2b:b1"},
			iid:  "ocid1.instance.oc1.phx.anyhqljtniwq6syc3nex55sep5w34qbwmw6TRUNCATED", host: "instance-20200320-1400",
			keys: []string{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ truncated"},
			// Secondary VNICs are configured only when asked for.
			network:  [][]string{{"MACAddress=02:00:17:05:d1:db", "MTUBytes=9000", "DHCP=ipv4"}},
			netNote:  "yaml config with 1 interfaces",
			userData: str("#!/bin/sh\ntouch /tmp/foo"),
		},
		{
			name: "aliyun", smbios: []string{"type=1,manufacturer=Alibaba Cloud,product=Alibaba Cloud ECS"},
			serve: func(t *testing.T) map[string]http.Handler {
				ud, vd := "#cloud-config\n\nhostname: localhost", "#cloud-config\nbootcmd:\n- echo hello world > /tmp/vendor"
				return map[string]http.Handler{"100.100.100.200:80": &ec2test.Service{
					Version: "2016-01-01", Raw: map[string]string{"/2016-01-01/meta-data/all": fixture(t, "aliyun", "meta-data-all.json")},
					UserData: &ud, VendorData: &vd,
					TokenHeader: "X-aliyun-ecs-metadata-token", TokenTTLHeader: "X-aliyun-ecs-metadata-token-ttl-seconds", Token: "AQAEAFake-ecs-token==", TokenRequired: true,
				}}
			},
			macs: []string{"00:16:3e:14:59:58"},
			iid:  "i-bp15ojxppkmsnyjxxxxx", host: "aliyun-test-vm-00", etcHostname: "localhost", keys: []string{"ssh-rsa AAAAB3Nza"},
			network:  [][]string{{"Name=eth0", "MACAddress=00:16:3e:14:59:58", "DHCP=ipv4"}},
			netNote:  "ec2 config with 1 interfaces",
			userData: str("#cloud-config\n\nhostname: localhost"),
			console:  []string{"metadata (http://100.100.100.200)"},
		},
		{
			name: "zstack", smbios: []string{"type=3,asset=123456.zstack.io"},
			serve: func(t *testing.T) map[string]http.Handler {
				ud := "#cloud-config\npassword: never-logged\n"
				return map[string]http.Handler{vm.MetadataIP + ":80": &ec2test.Service{
					Version: "2009-04-04", Versions: "1.0\n2007-01-19\n2009-04-04\nlatest\n", UserData: &ud,
					Tree: map[string]string{
						"instance-id":               "3c4b3d4ef1b44a2f9ee0b8d0f1a0c1d2",
						"local-hostname":            "vm-zstack-1",
						"public-keys/":              "0=zstack",
						"public-keys/0/openssh-key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIZStack key@zstack\n",
					},
				}}
			},
			iid: "3c4b3d4ef1b44a2f9ee0b8d0f1a0c1d2", host: "vm-zstack-1", keys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIZStack key@zstack"},
			userData: str("#cloud-config\npassword: never-logged\n"),
			check: func(t *testing.T, root, console string) {
				if strings.Contains(console, "never-logged") {
					t.Errorf("user-data reached the console")
				}
			},
		},
		{
			name: "outscale", smbios: []string{"type=1,manufacturer=3DS Outscale,product=3DS Outscale VM"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{vm.MetadataIP + ":80": &ec2test.Service{
					Version: "2016-09-02", Versions: "1.0\n2009-04-04\n2016-09-02\nlatest\n",
					Tree: map[string]string{
						"instance-id":                 "i-3bd2a1c8",
						"local-hostname":              "ip-10-9-8-7.eu-west-2.compute.internal",
						"placement/availability-zone": "eu-west-2a",
						"public-keys/":                "0=outscale-key",
						"public-keys/0/openssh-key":   "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQOutscale key\n",
						"tags/instance/":              "Name\nosc.fcu.repulse_server",
						"tags/instance/Name":          "web",
					},
				}}
			},
			iid: "i-3bd2a1c8", host: "ip-10-9-8-7.eu-west-2.compute.internal", keys: []string{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQOutscale key"},
		},
		{
			name: "digitalocean", smbios: []string{"type=1,manufacturer=DigitalOcean,product=Droplet,serial=22532410"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{vm.MetadataIP + ":80": answers(map[string]string{"/metadata/v1.json": fixture(t, "digitalocean", "metadata-v1.json")})}
			},
			macs: []string{"04:01:57:d1:9e:01", "04:01:57:d1:9e:02"},
			iid:  "22532410", host: "utl-96268", keys: []string{"ssh-rsa AAAAB3NzaC1yc2EAAAA... test@do.co"},
			network: [][]string{
				{"Name=eth0", "MACAddress=04:01:57:d1:9e:01", "Address=192.0.0.20/24", "Address=10.0.0.5/16"},
				{"Name=eth1", "MACAddress=04:01:57:d1:9e:02", "Address=10.132.6.205/16"},
			},
			netNote:  "yaml config with 2 interfaces",
			userData: str("userdata goes here"),
		},
		hetznerCase("hetzner", func(md string) string {
			// As Hetzner serves it: cloud-init's recorded document leaves
			// the IPv6 subnet's type out (its test never renders it).
			return strings.Replace(md, "      ipv6: true\n", "      ipv6: true\n      type: static\n", 1)
		}, platformCase{
			network: [][]string{
				{"Name=eth0", "MACAddress=96:00:00:08:19:da", "DHCP=ipv4", "Address=2a01:4f8:beef:beef::1/64"},
				{"MACAddress=86:00:00:aa:5d:f8", "DHCP=ipv4"},
			},
			netNote: "yaml config with 2 interfaces",
		}),
		hetznerCase("hetzner-untyped", nil, platformCase{
			// A v1 subnet without a type is refused, as cloud-init's
			// network_state cannot take it either: the fallback applies.
			network: [][]string{{"Name=eth0", "MACAddress=96:00:00:08:19:da", "DHCP=ipv4"}},
			console: []string{"config[0] (eth0).subnets[1]: subnet without type; using the fallback config instead"},
		}),
		{
			name: "vultr", smbios: []string{"type=1,manufacturer=Vultr,product=VC2"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{vm.MetadataIP + ":80": answers(map[string]string{"/v1.json": fixture(t, "vultr", "v1_2.json")})}
			},
			macs: []string{"56:00:03:1b:4e:ca", "5a:00:03:1b:4e:ca"},
			// CLOUDINIT_2 is no valid host name: it is not applied.
			iid: "29bea708-2e6e-480a-90ad-0e6b5d5ad62f", host: "CLOUDINIT_2", etcHostname: "image-template",
			keys: []string{"ssh-rsa AAAAB3NzaC1y...IQQhv5PAOKaIl+mM3c= test3@key"},
			network: [][]string{
				{"MACAddress=56:00:03:1b:4e:ca", "DHCP=ipv4", "Address=2002:19f0:5:28a7::/64"},
				{"MACAddress=5a:00:03:1b:4e:ca", "Address=10.1.112.3/20"},
			},
			netNote: "yaml config with 2 interfaces",
			console: []string{`"CLOUDINIT_2"`},
		},
		{
			name: "upcloud", smbios: []string{"type=1,manufacturer=UpCloud,product=Cloud Server"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{vm.MetadataIP + ":80": answers(map[string]string{"/metadata/v1.json": fixture(t, "upcloud", "metadata-v1.json")})}
			},
			macs: []string{"3a:d6:ba:4a:36:e7", "3a:d6:ba:4a:84:cc", "3a:d6:ba:4a:63:e7", "3a:d6:ba:4a:8a:e1"},
			iid:  "00322b68-0096-4042-9406-faad61922128", host: "test.example.com",
			keys: []string{"ssh-rsa AAAAB.... test1@example.com", "ssh-rsa AAAAB.... test2@example.com"},
			network: [][]string{
				{"MACAddress=3a:d6:ba:4a:36:e7", "DHCP=ipv4", "Address=94.237.105.50/32"},
				{"MACAddress=3a:d6:ba:4a:84:cc", "DHCP=ipv4"},
				{"MACAddress=3a:d6:ba:4a:63:e7", "IPv6AcceptRA=yes"},
				{"MACAddress=3a:d6:ba:4a:8a:e1", "DHCP=ipv4"},
			},
			netNote:  "yaml config with 4 interfaces",
			userData: str("#cloud-config\nruncmd:\n- [touch, /root/cloud-init-worked ]\n"),
		},
		{
			name: "scaleway", smbios: []string{"type=1,manufacturer=Scaleway,product=SCW-DEV1-S"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{"169.254.42.42:80": scalewayAPI(fixture(t, "scaleway", "conf.json"))}
			},
			iid: "00000000-0000-0000-0000-000000000000", host: "scaleway.host",
			keys:    []string{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABA", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABCCCCC", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABDDDDD"},
			console: []string{"metadata (http://169.254.42.42)"},
		},
		{
			name: "akamai", smbios: []string{"type=1,manufacturer=Linode,product=Compute Instance"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{vm.MetadataIP + ":80": linodeService(fixture(t, "linode", "instance.json"), fixture(t, "linode", "network.json"), "#cloud-config\nhostname: linode\n")}
			},
			// The instance document has no host name; keys come in
			// user-data.
			iid: "1", host: "", etcHostname: "linode", keys: nil,
			userData: str("#cloud-config\nhostname: linode\n"),
		},
		{
			name: "cloudstack", smbios: []string{"type=1,manufacturer=Apache Software Foundation,product=CloudStack KVM Hypervisor"},
			serve: func(t *testing.T) map[string]http.Handler {
				// The virtual router is the DHCP server.
				return map[string]http.Handler{vm.RouterIP + ":80": cloudStackRouter(), vm.RouterIP + ":8080": csPW}
			},
			iid: "8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11", host: "VM-8ba7d1ac-5c1e-4b61-9c1b-0e1a3f7a2b11", etcHostname: "cs",
			keys:     []string{"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host"},
			userData: str("#cloud-config\nhostname: cs\n"),
			check: func(t *testing.T, root, console string) {
				passwordKept(t, root, console, "SekritSquirrel", csPW)
			},
		},
		{
			name: "exoscale", smbios: []string{"type=1,manufacturer=Exoscale,product=Exoscale Compute Platform"},
			serve: func(t *testing.T) map[string]http.Handler {
				return map[string]http.Handler{
					vm.MetadataIP + ":80": answers(map[string]string{
						"/1.0/meta-data/":               "instance-id\nlocal-hostname",
						"/1.0/meta-data/instance-id":    "12345",
						"/1.0/meta-data/local-hostname": "myname",
						"/1.0/user-data":                "#cloud-config",
					}),
					vm.MetadataIP + ":8080": exoPW,
				}
			},
			iid: "12345", host: "myname",
			userData: str("#cloud-config"),
			check: func(t *testing.T, root, console string) {
				passwordKept(t, root, console, "p@ssw0rd", exoPW)
			},
		},
		{
			// OpenNebula's VMs are plain KVM ones: its context disk is
			// found by its label.
			name: "opennebula",
			drive: func(t *testing.T) vm.Disk {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "context.sh"), []byte(fixture(t, "opennebula", "context.sh")), 0o644); err != nil {
					t.Fatal(err)
				}
				return isoOf(t, dir, "CONTEXT")
			},
			macs: []string{"02:00:c0:a8:96:64", "02:00:0a:00:00:07"},
			iid:  "iid-dsopennebula", host: "one-vm-42",
			keys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOq user@laptop", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 other@host"},
			network: [][]string{
				{"MACAddress=02:00:c0:a8:96:64", "Address=192.168.150.100/24", "Gateway=192.168.150.1"},
				{"MACAddress=02:00:0a:00:00:07", "Address=10.0.0.7/16", "MTUBytes=9000", "Address=2001:db8:1:0:400:c0ff:fea8:1ba/48"},
			},
			netNote:  "yaml config with 2 interfaces",
			userData: str("#cloud-config\nruncmd:\n  - [touch, /root/one]\n"),
		},
		{
			// The OVF environment on its ISO (vSphere's "ISO image"
			// transport, or any hypervisor deploying an OVF): read by its
			// label on any platform, here a plain QEMU one.
			name: "ovf",
			drive: func(t *testing.T) vm.Disk {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "ovf-env.xml"), []byte(fixture(t, "ovf", "ovfenv/vsphere-guestinfo.xml")), 0o644); err != nil {
					t.Fatal(err)
				}
				return isoOf(t, dir, "OVF ENV")
			},
			macs: []string{"00:50:56:aa:bb:01"},
			iid:  "id-ovf-1042", host: "ovfguest",
			keys:     []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOVF ovf@key"},
			network:  [][]string{{"Name=ens192", "MACAddress=00:50:56:aa:bb:01", "Address=192.0.2.44/24", "Gateway=192.0.2.1", "DNS=192.0.2.53"}},
			netNote:  "yaml config with 1 interfaces",
			userData: str("#cloud-config\nruncmd:\n  - [touch, /root/ovf-ran]\n"),
			console:  []string{"config-disk (/dev/sr0)"},
			check: func(t *testing.T, root, console string) {
				ovfPasswordKept(t, root, console, "id-ovf-1042", "Pa55word!", "password: Pa55word!")
			},
		},
		{
			// CloudStack's config drive with its cloudstack/ tree alone,
			// on vfat: configdrive (first, same label) refuses it,
			// cloudstack reads it.
			name: "cloudstack-configdrive", source: "cloudstack",
			drive: func(t *testing.T) vm.Disk {
				dir := t.TempDir()
				if err := os.CopyFS(filepath.Join(dir, "cloudstack"), os.DirFS(filepath.Join(cloudStackDrive, "cloudstack"))); err != nil {
					t.Fatal(err)
				}
				img := filepath.Join(t.TempDir(), "cs.img")
				if err := vm.VFAT(img, dir, "CONFIG-2", 16); err != nil {
					t.Fatal(err)
				}
				return vm.Disk{Path: img}
			},
			iid: "8b0d6b1a-4d8c-4f33-a1d2-3c6e5f7a9b01", host: "web-01",
			keys:     []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICsDrive cs@key"},
			userData: str("#cloud-config\nruncmd:\n  - [touch, /root/cs-drive]\n"),
			console:  []string{"config-disk (/dev/vdb)"},
			check: func(t *testing.T, root, console string) {
				csDrivePassword(t, root, console, true)
			},
		},
	}
}

// cloudStackDrive is the cloudstack source's recorded config drive: the
// cloudstack/ and openstack/ trees CloudStack's ConfigDriveBuilder writes.
var cloudStackDrive = filepath.Join(dsTestdata, "cloudstack", "testdata", "configdrive")

// csDrivePassword: the drive's vm_password.txt is the instance's admin
// password in the sensitive instance data only (read), or nowhere (not
// read: configdrive does not read it).
func csDrivePassword(t *testing.T, root, console string, read bool) {
	t.Helper()
	const pw = "Xk9mPq2w"
	if strings.Contains(console, pw) || strings.Contains(catRoot(t, root, "/seen/run-earlyinit/instance-data.json"), pw) {
		t.Errorf("the password is on the console or in instance-data.json")
	}
	if got := strings.Contains(catRoot(t, root, "/seen/run-earlyinit/instance-data-sensitive.json"), pw); got != read {
		t.Errorf("the password in instance-data-sensitive.json: %v, want %v", got, read)
	}
}

// ovfPasswordKept: the password an OVF environment or a customization
// gives is in the instance's vendor-data (0600), for the late stage, and
// nowhere readable: not on the console, not in instance-data.json.
func ovfPasswordKept(t *testing.T, root, console, iid, pw, vendorLine string) {
	t.Helper()
	vd := "/var/lib/earlyinit/instances/" + iid + "/vendor-data.txt"
	mustContain(t, vd, catRoot(t, root, vd), "#cloud-config\n", vendorLine)
	wantMode(t, root, vd, "0600")
	if strings.Contains(console, pw) || strings.Contains(catRoot(t, root, "/seen/run-earlyinit/instance-data.json"), pw) {
		t.Errorf("the password is on the console or in instance-data.json")
	}
}

// notBooted are the sources QEMU cannot play the platform of, and why;
// their unit tests cover them.
var notBooted = map[string]string{
	"vmware": "guestinfo travels over VMware's backdoor RPC channel, which QEMU's vmport device does not carry: TestPlatformsVMwareGuestinfo boots it with a stand-in vmware-rpctool in the image",
}

// TestPlatformsCoverRegistry: every source discovery knows has its
// platform boot, and every boot's source is one discovery knows.
func TestPlatformsCoverRegistry(t *testing.T) {
	booted := map[string]bool{}
	for _, pc := range platformCases() {
		booted[pc.sourceName()] = true
	}
	known := map[string]bool{}
	for _, s := range discover.Sources {
		known[s.Name] = true
		if why, ok := notBooted[s.Name]; ok {
			if booted[s.Name] {
				t.Errorf("datasource %s is booted and listed in notBooted", s.Name)
			}
			t.Logf("%s: no platform boot: %s", s.Name, why)
			continue
		}
		if !booted[s.Name] {
			t.Errorf("datasource %s (internal/discover/sources.go) has no platform boot in platformCases", s.Name)
		}
	}
	for name := range booted {
		if !known[name] {
			t.Errorf("platform boot %s: no such datasource in discover.Sources", name)
		}
	}
}

func (pc platformCase) sourceName() string {
	if pc.source != "" {
		return pc.source
	}
	return pc.name
}

func TestPlatforms(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	known := map[string]bool{}
	for _, s := range discover.Sources {
		known[s.Name] = true
	}
	for _, pc := range platformCases() {
		t.Run(pc.name, func(t *testing.T) {
			if !known[pc.sourceName()] {
				t.Fatalf("datasource %s is not in discover.Sources (internal/discover/sources.go): discovery would never try it", pc.sourceName())
			}
			parallel(t)
			bootPlatform(t, pc)
		})
	}
}

// bootPlatform boots pc's platform and checks what it left in the root.
func bootPlatform(t *testing.T, pc platformCase) {
	src := pc.sourceName()
	root := rootWith(t, systemdMarkers)
	cfg := vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: root}}, RNG: true, SMBIOS: pc.smbios}
	var ns *vm.NetNS
	if pc.serve != nil {
		ns = metadataNS(t, true, nil)
		for addr, h := range pc.serve(t) {
			if err := ns.ServeAt(addr, h); err != nil {
				t.Fatal(err)
			}
		}
		cfg.Wrap = ns.Wrap()
	}
	if pc.drive != nil {
		cfg.Disks = append(cfg.Disks, pc.drive(t))
	}
	macs := pc.macs
	if len(macs) == 0 {
		macs = []string{macA}
	}
	for i, m := range macs {
		nic := vm.NIC{MAC: m}
		if i == 0 && ns != nil {
			nic.Netdev = "tap:" + ns.Tap
		}
		cfg.NICs = append(cfg.NICs, nic)
	}
	res := boot(t, cfg)
	con := res.Console
	mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", fmt.Sprintf("datasource %s: instance %q, hostname %q", src, pc.iid, pc.host))
	mustContain(t, "console", con, pc.console...)
	line := decisionLine(t, con)
	if pc.serve != nil {
		// Recognised by its DMI strings, not asked for.
		if !regexp.MustCompile(`^datasource: (.*; )?platform ([a-z]+, )*` + regexp.QuoteMeta(src) + `\b`).MatchString(line) {
			t.Errorf("the decision line does not recognise %s: %s", src, line)
		}
		mustContain(t, "console", con, "metadata: DHCP lease 10.77.0.")
		noLeftovers(t, root)
	}
	platformIdentity(t, root, pc.iid, pc.host, pc.etcHostname)
	checkKeys(t, root, pc.keys)
	if pc.userData != nil {
		wantFile(t, root, "/var/lib/earlyinit/instances/"+pc.iid+"/user-data.txt", *pc.userData)
	}
	units := networkdUnits(t, root)
	if pc.netNote != "" {
		mustContain(t, "console", con, "network: "+pc.netNote)
	} else {
		mustContain(t, "console", con, "network: fallback config, DHCP on eth0")
	}
	checkUnits(t, units, pc.network)
	if pc.check != nil {
		pc.check(t, root, con)
	}
}

// platformIdentity asserts what every datasource leaves in the root, as
// checkIdentity does, for a host name that user-data changed or the
// platform did not give (etcHostname), and an instance id too long for a
// fast symlink.
func platformIdentity(t *testing.T, img, iid, host, etcHostname string) {
	t.Helper()
	wantFile(t, img, "/var/lib/earlyinit/data/instance-id", iid+"\n")
	_, short, err := instance.Hostnames(host)
	if etcHostname == "" {
		etcHostname = short
	}
	wantFile(t, img, "/etc/hostname", etcHostname+"\n")
	hosts := catRoot(t, img, "/etc/hosts")
	mustContain(t, "/etc/hosts", hosts, "127.0.0.1\tlocalhost\n")
	// The initramfs writes the instance's own name; the late stage leaves
	// /etc/hosts alone (manage_etc_hosts is off).
	if host != "" && err == nil && !regexp.MustCompile(`(?m)^127\.0\.1\.1\s.*\b`+regexp.QuoteMeta(short)+`$`).MatchString(hosts) {
		t.Errorf("/etc/hosts has no 127.0.1.1 line for %s:\n%s", short, hosts)
	}
	if got, want := linkTarget(t, img, "/var/lib/earlyinit/instance"), "instances/"+strings.ReplaceAll(iid, "/", "_"); got != want {
		t.Errorf("/var/lib/earlyinit/instance -> %q, want %q", got, want)
	}
	wantMode(t, img, "/var/lib/earlyinit/instances/"+strings.ReplaceAll(iid, "/", "_")+"/user-data.txt", "0600")
	ls := catRoot(t, img, "/seen/run-earlyinit.ls")
	if !regexp.MustCompile(`-rw-------\s+1 0\s+0 .* instance-data-sensitive.json`).MatchString(ls) ||
		!regexp.MustCompile(`-rw-r--r--\s+1 0\s+0 .* instance-data.json`).MatchString(ls) {
		t.Errorf("instance-data files in /run/earlyinit:\n%s", ls)
	}
	mustContain(t, "instance-data.json", catRoot(t, img, "/seen/run-earlyinit/instance-data.json"), `"instance_id": "`+iid+`"`)
}

// linkTarget is the target of the symlink at path in the root image: a
// fast symlink's from debugfs stat, a longer one's from its block.
func linkTarget(t *testing.T, img, path string) string {
	t.Helper()
	st, err := vm.Stat(img, path)
	if err != nil || !strings.Contains(st, "Type: symlink") {
		t.Fatalf("%s: not a symlink: %v\n%s", path, err, st)
	}
	if m := regexp.MustCompile(`Fast link dest: "(.*)"`).FindStringSubmatch(st); m != nil {
		return m[1]
	}
	return catRoot(t, img, path)
}

// decisionLine is discovery's one line saying what it tries and why.
func decisionLine(t *testing.T, console string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)datasource: [^\n]*\([^\n]*\): (drives and seeds only: |drives and seeds, [^\n]*'s seed over the network: )?(trying [^\n]*|nothing to try)\r?$`).FindString(console)
	if m == "" {
		t.Fatalf("no decision line on the console")
	}
	return strings.TrimRight(m, "\r")
}

// checkKeys asserts the instance data lists want as its public keys, no
// more, no fewer (blanks inside a key compared as one).
func checkKeys(t *testing.T, root string, want []string) {
	t.Helper()
	var doc struct {
		V1 struct {
			Keys []string `json:"public_ssh_keys"`
		} `json:"v1"`
	}
	data := catRoot(t, root, "/seen/run-earlyinit/instance-data.json")
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("instance-data.json: %v", err)
	}
	norm := func(keys []string) []string {
		set := map[string]bool{}
		for _, k := range keys {
			set[strings.Join(strings.Fields(k), " ")] = true
		}
		var out []string
		for k := range set {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	if got, w := norm(doc.V1.Keys), norm(want); strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("instance-data.json public_ssh_keys = %q, want %q", got, w)
	}
}

// networkdUnits returns the files under /etc/systemd/network in the root
// image, by name.
func networkdUnits(t *testing.T, img string) map[string]string {
	t.Helper()
	out, err := exec.Command("debugfs", "-R", "ls -p /etc/systemd/network", img).CombinedOutput()
	units := map[string]string{}
	if err != nil || strings.Contains(string(out), "File not found") {
		return units
	}
	// ls -p: /inode/mode/uid/gid/name/size/
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(l, "/")
		if len(f) < 7 || !strings.HasPrefix(f[2], "10") || f[5] == "." || f[5] == ".." {
			continue
		}
		units[f[5]] = catRoot(t, img, "/etc/systemd/network/"+f[5])
	}
	return units
}

// checkUnits asserts that for each group of want, one .network unit holds
// every line of it.
func checkUnits(t *testing.T, units map[string]string, want [][]string) {
	t.Helper()
	for _, group := range want {
		found := false
		for name, text := range units {
			if !strings.HasSuffix(name, ".network") {
				continue
			}
			lines := map[string]bool{}
			for _, l := range strings.Split(text, "\n") {
				lines[strings.TrimSpace(l)] = true
			}
			all := true
			for _, w := range group {
				if !lines[w] {
					all = false
					break
				}
			}
			if all {
				found = true
				break
			}
		}
		if !found {
			var dump strings.Builder
			for name, text := range units {
				fmt.Fprintf(&dump, "--- %s\n%s", name, text)
			}
			t.Errorf("no networkd unit holds all of %q; units:\n%s", group, dump.String())
		}
	}
}

// bootTimes are the figures of earlyinit's "time:" line.
type bootTimes struct {
	total, modules, devices, metadata, own time.Duration
}

func parseBootTimes(t *testing.T, console string) bootTimes {
	t.Helper()
	m := regexp.MustCompile(`time: total (\S+), module loading (\S+), device waits (\S+), metadata service (\S+), earlyinit's own (\S+)`).FindStringSubmatch(console)
	if m == nil {
		t.Fatalf("no time: line on the console")
	}
	var d [5]time.Duration
	for i := range d {
		v, err := time.ParseDuration(strings.TrimRight(m[i+1], ",\r"))
		if err != nil {
			t.Fatalf("time: line %q: %v", m[0], err)
		}
		d[i] = v
	}
	return bootTimes{d[0], d[1], d[2], d[3], d[4]}
}

// TestPlatformsNoDatasource: a plain QEMU VM with no datasource, its NIC
// with link (a tap in a namespace with a DHCP server and no metadata
// service) or without (no backend), is recognised as no platform, tries
// drives and seeds only, never asks for a lease, falls back to None, and
// polls for drives only for the drive grace (discover.DriveGrace), not
// for earlyinit.timeout. The times are logged as figures, not asserted.
func TestPlatformsNoDatasource(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	for _, link := range []bool{true, false} {
		name := "link"
		if !link {
			name = "no-link"
		}
		t.Run(name, func(t *testing.T) {
			parallel(t)
			root := busyboxDisk(t, "root", "")
			cfg := vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}}, RNG: true, NICs: []vm.NIC{{MAC: macA}}}
			var ns *vm.NetNS
			if link {
				ns = metadataNS(t, true, nil)
				cfg.NICs[0].Netdev = "tap:" + ns.Tap
				cfg.Wrap = ns.Wrap()
			}
			res := boot(t, cfg)
			con := res.Console
			mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", "falling back to None")
			line := decisionLine(t, con)
			if !strings.HasPrefix(line, "datasource: no platform recognised (") || !strings.Contains(line, "drives and seeds only: ") {
				t.Errorf("decision line: %s", line)
			}
			for _, no := range []string{"DHCP lease", "metadata: "} {
				if strings.Contains(con, no) {
					t.Errorf("the console says %q: the network was tried", no)
				}
			}
			if ns != nil && strings.Contains(ns.DHCPLog(), "DHCPDISCOVER") {
				t.Errorf("the DHCP server saw a DISCOVER:\n%s", ns.DHCPLog())
			}
			wantFile(t, root, "/var/lib/earlyinit/data/instance-id", "iid-datasource-none\n")
			bt := parseBootTimes(t, con)
			t.Logf("%s: earlyinit total %s, module loading %s, device waits %s, metadata service %s, own %s (VM %s, %s)",
				name, bt.total, bt.modules, bt.devices, bt.metadata, bt.own, res.Duration.Round(time.Millisecond), res.Accel)
			// The console shows the log line more than once (kmsg and the
			// log's dump): every copy must name the grace as the bound.
			polls := regexp.MustCompile(`no config drive after \S+ \(polled up to (\S+)\)`).FindAllStringSubmatch(con, -1)
			if len(polls) == 0 {
				t.Errorf("no drive poll on the console")
			}
			for _, p := range polls {
				if p[1] != discover.DriveGrace.String() {
					t.Errorf("%q: the drive poll's bound is not the drive grace %s", p[0], discover.DriveGrace)
				}
			}
		})
	}
}

// TestPlatformsDigitalOceanNoDHCP: a droplet whose network has no DHCP
// server reads its metadata from 169.254.169.254 over an IPv4 link-local
// address of its own (169.254.A.B/16, as cloud-init does), and takes it
// away again before the handoff.
func TestPlatformsDigitalOceanNoDHCP(t *testing.T) {
	parallel(t, time.Minute)
	ns := metadataNS(t, false, nil)
	if err := ns.RouteLinkLocal4(); err != nil {
		t.Fatal(err)
	}
	if err := ns.ServeAt(vm.MetadataIP+":80", answers(map[string]string{"/metadata/v1.json": fixture(t, "digitalocean", "metadata-v1.json")})); err != nil {
		t.Fatal(err)
	}
	root := rootWith(t, systemdMarkers)
	res := boot(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: root}}, RNG: true,
		NICs: []vm.NIC{{MAC: "04:01:57:d1:9e:01", Netdev: "tap:" + ns.Tap}}, Wrap: ns.Wrap(),
		SMBIOS: []string{"type=1,manufacturer=DigitalOcean,product=Droplet,serial=22532410"}})
	con := res.Console
	mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", "metadata: no DHCP lease on ", `datasource digitalocean: instance "22532410", hostname "utl-96268"`)
	if !regexp.MustCompile(`metadata: 169\.254\.([1-9]|[1-9][0-9]|1[0-6][0-9])\.[0-9]+/16 on \S+ for IPv4 link-local metadata`).MatchString(con) {
		t.Errorf("no IPv4 link-local address on the console")
	}
	platformIdentity(t, root, "22532410", "utl-96268", "")
	checkKeys(t, root, []string{"ssh-rsa AAAAB3NzaC1yc2EAAAA... test@do.co"})
	noLeftovers(t, root)
}

// TestPlatformsNoCloudDMISerial: NoCloud's words in the SMBIOS system
// serial, as cloud-init reads them, with an http:// seed read over the
// temporary network; h= and i= win over the seed's meta-data.
func TestPlatformsNoCloudDMISerial(t *testing.T) {
	parallel(t)
	ns := metadataNS(t, true, nil)
	if err := ns.ServeAt(vm.RouterIP+":8000", answers(map[string]string{
		"/seed/meta-data": fixture(t, "nocloud", "cidata/meta-data"),
		"/seed/user-data": fixture(t, "nocloud", "cidata/user-data"),
	})); err != nil {
		t.Fatal(err)
	}
	root := busyboxDisk(t, "root", "")
	res := boot(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: root}}, RNG: true,
		NICs: []vm.NIC{{MAC: macA, Netdev: "tap:" + ns.Tap}}, Wrap: ns.Wrap(),
		SMBIOS: []string{"type=1,serial=ds=nocloud;s=http://" + vm.RouterIP + ":8000/seed/;h=dmihost;i=iid-dmi"}})
	con := res.Console
	mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", `datasource nocloud: instance "iid-dmi", hostname "dmihost"`, "metadata: DHCP lease 10.77.0.")
	mustContain(t, "decision line", decisionLine(t, con), "nocloud asked for by DMI product_serial", "drives and seeds, nocloud's seed over the network: ")
	checkIdentity(t, root, "iid-dmi", "dmihost")
	checkKeys(t, root, []string{fixtureAliceKey, fixtureBobKey})
	wantFile(t, root, "/var/lib/earlyinit/instances/iid-dmi/user-data.txt", fixture(t, "nocloud", "cidata/user-data"))
	noLeftovers(t, root)
}

// TestPlatformsVMwareGuestinfo: a VMware VM (its DMI) whose image has
// open-vm-tools: earlyinit runs the image's vmware-rpctool chrooted in
// the real root, as its initramfs has none. QEMU cannot carry guestinfo
// (its vmport device has no RPCI channel), so the tool is a stand-in that
// answers from files, as the metadata boots' servers stand in for their
// services; it records the keys earlyinit clears (redact).
func TestPlatformsVMwareGuestinfo(t *testing.T) {
	parallel(t)
	meta := "instance-id: vmw-0123\nlocal-hostname: vmw-host\npublic-keys-data: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIVMware vmw@key\nredact: [userdata]\n" +
		"network:\n  version: 2\n  ethernets:\n    nic0:\n      match: {macaddress: \"00:50:56:aa:bb:01\"}\n      set-name: ens192\n      addresses: [192.0.2.77/24]\n"
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"guestinfo/metadata":          base64.StdEncoding.EncodeToString([]byte(meta)),
		"guestinfo/metadata.encoding": "base64",
		"guestinfo/userdata":          "#cloud-config\nruncmd: [touch /run/vmw]\n",
		"opt/vmware/bin/vmware-rpctool": `#!/bin/sh
case "$1" in
"info-get guestinfo."*)
	f="/guestinfo/${1#info-get guestinfo.}"
	if [ -f "$f" ]; then cat "$f"; else echo "No value found" >&2; exit 1; fi ;;
"info-set guestinfo."*)
	kv="${1#info-set guestinfo.}"
	printf '%s' "${kv#* }" > "/guestinfo/${kv%% *}" ;;
*) echo "Unknown command" >&2; exit 1 ;;
esac
`,
	}
	for k, v := range systemdMarkers {
		files[k] = v
	}
	if err := vm.WriteTree(dir, files); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "opt/vmware/bin/vmware-rpctool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/opt/vmware/bin/vmware-rpctool", filepath.Join(dir, "usr/bin/vmware-rpctool")); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(root, dir, "root", "", 32); err != nil {
		t.Fatal(err)
	}
	res := boot(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: root}}, RNG: true,
		NICs:   []vm.NIC{{MAC: "00:50:56:aa:bb:01"}},
		SMBIOS: []string{"type=1,manufacturer=VMware,, Inc.,product=VMware7,,1,uuid=4226d1a4-7c3d-3f9e-8e0a-0123456789ab"}})
	con := res.Console
	mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", `datasource vmware: instance "vmw-0123", hostname "vmw-host"`)
	if line := decisionLine(t, con); !strings.Contains(line, "platform vmware") {
		t.Errorf("decision line: %s", line)
	}
	// guestinfo needs no network: no lease was asked for.
	if strings.Contains(con, "metadata: ") {
		t.Errorf("the temporary network was raised for guestinfo")
	}
	platformIdentity(t, root, "vmw-0123", "vmw-host", "")
	checkKeys(t, root, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIVMware vmw@key"})
	// The tools print a value without its final newline.
	wantFile(t, root, "/var/lib/earlyinit/instances/vmw-0123/user-data.txt", "#cloud-config\nruncmd: [touch /run/vmw]")
	// redact: the user-data key was cleared through the tool.
	wantFile(t, root, "/guestinfo/userdata", "---")
	checkUnits(t, networkdUnits(t, root), [][]string{{"MACAddress=00:50:56:aa:bb:01", "Address=192.0.2.77/24"}})
}

// vmwareStandIn is the image's open-vm-tools as the VMware boots play them
// (QEMU carries no guestinfo): vmware-rpctool answers guestinfo keys from
// /guestinfo, stores what is set there, answers VMware Tools' NIC
// connection queries as a host that connects them, and records every
// command in /guestinfo/rpc.log; vmware-toolbox-cmd answers tools.conf's
// deployPkg enable-custom-scripts from /guestinfo/enable-custom-scripts
// (exit 69, unavailable, without it).
var vmwareStandIn = map[string]string{
	"opt/vmware/bin/vmware-rpctool": `#!/bin/sh
echo "$1" >> /guestinfo/rpc.log
case "$1" in
"info-get guestinfo."*)
	f="/guestinfo/${1#info-get guestinfo.}"
	if [ -f "$f" ]; then cat "$f"; else echo "No value found" >&2; exit 1; fi ;;
"info-set guestinfo."*)
	kv="${1#info-set guestinfo.}"
	printf '%s' "${kv#* }" > "/guestinfo/${kv%% *}" ;;
"deployPkg.update.state 4 103 "*) echo queryNicsSupported ;;
"deployPkg.update.state 4 104 "*) echo connected ;;
"deployPkg.update.state "*) ;;
*) echo "Unknown command" >&2; exit 1 ;;
esac
`,
	"usr/bin/vmware-toolbox-cmd": `#!/bin/sh
echo "vmware-toolbox-cmd $*" >> /guestinfo/rpc.log
if [ "$1 $2" = "config get" ] && [ -f "/guestinfo/$4" ]; then echo "[$3] $4 = $(cat "/guestinfo/$4")"; exit 0; fi
exit 69
`,
	"guestinfo/rpc.log": "",
}

// vmwareRoot is a busybox root image with systemd's markers, the
// stand-in open-vm-tools and files.
func vmwareRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	withVMwareTools(t, dir, systemdMarkers, files)
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 32); err != nil {
		t.Fatal(err)
	}
	return img
}

// withVMwareTools writes the stand-in open-vm-tools (vmwareStandIn, its
// programs executable, vmware-rpctool reached through a link as packages
// install it) and files into the root tree dir.
func withVMwareTools(t *testing.T, dir string, files ...map[string]string) {
	t.Helper()
	all := maps.Clone(vmwareStandIn)
	for _, m := range files {
		maps.Copy(all, m)
	}
	if err := vm.WriteTree(dir, all); err != nil {
		t.Fatal(err)
	}
	for _, x := range []string{"opt/vmware/bin/vmware-rpctool", "usr/bin/vmware-toolbox-cmd"} {
		if err := os.Chmod(filepath.Join(dir, x), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/opt/vmware/bin/vmware-rpctool", filepath.Join(dir, "usr/bin/vmware-rpctool")); err != nil {
		t.Fatal(err)
	}
}

// custCfg is a vSphere customization's cust.cfg as vCenter writes it: the
// host, one NIC by MAC with a static address on 192.0.2.0/24, DNS, the
// marker, and the extra sections.
func custCfg(host, mac, ip, marker, extra string) string {
	return `[NETWORK]
NETWORKING = yes
BOOTPROTO = dhcp
HOSTNAME = ` + host + `
DOMAINNAME = example.com

[NIC-CONFIG]
NICS = NIC1

[NIC1]
MACADDR = ` + strings.ToUpper(mac) + `
PRIMARY = yes
ONBOOT = yes
IPv4_MODE = BACKWARDS_COMPATIBLE
BOOTPROTO = static
IPADDR = ` + ip + `
NETMASK = 255.255.255.0
GATEWAY = 192.0.2.1

[DNS]
DNSFROMDHCP=no
SUFFIX|1 = example.com
NAMESERVER|1 = 192.0.2.53
` + extra + `
[MISC]
MARKER-ID = ` + marker + `
POST-GC-STATUS = yes
`
}

const vmwareDMI = "type=1,manufacturer=VMware,, Inc.,product=VMware7,,1,uuid=4226d1a4-7c3d-3f9e-8e0a-0123456789ab"

// TestPlatformsVMwareOVFEnv: a VMware VM deployed from an OVF with
// vCenter's "VMware Tools" transport: the OVF environment is in
// guestinfo.ovfEnv, read with the image's vmware-rpctool run chrooted
// (the stand-in), without the network; the vmware source, which finds no
// guestinfo.metadata, is asked first. Nothing is reported to vCenter: an
// OVF environment has no status.
func TestPlatformsVMwareOVFEnv(t *testing.T) {
	parallel(t)
	root := vmwareRoot(t, map[string]string{"guestinfo/ovfEnv": fixture(t, "ovf", "ovfenv/vsphere-guestinfo.xml")})
	res := boot(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: root}}, RNG: true,
		NICs: []vm.NIC{{MAC: "00:50:56:aa:bb:01"}}, SMBIOS: []string{vmwareDMI}})
	con := res.Console
	mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", `datasource ovf: instance "id-ovf-1042", hostname "ovfguest" (ovf (com.vmware.guestInfo))`)
	if line := decisionLine(t, con); !strings.Contains(line, "platform vmware, ovf") {
		t.Errorf("decision line: %s", line)
	}
	if strings.Contains(con, "metadata: ") {
		t.Errorf("the temporary network was raised for guestinfo.ovfEnv")
	}
	platformIdentity(t, root, "id-ovf-1042", "ovfguest", "")
	checkKeys(t, root, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOVF ovf@key"})
	wantFile(t, root, "/var/lib/earlyinit/instances/id-ovf-1042/user-data.txt", "#cloud-config\nruncmd:\n  - [touch, /root/ovf-ran]\n")
	checkUnits(t, networkdUnits(t, root), [][]string{{"Name=ens192", "MACAddress=00:50:56:aa:bb:01", "Address=192.0.2.44/24", "Gateway=192.0.2.1"}})
	ovfPasswordKept(t, root, con, "id-ovf-1042", "Pa55word!", "password: Pa55word!")
	rpc := catRoot(t, root, "/guestinfo/rpc.log")
	mustContain(t, "the stand-in's record", rpc, "info-get guestinfo.metadata\n", "info-get guestinfo.ovfEnv\n")
	if strings.Contains(rpc, "deployPkg") || strings.Contains(rpc, "gc.status") {
		t.Errorf("a status was reported for an OVF environment:\n%s", rpc)
	}
}

// TestPlatformsVMwareCustomization: a vSphere guest customization (IMC).
// What stands in for VMware Tools' deployPkg plugin is the package staged
// on the root's disk in /run/vmware-imc (cust.cfg, the custom script,
// post-customize-guest.sh, nics.txt), as the plugin leaves it, with the
// plugin's library present and the image allowing the customization
// (disable_vmware_customization: false); VMware Tools' configuration
// allows custom scripts. Checked: the host name, the static NIC by MAC,
// the pre-customization script run chrooted at boot, the post-
// customization script run by the final stage (and its marker gone), root's
// password in vendor-data only, the package removed, and what vCenter was
// told, in cloud-init's order.
func TestPlatformsVMwareCustomization(t *testing.T) {
	parallel(t)
	const marker = "5f1e7c2a-0b3d-4e8f-9a6b-7c5d4e3f2a1b"
	cust := custCfg("imc-host", "00:50:56:aa:bb:07", "192.0.2.60", marker, `
[PASSWORD]
-PASS = `+base64.StdEncoding.EncodeToString([]byte("Imc-Secr3t"))+`
RESET = no

[DATETIME]
TIMEZONE = Europe/Paris
UTC = yes

[CUSTOM-SCRIPT]
SCRIPT-NAME = customize.sh
`)
	root := vmwareRoot(t, map[string]string{
		"etc/cloud/cloud.cfg.d/99-vmware.cfg":                              "disable_vmware_customization: false\n",
		"usr/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so":        "stand-in",
		"guestinfo/enable-custom-scripts":                                  "true",
		"run/vmware-imc/cust.cfg":                                          cust,
		"run/vmware-imc/customize.sh":                                      "#!/bin/sh\r\necho \"customize $1\" >> /var/lib/customize.log\r\n",
		"run/vmware-imc/post-customize-guest.sh":                           "#!/bin/sh\n/root/.customization/customize.sh postcustomization\nrm -f /.guest-customization-post-reboot-pending\n",
		"run/vmware-imc/nics.txt":                                          "ethernet0\n",
		"var/lib/cloud/data/.markerfile-from-an-earlier-customization.txt": "",
	})
	res := boot(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20", Disks: []vm.Disk{{Path: root}}, RNG: true,
		NICs: []vm.NIC{{MAC: "00:50:56:aa:bb:07"}}, SMBIOS: []string{vmwareDMI}})
	con := res.Console
	mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", `datasource ovf: instance "iid-vmware-imc", hostname "imc-host.example.com" (ovf (vmware-tools))`)
	if strings.Contains(con, "metadata: ") {
		t.Errorf("the temporary network was raised for the customization")
	}
	platformIdentity(t, root, "iid-vmware-imc", "imc-host.example.com", "")
	checkUnits(t, networkdUnits(t, root), [][]string{{"MACAddress=00:50:56:aa:bb:07", "Address=192.0.2.60/24", "Gateway=192.0.2.1"}})
	// The pre-customization script ran at boot, chrooted, from its copy;
	// the post-customization one in the final stage's scripts_per_instance
	// (cloud-init's PostCustomScript: a per-instance script), which
	// removed the pending marker.
	wantFile(t, root, "/var/lib/customize.log", "customize precustomization\ncustomize postcustomization\n")
	wantMode(t, root, "/root/.customization/customize.sh", "0544")
	if s := catRoot(t, root, "/root/.customization/customize.sh"); strings.Contains(s, "\r") {
		t.Errorf("the script copy kept its CRs: %q", s)
	}
	// The post-customization half, for the final stage.
	wantFile(t, root, "/var/lib/earlyinit/scripts/per-instance/post-customize-guest.sh", "#!/bin/sh\n/root/.customization/customize.sh postcustomization\nrm -f /.guest-customization-post-reboot-pending\n")
	wantMode(t, root, "/var/lib/earlyinit/scripts/per-instance/post-customize-guest.sh", "0700")
	if _, err := vm.Stat(root, "/.guest-customization-post-reboot-pending"); err == nil {
		t.Errorf("/.guest-customization-post-reboot-pending is still there after the post-customization script")
	}
	wantFile(t, root, "/var/lib/cloud/data/.markerfile-"+marker+".txt", "")
	for _, gone := range []string{"/var/lib/cloud/data/.markerfile-from-an-earlier-customization.txt", "/run/vmware-imc"} {
		if _, err := vm.Stat(root, gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	ovfPasswordKept(t, root, con, "iid-vmware-imc", "Imc-Secr3t", "password: Imc-Secr3t")
	mustContain(t, "vendor-data", catRoot(t, root, "/var/lib/earlyinit/instances/iid-vmware-imc/vendor-data.txt"), "timezone: Europe/Paris", "name: root", "expire: false")
	const log = "/run/earlyinit/initramfs.log"
	rpc := catRoot(t, root, "/guestinfo/rpc.log")
	var reports []string
	for _, l := range strings.Split(rpc, "\n") {
		if strings.HasPrefix(l, "deployPkg.") || strings.HasPrefix(l, "info-set guestinfo.gc.status") || strings.HasPrefix(l, "vmware-toolbox-cmd") {
			reports = append(reports, l)
		}
	}
	want := []string{
		"info-set guestinfo.gc.status Started",
		"vmware-toolbox-cmd config get deployPkg enable-custom-scripts",
		"deployPkg.update.state 4 103 " + log + "@ethernet0",
		"deployPkg.update.state 4 104 " + log + "@ethernet0",
		"deployPkg.update.state 5 0 " + log,
		"info-set guestinfo.gc.status Successful",
	}
	if strings.Join(reports, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported to vCenter:\n%s\nwant:\n%s", strings.Join(reports, "\n"), strings.Join(want, "\n"))
	}
	wantFile(t, root, "/guestinfo/gc.status", "Successful")
}

// TestPlatformsCloudStackConfigDrive: the config drive CloudStack writes
// (cloudstack/ and openstack/ trees, ISO labelled config-2) on a CloudStack
// KVM VM. By default configdrive, first in the registry, reads its
// openstack/ tree as cloud-init 22.4 does: the same instance, host name,
// key and NIC, no password. With earlyinit.ds=cloudstack the cloudstack
// source reads its cloudstack/ tree: the password too (sensitive data
// only), and network_data.json's static NIC.
func TestPlatformsCloudStackConfigDrive(t *testing.T) {
	// Its boots are its subtests': it gives its slot to the first.
	parallel(t)
	for _, tc := range []struct {
		name, append, source string
		password             bool
	}{
		{"default", "", "configdrive", false},
		{"asked", " earlyinit.ds=cloudstack", "cloudstack", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			const iid, mac = "8b0d6b1a-4d8c-4f33-a1d2-3c6e5f7a9b01", "02:00:4c:4f:00:17"
			root := rootWith(t, systemdMarkers)
			res := boot(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=20" + tc.append, RNG: true,
				Disks:  []vm.Disk{{Path: root}, isoOf(t, cloudStackDrive, "config-2")},
				NICs:   []vm.NIC{{MAC: mac}},
				SMBIOS: []string{"type=1,manufacturer=Apache Software Foundation,product=CloudStack KVM Hypervisor"}})
			con := res.Console
			mustContain(t, "console", con, "TESTINIT: /sbin/init pid=1", fmt.Sprintf("datasource %s: instance %q, hostname %q (config-disk (/dev/sr0))", tc.source, iid, "web-01"))
			if strings.Contains(con, "DHCP lease") {
				t.Errorf("the temporary network was raised: the drive was there")
			}
			platformIdentity(t, root, iid, "web-01", "")
			checkKeys(t, root, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICsDrive cs@key"})
			wantFile(t, root, "/var/lib/earlyinit/instances/"+iid+"/user-data.txt", "#cloud-config\nruncmd:\n  - [touch, /root/cs-drive]\n")
			checkUnits(t, networkdUnits(t, root), [][]string{{"MACAddress=" + mac, "Address=10.1.1.23/24", "Gateway=10.1.1.1", "DNS=10.1.1.1"}})
			csDrivePassword(t, root, con, tc.password)
		})
	}
}
