package netcfg

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }
func ips(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, ip(s))
	}
	return out
}
func boolp(b bool) *bool { return &b }

// checkConfig fails t when got differs from want, showing both as JSON with
// the first differing line marked.
func checkConfig(t *testing.T, got, want *Config) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
	line := 0
	for line < len(gl) && line < len(wl) && gl[line] == wl[line] {
		line++
	}
	ctx := func(l []string) string {
		lo, hi := max(0, line-6), min(len(l), line+4)
		return strings.Join(l[lo:hi], "\n")
	}
	if string(g) == string(w) {
		// Same JSON, different Go values (nil vs empty slice or map).
		t.Fatalf("configs differ only in nil vs empty values:\n got %#v\nwant %#v", got, want)
	}
	t.Fatalf("config differs at line %d:\n--- got\n%s\n--- want\n%s\n--- full got\n%s", line+1, ctx(gl), ctx(wl), g)
}

// checkErr fails t unless err is non-nil and contains every want string.
func checkErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not contain %q", err, w)
		}
	}
}
