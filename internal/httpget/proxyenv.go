//go:build !initrd

package httpget

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// proxySupport and redirectSupport say whether this build speaks through
// proxies and follows redirects (Getter.Proxy, Getter.Redirects): true
// here, false in the initramfs build (proxyenv_initrd.go), which leaves
// the code of both out.
const (
	proxySupport    = true
	redirectSupport = true
)

// ProxyFromEnvironment reads the proxy settings of the process's
// environment, now, as Python's requests reads them (and so cloud-init's
// url_helper, whose fetches the late stages' stand for):
//
//   - http_proxy for http URLs, https_proxy for https URLs, all_proxy for
//     either when that one is not set; each lowercase name first, then
//     its uppercase one (HTTP_PROXY, ...), as urllib's
//     getproxies_environment: a lowercase variable set but empty means no
//     proxy, whatever the uppercase one says;
//   - a value without "scheme://" is an http:// one; an http:// proxy with
//     user information gets Basic credentials; any other scheme (https://,
//     socks5://) fails the requests that would use it, naming the
//     variable;
//   - no_proxy (else NO_PROXY, when no_proxy is unset or empty) lists the
//     hosts reached without a proxy, as requests' should_bypass_proxies
//     and urllib's proxy_bypass_environment match them: see bypassProxy.
//
// It returns nil when no variable names a proxy.
func ProxyFromEnvironment() func(*url.URL) (*url.URL, error) {
	return proxyFromEnv(os.LookupEnv)
}

// envProxy is the proxy one variable names.
type envProxy struct {
	u   *url.URL
	err error
}

// proxyFromEnv is ProxyFromEnvironment over lookup (os.LookupEnv).
func proxyFromEnv(lookup func(string) (string, bool)) func(*url.URL) (*url.URL, error) {
	get := func(name string) (string, string) {
		if v, ok := lookup(name); ok {
			return name, v
		}
		name = strings.ToUpper(name)
		v, _ := lookup(name)
		return name, v
	}
	read := func(name string) *envProxy {
		name, v := get(name)
		if v == "" {
			return nil
		}
		u, err := parseProxyValue(v)
		if err != nil {
			return &envProxy{err: fmt.Errorf("%s: %w", name, err)}
		}
		return &envProxy{u: u}
	}
	byScheme := map[string]*envProxy{"http": read("http_proxy"), "https": read("https_proxy")}
	all := read("all_proxy")
	if byScheme["http"] == nil && byScheme["https"] == nil && all == nil {
		return nil
	}
	// requests' should_bypass_proxies: no_proxy, or NO_PROXY when that is
	// empty.
	no, _ := lookup("no_proxy")
	if no == "" {
		no, _ = lookup("NO_PROXY")
	}
	return func(u *url.URL) (*url.URL, error) {
		p := byScheme[strings.ToLower(u.Scheme)]
		if p == nil {
			p = all
		}
		if p == nil || bypassProxy(no, u) {
			return nil, nil
		}
		return p.u, p.err
	}
}

// parseProxyValue reads a proxy variable's value: an http:// URL, the
// scheme optional (requests' prepend_scheme_if_needed). Its errors never
// show the value, which may hold a password.
func parseProxyValue(v string) (*url.URL, error) {
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("not a URL")
	}
	if _, err := newProxyHop(u); err != nil {
		return nil, err
	}
	return u, nil
}

// bypassProxy tells whether a request for u goes without a proxy under
// no (no_proxy's value), as requests decides it: where requests asks both
// its own should_bypass_proxies and urllib's proxy_bypass_environment, it
// bypasses when either says so, and so does this.
//
//   - "*", the whole value, is every host;
//   - otherwise a comma-separated list, blanks ignored; each entry, its
//     leading dots dropped, matches a host that is it or ends in "." and
//     it, in any case: "example.com" and ".example.com" both match
//     example.com and www.example.com, not notexample.com. "*.example.com"
//     is no pattern (nor is it in requests);
//   - for a host name or IPv6 address whose URL has a port, the entry may
//     name it: "example.com:8080" matches http://example.com:8080/ only;
//   - for an IPv4 address, an entry may be a network,
//     "10.0.0.0/8" (prefix lengths 1 to 32), but not have a port.
func bypassProxy(no string, u *url.URL) bool {
	if no == "" {
		return false
	}
	if no == "*" {
		return true
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	v4 := err == nil && ip.Is4()
	withPort := ""
	if p := u.Port(); p != "" && !v4 {
		withPort = host + ":" + p
	}
	for _, e := range strings.Split(no, ",") {
		e = strings.TrimSpace(strings.ReplaceAll(e, " ", ""))
		if e == "" {
			continue
		}
		if v4 {
			if n, ok := ipv4Network(e); ok && n.Contains(ip) {
				return true
			}
		}
		name := strings.ToLower(strings.TrimLeft(e, "."))
		if name == "" {
			continue
		}
		for _, h := range []string{host, withPort} {
			if h != "" && (h == name || strings.HasSuffix(h, "."+name)) {
				return true
			}
		}
	}
	return false
}

// ipv4Network reads an entry as requests' is_valid_cidr does: an IPv4
// address, "/", a prefix length from 1 to 32.
func ipv4Network(e string) (netip.Prefix, bool) {
	a, bits, ok := strings.Cut(e, "/")
	if !ok {
		return netip.Prefix{}, false
	}
	n, err := strconv.Atoi(bits)
	ip, aerr := netip.ParseAddr(a)
	if err != nil || aerr != nil || !ip.Is4() || n < 1 || n > 32 {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(ip, n), true
}
