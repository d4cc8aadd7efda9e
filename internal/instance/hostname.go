package instance

import (
	"fmt"
	"net/netip"
	"strings"
)

// Hostnames returns the fully qualified and short names for local-hostname
// name, as cloud-init derives them: the short name is the part before the
// first dot ("ip-a-b-c-d" for an IPv4 address); the fqdn is name without a
// trailing dot (the short name when name has no domain). Each label must be
// 1 to 63 letters, digits or "-", not starting or ending with "-" (RFC 1123,
// and systemd's hostname_is_valid), the whole at most 253 bytes: nothing
// else may reach /etc/hostname, /etc/hosts or hostname(1)'s command line.
// The late stage's hostname modules use it too.
func Hostnames(name string) (fqdn, short string, err error) {
	fqdn = strings.TrimSuffix(name, ".")
	if ip, err := netip.ParseAddr(fqdn); err == nil && ip.Is4() {
		fqdn = shortHostname(fqdn) // an IPv4 address has no domain
	}
	short = shortHostname(fqdn)
	bad := func(reason string) (string, string, error) {
		return "", "", fmt.Errorf("local-hostname %q: %s", name, reason)
	}
	if len(fqdn) > 253 {
		return bad("longer than 253 bytes")
	}
	for _, label := range strings.Split(fqdn, ".") {
		if label == "" || len(label) > 63 {
			return bad("a label is empty or longer than 63 bytes")
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return bad(fmt.Sprintf("invalid character %q", c))
			}
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return bad("a label starts or ends with \"-\"")
		}
	}
	return fqdn, short, nil
}

// shortHostname is the host name cloud-init derives from local-hostname:
// the part before the first dot, or "ip-10-0-0-1" for an IPv4 address.
func shortHostname(name string) string {
	if ip, err := netip.ParseAddr(name); err == nil && ip.Is4() {
		return "ip-" + strings.ReplaceAll(name, ".", "-")
	}
	short, _, _ := strings.Cut(name, ".")
	return short
}

// UpdateHosts returns /etc/hosts content old with a "127.0.1.1\t<fqdn>
// <short>" line (just the short name when fqdn is the same): the first
// 127.0.1.1 line is replaced, any later ones are dropped, and all other lines
// are kept as they were. Without a 127.0.1.1 line, it is appended; without
// any content, localhost lines are written first.
func UpdateHosts(old []byte, fqdn, short string) []byte {
	names := fqdn
	if short != fqdn {
		names += " " + short
	}
	line := "127.0.1.1\t" + names
	if len(old) == 0 {
		return []byte("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" + line + "\n")
	}
	text := string(old)
	trailing := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var out []string
	done := false
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "127.0.1.1" {
			if !done {
				out = append(out, line)
				done = true
			}
			continue
		}
		out = append(out, l)
	}
	if !done {
		out = append(out, line)
		trailing = true
	}
	s := strings.Join(out, "\n")
	if trailing {
		s += "\n"
	}
	return []byte(s)
}
