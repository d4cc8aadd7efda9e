package repos

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// wgKey stands for a WireGuard private key: no log line, output or error
// may show it.
const wgKey = "cGFzc3dvcmQtbm90LWEtcmVhbC1rZXktZm9yLXRlc3RzMA="

const wgConf = "[Interface]\nPrivateKey = " + wgKey + "\nAddress = 10.9.0.2/24\n"

func TestWireguard(t *testing.T) {
	iface := func(name, path string) string {
		return "    - name: " + name + "\n      config_path: " + path + "\n      content: |\n        [Interface]\n        PrivateKey = " + wgKey + "\n        Address = 10.9.0.2/24\n"
	}
	one := "wireguard:\n  interfaces:\n" + iface("wg0", "/etc/wireguard/wg0.conf")
	for _, tc := range []struct {
		name, cfg string
		tools     []string // executables in the root
		systemd   bool
		loaded    bool   // /proc/modules lists wireguard
		fail      string // a command that fails
		want      []string
		files     []string // written, with wgConf
		wantErr   string
	}{
		{"unset", "packages: []", nil, true, false, "", nil, nil, ""},
		{"one interface, probes", one + "  readinessprobe:\n    - ping -c1 10.9.0.1\n    - 'wg show wg0'\n", []string{"/usr/bin/wg"}, true, false, "",
			[]string{"modprobe wireguard", "systemctl enable wg-quick@wg0", "systemctl start wg-quick@wg0", "sh -c ping -c1 10.9.0.1", "sh -c wg show wg0"},
			[]string{"/etc/wireguard/wg0.conf"}, ""},
		{"module loaded, two interfaces", one + iface("wg1.x", "/etc/wireguard/wg1.conf"), []string{"/usr/bin/wg"}, true, true, "",
			[]string{"systemctl enable wg-quick@wg0", "systemctl start wg-quick@wg0", "systemctl enable wg-quick@wg1.x", "systemctl start wg-quick@wg1.x"},
			[]string{"/etc/wireguard/wg0.conf", "/etc/wireguard/wg1.conf"}, ""},
		{"no wg: installed", one, []string{"/usr/bin/apt-get"}, true, true, "",
			[]string{aptGet + " update", aptGet + " install wireguard-tools", "systemctl enable wg-quick@wg0", "systemctl start wg-quick@wg0"},
			[]string{"/etc/wireguard/wg0.conf"}, ""},
		{"no wg, no package manager", one, nil, true, true, "", nil, nil, "wireguard: no wg in the root, and installing it failed: no package manager"},
		{"modprobe fails", one, []string{"/usr/bin/wg"}, true, false, "modprobe", []string{"modprobe wireguard"}, nil, "wireguard: load the kernel module: run modprobe wireguard: exit status 1"},
		{"start fails", one, []string{"/usr/bin/wg"}, true, true, "systemctl",
			[]string{"systemctl enable wg-quick@wg0"}, []string{"/etc/wireguard/wg0.conf"}, "wireguard.interfaces.0: run systemctl enable wg-quick@wg0: exit status 1"},
		{"no systemd", one, []string{"/usr/bin/wg"}, false, true, "", nil, []string{"/etc/wireguard/wg0.conf"},
			"wireguard.interfaces.0: wg-quick@wg0: systemd is not running"},
		{"a probe fails, all run", one + "  readinessprobe: ['false one', 'true two']\n", []string{"/usr/bin/wg"}, true, true, "sh",
			[]string{"systemctl enable wg-quick@wg0", "systemctl start wg-quick@wg0", "sh -c false one", "sh -c true two"},
			[]string{"/etc/wireguard/wg0.conf"}, "wireguard.readinessprobe.0: run sh -c false one: exit status 1"},
		{"not a map", "wireguard: [wg0]", []string{"/usr/bin/wg"}, true, true, "", nil, nil, "wireguard: want a map, got a list"},
		{"no interfaces", "wireguard: {}", []string{"/usr/bin/wg"}, true, true, "", nil, nil, "wireguard.interfaces: want a list, got null"},
		{"bad entries: nothing done", "wireguard:\n  interfaces:\n" + iface("wg0", "/etc/wireguard/wg0.conf") +
			iface("a-name-far-too-long", "/etc/wireguard/x.conf") + iface("wg2", "etc/wg2.conf") +
			"    - {name: wg3, config_path: /etc/wireguard/wg3.conf, content: 42}\n    - {name: wg4, content: x}\n",
			[]string{"/usr/bin/wg"}, true, true, "", nil, nil,
			"wireguard.interfaces.1.name \"a-name-far-too-long\": want an interface name, 1 to 15 of A-Z a-z 0-9 _ = + . -\n" +
				"wireguard.interfaces.2.config_path \"etc/wg2.conf\": want an absolute file path without blanks\n" +
				"wireguard.interfaces.3.content: want a string, got a number\n" +
				"wireguard.interfaces.4.config_path: missing"},
		{"probe not a string", one + "  readinessprobe: [{a: b}]\n", []string{"/usr/bin/wg"}, true, true, "", nil, nil, "wireguard.readinessprobe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, tc.cfg)
			for _, p := range tc.tools {
				te.Write(p, "", 0o755)
			}
			if tc.systemd {
				te.Root.MkdirAll("/run/systemd/system", 0o755, 0, 0)
			}
			mods := "ext4 1040384 1 - Live 0x0\n"
			if tc.loaded {
				mods += "wireguard 102400 0 - Live 0x0\n"
			}
			te.Write("/proc/modules", mods, 0o444)
			if tc.fail != "" {
				te.Fake.Handlers[tc.fail] = func(c core.Cmd) ([]byte, error) {
					if c.Name == "sh" && strings.HasPrefix(c.Args[1], "true") {
						return nil, nil
					}
					return []byte("it failed\n"), coretest.ExitErr(1)
				}
			}
			err := te.RunFunc(Wireguard)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			te.WantCalls(tc.want...)
			for _, f := range tc.files {
				te.WantFile(f, wgConf, 0o600, 0, 0)
			}
			if len(tc.files) == 0 && te.Root.Exists("/etc/wireguard") {
				t.Errorf("/etc/wireguard made")
			}
			for what, s := range map[string]string{"log": te.LogBuf.String(), "output": te.OutBuf.String(), "error": errString(err)} {
				if strings.Contains(s, wgKey) {
					t.Errorf("the %s shows the private key:\n%s", what, s)
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestKernelOlder(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    bool
	}{
		{"6.1.0-56-amd64", false}, {"5.6.0", false}, {"5.5.19-x", true}, {"4.19.0-27-amd64", true},
		{"5.15rc1", false}, {"", false}, {"garbage", false},
	} {
		if got := core.KernelOlder(tc.release, 5, 6); got != tc.want {
			t.Errorf("kernelOlder(%q) = %v, want %v", tc.release, got, tc.want)
		}
	}
}
