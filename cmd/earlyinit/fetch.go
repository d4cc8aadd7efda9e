package main

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/earlyinit/earlyinit/pkg/httpget"
)

// includeBound bounds one #include fetch, retries included.
const includeBound = 30 * time.Second

// fetchURL fetches an #include URL (plain HTTP, host names resolved),
// bounded, with the body limited to user-data's 16 MiB.
func fetchURL(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, includeBound)
	defer cancel()
	g := &httpget.Getter{Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}}
	return g.Get(ctx, httpget.Request{URL: url, Limit: 16 << 20})
}
