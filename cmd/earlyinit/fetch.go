package main

import (
	"context"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
)

// includeBound bounds one #include fetch, retries and redirects included.
const includeBound = 30 * time.Second

// fetchURL fetches an #include URL with the late stages' Getter
// (httpget.System: host names resolved, https verified against /'s CA
// bundle, and in the package's build the environment's proxy and
// redirects followed), bounded, with the body limited to user-data's 16 MiB.
func fetchURL(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, includeBound)
	defer cancel()
	return httpget.System("").Get(ctx, httpget.Request{URL: url, Limit: 16 << 20})
}
