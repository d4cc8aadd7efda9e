package coretest

import "testing"

// ClearProxyEnv sets every proxy variable httpget.ProxyFromEnvironment
// reads to "" for the test (t.Setenv puts them back after it): set but
// empty, the lowercase ones mean no proxy whatever the machine has.
func ClearProxyEnv(t *testing.T) {
	for _, k := range []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"} {
		t.Setenv(k, "")
	}
}
