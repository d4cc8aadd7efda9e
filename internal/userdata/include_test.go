package userdata

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestIncludeURLs(t *testing.T) {
	got := IncludeURLs([]byte("#include http://a/1\r\nhttp://a/2\n# comment\n\n#include-once   http://a/3\nhttp://a/4\n#INCLUDE\n  http://a/5  \n"))
	want := []Include{
		{"http://a/1", false}, {"http://a/2", false}, {"http://a/3", true}, {"http://a/4", true}, {"http://a/5", false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("IncludeURLs:\n got %v\nwant %v", got, want)
	}
}

type fakeWeb struct {
	pages map[string]string
	calls []string
}

func (f *fakeWeb) get(_ context.Context, url string, once bool) ([]byte, error) {
	f.calls = append(f.calls, fmt.Sprintf("%s once=%v", url, once))
	p, ok := f.pages[url]
	if !ok {
		return nil, errors.New("404 Not Found")
	}
	return []byte(p), nil
}

func TestFetchIncludes(t *testing.T) {
	web := &fakeWeb{pages: map[string]string{
		"http://h/cc":     "#cloud-config\nb: 2\n",
		"http://h/nested": "#include http://h/script\n",
		"http://h/script": "#!/bin/sh\necho fetched\n",
		"http://h/mime":   "Content-Type: multipart/mixed; boundary=B\nMIME-Version: 1.0\n\n--B\nContent-Type: text/cloud-config\n\nc: 3\n--B--\n",
		"http://h/loop":   "#include http://h/loop\n",
		"http://h/junk":   "hello\n",
	}}
	raw := "Content-Type: multipart/mixed; boundary=X\nMIME-Version: 1.0\n\n" +
		"--X\nContent-Type: text/cloud-config\n\na: 1\n" +
		"--X\nContent-Type: text/x-include-url\n\nhttp://h/cc\n#include-once http://h/nested\nhttp://h/missing\nhttp://h/mime\nhttp://h/junk\n" +
		"--X\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho last\n--X--\n"
	parts, warns, err := Decode([]byte(raw))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Decode: %v %q", err, warns)
	}
	out, warns := FetchIncludes(context.Background(), parts, web.get, 2)
	sameParts(t, out, []got{
		{TypeCloudConfig, "part-001", "a: 1", ""},
		{TypeCloudConfig, "part-002", "#cloud-config\nb: 2\n", ""},
		{TypeShellScript, "part-003", "#!/bin/sh\necho fetched\n", ""},
		{TypeCloudConfig, "part-004", "c: 3", ""},
		{TypeShellScript, "part-005", "#!/bin/sh\necho last", ""},
	})
	wantCalls := []string{"http://h/cc once=false", "http://h/nested once=true", "http://h/script once=false",
		"http://h/missing once=true", "http://h/mime once=true", "http://h/junk once=true"}
	if !reflect.DeepEqual(web.calls, wantCalls) {
		t.Errorf("fetches:\n got %q\nwant %q", web.calls, wantCalls)
	}
	for _, w := range []string{"include http://h/missing: 404 Not Found", "include http://h/junk: part part-001: unhandled"} {
		if !hasWarning(warns, w) {
			t.Errorf("no warning %q in %q", w, warns)
		}
	}
	cfg, _ := MergeParts(out)
	if got := fmt.Sprint(cfg); got != "map[a:1 b:2 c:3]" {
		t.Errorf("merged %s", got)
	}

	// Depth: a self-include stops at maxDepth.
	web.calls = nil
	out, warns = FetchIncludes(context.Background(), []Part{{Type: TypeInclude, Content: []byte("http://h/loop")}}, web.get, 3)
	if len(out) != 0 || len(web.calls) != 3 || !hasWarning(warns, "nested deeper than 3") {
		t.Errorf("loop: %d parts, %d fetches, warnings %q", len(out), len(web.calls), warns)
	}
	// maxDepth 0 fetches nothing.
	web.calls = nil
	_, warns = FetchIncludes(context.Background(), []Part{{Type: TypeInclude, Content: []byte("http://h/cc")}}, web.get, 0)
	if len(web.calls) != 0 || !hasWarning(warns, "nested deeper than 0") {
		t.Errorf("maxDepth 0: fetches %q, warnings %q", web.calls, warns)
	}
	// The total is bounded.
	web.calls = nil
	many := strings.Repeat("http://h/cc\n", maxIncludes+5)
	out, warns = FetchIncludes(context.Background(), []Part{{Type: TypeInclude, Content: []byte(many)}}, web.get, 1)
	if len(web.calls) != maxIncludes || len(out) != maxIncludes || !hasWarning(warns, "more than 64 include URLs") {
		t.Errorf("many: %d fetches, %d parts, warnings %d", len(web.calls), len(out), len(warns))
	}
	// A cancelled context fetches nothing.
	web.calls = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, warns = FetchIncludes(ctx, []Part{{Type: TypeInclude, Content: []byte("http://h/cc")}}, web.get, 1)
	if len(web.calls) != 0 || !hasWarning(warns, "context canceled") {
		t.Errorf("cancelled: fetches %q, warnings %q", web.calls, warns)
	}
	// No includes: parts come back as they were, names kept.
	in := []Part{ccPart("", "a: 1", ""), {Type: TypeShellScript, Filename: "part-007", Content: []byte("#!")}}
	out, warns = FetchIncludes(context.Background(), in, web.get, 1)
	if len(out) != 2 || out[1].Filename != "part-007" || len(warns) != 0 {
		t.Errorf("no includes: %q %q", view(out), warns)
	}
}
