package vm

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ServeTLS is ServeAt over HTTPS: h on addr inside the namespace, with
// the server certificate cert (a test CA's, naming addr's IP: see
// internal/httpget/httpgettest). A host that is not RouterIP or MetadataIP is
// added to the namespace's loopback, as ServeAt does.
func (n *NetNS) ServeTLS(addr string, cert tls.Certificate, h http.Handler) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve tls at %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || ip.To4() == nil {
		return fmt.Errorf("serve tls at %q: want an IPv4 address", addr)
	}
	if len(cert.Certificate) == 0 {
		return fmt.Errorf("serve tls at %s: no certificate", addr)
	}
	if host != RouterIP && host != MetadataIP && !n.extra[host] {
		if err := ipCmd("-n", n.Name, "addr", "add", host+"/32", "dev", "lo"); err != nil {
			return fmt.Errorf("serve tls at %s: %w", addr, err)
		}
		if n.extra == nil {
			n.extra = map[string]bool{}
		}
		n.extra[host] = true
	}
	l, err := n.listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve tls at %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	n.servers = append(n.servers, srv)
	go srv.ServeTLS(l, "", "")
	return nil
}
