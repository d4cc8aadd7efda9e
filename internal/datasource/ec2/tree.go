package ec2

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
)

// Bounds on the meta-data tree, which a server could make endless. AWS's
// deepest path is about six levels and its tree a few hundred entries with
// many NICs.
const (
	maxTreeDepth    = 16
	maxTreeRequests = 2000
)

// entry is a leaf of a directory listing: its key in the tree and the path
// (relative to the directory) of its value.
type entry struct {
	Field, Resource string
}

// parseListing splits a meta-data directory listing as cloud-init's
// MetadataMaterializer does: one entry per line, trimmed; "name/" is a
// subdirectory; "N=name" (N an integer, as public-keys/ lists keys) is a
// leaf "name" whose value is at "N/openssh-key"; anything else is a leaf
// of that name. security-credentials is never listed, so never fetched.
// Subdirectories are returned in listing order without repeats; a leaf
// listed twice keeps its first place and its last resource.
func parseListing(blob string) (leaves []entry, children []string) {
	at := map[string]int{}
	for _, line := range splitLines(blob) {
		line = strings.TrimSpace(line)
		name := strings.TrimRight(line, "/")
		if line == "" || name == "" || name == "security-credentials" {
			continue
		}
		if strings.HasSuffix(line, "/") {
			if !contains(children, name) {
				children = append(children, name)
			}
			continue
		}
		res := name
		if ident, sub, ok := strings.Cut(line, "="); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(ident)); err == nil {
				res = fmt.Sprintf("%d/openssh-key", n)
				name = sub
			}
		}
		if i, ok := at[name]; ok {
			leaves[i].Resource = res
			continue
		}
		at[name] = len(leaves)
		leaves = append(leaves, entry{Field: name, Resource: res})
	}
	return leaves, children
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// splitLines is Python's str.splitlines.
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029':
		case '\r':
			out = append(out, s[start:i])
			i += n
			if i < len(s) && s[i] == '\n' {
				i++
			}
			start = i
			continue
		default:
			i += n
			continue
		}
		out = append(out, s[start:i])
		i += n
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// decodeLeaf turns a leaf's body into a JSON value as cloud-init's
// MetadataLeafDecoder does: "" when empty; the decoded value when it looks
// like a JSON object ({...}) and is one; a list of lines when it holds a
// newline; else the string. Bytes that are not UTF-8 are kept as a string
// (cloud-init keeps them as bytes).
func decodeLeaf(b []byte) any {
	if len(b) == 0 {
		return ""
	}
	s := string(b)
	if !utf8.ValidString(s) {
		return s
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		if v, err := jsondoc.Decode("leaf", b); err == nil {
			return v
		}
	}
	if strings.Contains(s, "\n") {
		lines := splitLines(s)
		l := make([]any, len(lines))
		for i, line := range lines {
			l[i] = line
		}
		return l
	}
	return s
}

// DecodeLeaf is decodeLeaf for the EC2-compatible readers outside this
// package (Alibaba Cloud's meta-data/all values).
func DecodeLeaf(b []byte) any { return decodeLeaf(b) }

// Tree fetches the meta-data directory at url (ending in "/") and
// everything under it with g, each request carrying header, as Read does:
// each document at most maxDoc bytes, the whole tree at most maxTotal
// bytes and maxTreeRequests requests, maxTreeDepth levels deep; 404s under
// tags/ skipped. logf (may be nil) is told of skipped entries. It is
// exported for the EC2-compatible readers (Alibaba Cloud).
func Tree(ctx context.Context, g httpget.Fetcher, header map[string]string, url string, maxDoc, maxTotal int64, logf func(string, ...any)) (map[string]any, error) {
	fetch := func(ctx context.Context, u string, limit int64) ([]byte, error) {
		return g.Get(ctx, httpget.Request{URL: u, Header: header, Limit: limit})
	}
	w := &walker{fetch: fetch, limit: maxDoc, total: maxTotal, budget: maxTotal, requests: maxTreeRequests, logf: logf}
	return w.dir(ctx, url, 0)
}

// fetchFunc fetches a URL with a body limit.
type fetchFunc func(ctx context.Context, url string, limit int64) ([]byte, error)

// walker materializes a meta-data tree.
type walker struct {
	fetch    fetchFunc
	limit    int64 // per document
	total    int64 // body bytes for the whole tree
	budget   int64 // of which left
	requests int   // requests left
	logf     func(string, ...any)
}

func (w *walker) get(ctx context.Context, u string) ([]byte, error) {
	if w.requests <= 0 {
		return nil, fmt.Errorf("GET %s: the meta-data tree needs more than %d requests", u, maxTreeRequests)
	}
	w.requests--
	if w.budget <= 0 {
		return nil, fmt.Errorf("GET %s: the meta-data tree is over its %d byte budget", u, w.total)
	}
	b, err := w.fetch(ctx, u, min(w.limit, w.budget))
	if err != nil {
		return nil, err
	}
	w.budget -= int64(len(b))
	return b, nil
}

// dir fetches the listing at u (ending in "/") and everything under it, as
// cloud-init's MetadataMaterializer does: subdirectories first, then leaves;
// a leaf named like a subdirectory is dropped.
func (w *walker) dir(ctx context.Context, u string, depth int) (map[string]any, error) {
	if depth > maxTreeDepth {
		return nil, fmt.Errorf("GET %s: the meta-data tree is deeper than %d levels", u, maxTreeDepth)
	}
	blob, err := w.get(ctx, u)
	if err != nil {
		return nil, err
	}
	leaves, children := parseListing(string(blob))
	out := map[string]any{}
	for _, c := range children {
		rel, ok := escapePath(c)
		if !ok {
			w.log("ec2: skipping %q listed at %s: not a path", c, u)
			continue
		}
		sub, err := w.dir(ctx, u+rel+"/", depth+1)
		if err != nil {
			return nil, err
		}
		out[c] = sub
	}
	for _, l := range leaves {
		if _, ok := out[l.Field]; ok {
			w.log("ec2: duplicate key %q at %s", l.Field, u)
			continue
		}
		rel, ok := escapePath(l.Resource)
		if !ok {
			w.log("ec2: skipping %q listed at %s: not a path", l.Resource, u)
			continue
		}
		b, err := w.get(ctx, u+rel)
		if httpget.NotFound(err) && strings.Contains(u, "/meta-data/tags/") {
			// Listed but missing tags (cloud-init skips them on
			// Outscale, LP: #1988157).
			w.log("ec2: skipping %v", err)
			continue
		}
		if err != nil {
			return nil, err
		}
		out[l.Field] = decodeLeaf(b)
	}
	return out, nil
}

func (w *walker) log(format string, args ...any) {
	if w.logf != nil {
		w.logf(format, args...)
	}
}

// escapePath escapes each segment of a relative path; ok is false for one
// with an empty, "." or ".." segment, which would leave the directory.
func escapePath(p string) (string, bool) {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", false
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), true
}
