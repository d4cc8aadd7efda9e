package ec2

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

func FuzzParseListing(f *testing.F) {
	for _, s := range []string{
		"ami-id\ninstance-id\nplacement/\npublic-keys/\n",
		"0=my-key\n1=other=key\n", " a//\r\nsecurity-credentials/\nx=1\n+2=y\n", "", "\u2028a\x85b/\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, blob string) {
		leaves, children := parseListing(blob)
		seen := map[string]bool{}
		for _, c := range children {
			if c == "" || c == "security-credentials" || strings.HasSuffix(c, "/") || seen[c] {
				t.Fatalf("parseListing(%q): child %q", blob, c)
			}
			seen[c] = true
		}
		fields := map[string]bool{}
		for _, l := range leaves {
			if l.Resource == "" || fields[l.Field] || l.Field == "security-credentials" {
				t.Fatalf("parseListing(%q): leaf %+v", blob, l)
			}
			fields[l.Field] = true
		}
	})
}

func FuzzDecodeLeaf(f *testing.F) {
	for _, s := range []string{"", "i-1", "a\nb\n", `{"Code": "Success"}`, "{not json}", "\xff\xfe", " {\"a\": [1]} \n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v := decodeLeaf(b)
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("decodeLeaf(%q) = %#v: not JSON: %v", b, v, err)
		}
	})
}

// FuzzWalk serves the fuzz input as every directory listing and leaf of a
// tree: the walk ends, within its bounds, with a JSON tree or an error.
func FuzzWalk(f *testing.F) {
	for _, s := range []string{"instance-id\nplacement/", "a/\nb/", "0=k\n../x\n./\n%2e%2e/", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		requests := 0
		fetch := func(ctx context.Context, u string, limit int64) ([]byte, error) {
			requests++
			if strings.Contains(u, "/../") || strings.Contains(u, "/./") || strings.Contains(strings.TrimPrefix(u, "http://"), "//") {
				t.Fatalf("walked to %q", u)
			}
			if strings.HasSuffix(u, "/404") {
				return nil, &httpget.StatusError{Method: http.MethodGet, URL: u, Code: 404}
			}
			if int64(len(body)) > limit {
				return nil, &httpget.TooBigError{Method: http.MethodGet, URL: u, Limit: limit}
			}
			return []byte(body), nil
		}
		w := &walker{fetch: fetch, limit: 64, total: 4096, budget: 4096, requests: 300}
		tree, err := w.dir(context.Background(), "http://imds/latest/meta-data/", 0)
		if requests > 300 {
			t.Fatalf("%d requests", requests)
		}
		if err != nil {
			return
		}
		if _, err := json.Marshal(tree); err != nil {
			t.Fatalf("tree not JSON: %v", err)
		}
		if nw, ok := tree["network"].(map[string]any); ok {
			b, err := json.Marshal(nw)
			if err != nil {
				t.Fatalf("network/ not JSON: %v", err)
			}
			netcfg.Parse("ec2", b, nil)
		}
		fromMeta("http://imds/latest/meta-data/", tree)
	})
}
