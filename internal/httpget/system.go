package httpget

import (
	"context"
	"net"
	"net/netip"
)

// System is the Getter of the late stages' fetches (#include URLs,
// phone_home, ssh_import_id), which reach the world as cloud-init's do
// through Python's requests, with the system's network stack: host names
// resolved by the system's resolver (/etc/resolv.conf, /etc/hosts); the
// proxy the environment names (ProxyFromEnvironment: http_proxy,
// https_proxy, all_proxy, no_proxy; never in the initramfs build);
// redirects followed, at most maxRedirects, never from https to http (not
// in the initramfs build either);
// https servers verified against the CA bundle of the root caRoot ("" is
// "/"). The caller sets its bounds (RequestTimeout, Retries) and Logf.
//
// The metadata clients do not use it: they ask link-local services by
// address, straight, and follow no redirect.
func System(caRoot string) *Getter {
	return &Getter{
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		CARoot:    caRoot,
		Proxy:     ProxyFromEnvironment(),
		Redirects: maxRedirects,
	}
}
