package instance

import (
	"strings"
	"testing"
)

func TestHostnames(t *testing.T) {
	for _, tt := range []struct {
		in, fqdn, short, err string
	}{
		{in: "web-1", fqdn: "web-1", short: "web-1"},
		{in: "web-1.example.com", fqdn: "web-1.example.com", short: "web-1"},
		{in: "web-1.example.com.", fqdn: "web-1.example.com", short: "web-1"},
		{in: "192.168.1.20", fqdn: "ip-192-168-1-20", short: "ip-192-168-1-20"},
		{in: "Host-A.lan", fqdn: "Host-A.lan", short: "Host-A"},
		{in: "Host_A.lan", err: "invalid character '_'"},
		{in: "-rf", err: `starts or ends with "-"`},
		{in: "-F.example.com", err: `starts or ends with "-"`},
		{in: "web.-x.com", err: `starts or ends with "-"`},
		{in: "web-.x.com", err: `starts or ends with "-"`},
		{in: "a$(reboot)", err: "invalid character '$'"},
		{in: strings.Repeat("a", 63), fqdn: strings.Repeat("a", 63), short: strings.Repeat("a", 63)},
		{in: "", err: "label"},
		{in: "a..b", err: "label"},
		{in: "a b", err: "invalid character"},
		{in: "a\n127.0.0.1 evil", err: "invalid character"},
		{in: strings.Repeat("a", 64), err: "63"},
		{in: strings.Repeat("a.", 127) + "a", err: "253"},
	} {
		fqdn, short, err := Hostnames(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "local-hostname") {
				t.Errorf("Hostnames(%q) = %q %q %v, want error with %q", tt.in, fqdn, short, err, tt.err)
			}
			continue
		}
		if err != nil || fqdn != tt.fqdn || short != tt.short {
			t.Errorf("Hostnames(%q) = %q %q %v, want %q %q", tt.in, fqdn, short, err, tt.fqdn, tt.short)
		}
	}
}

func FuzzUpdateHosts(f *testing.F) {
	f.Add([]byte("127.0.0.1 localhost\n127.0.1.1 old\n"), "a.b", "a")
	f.Add([]byte(""), "a", "a")
	f.Add([]byte("127.0.1.1\n\n127.0.1.1 x y\r\nfoo"), "h.d", "h")
	f.Fuzz(func(t *testing.T, old []byte, fqdn, short string) {
		out := string(UpdateHosts(old, fqdn, short))
		line := "127.0.1.1\t" + fqdn
		if short != fqdn {
			line += " " + short
		}
		var others, ours []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if l == line {
				ours = append(ours, l)
			} else if f := strings.Fields(l); len(f) == 0 || f[0] != "127.0.1.1" {
				others = append(others, l)
			}
		}
		if len(ours) != 1 && !strings.ContainsAny(fqdn+short, "\n") {
			t.Fatalf("%d lines %q in %q", len(ours), line, out)
		}
		if len(old) == 0 || strings.ContainsAny(fqdn+short, "\n") {
			return
		}
		// Every other old line is kept, in order.
		var want []string
		for _, l := range strings.Split(strings.TrimSuffix(string(old), "\n"), "\n") {
			if f := strings.Fields(l); len(f) == 0 || f[0] != "127.0.1.1" {
				want = append(want, l)
			}
		}
		if strings.Join(want, "\n") != strings.Join(others, "\n") {
			t.Fatalf("other lines changed: %q -> %q", want, others)
		}
	})
}
