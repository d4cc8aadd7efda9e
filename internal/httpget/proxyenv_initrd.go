//go:build initrd

package httpget

import "net/url"

// redirectSupport says whether this build follows redirects: not the
// initramfs build, which stays the small client it was (some 12 KB less):
// its metadata clients follow none, and its late stages run only on roots
// without the package, where https, the usual target of a redirect, fails
// anyway. A 3xx answer is an error naming its Location.
const redirectSupport = false

// proxySupport says whether this build speaks through proxies: false in
// the initramfs build, whose Getters never use one: PID 1 has no proxy
// settings to read, and the metadata services it asks are link-local
// (169.254.169.254, fd00:ec2::254) or on the instance's own network. The
// late stages this build runs, on roots without the package, go without
// a proxy too; the package's /usr/bin/earlyinit has them (proxyenv.go).
const proxySupport = false

// ProxyFromEnvironment returns nil: this build has no proxy support.
func ProxyFromEnvironment() func(*url.URL) (*url.URL, error) { return nil }
