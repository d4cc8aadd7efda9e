package nocloud

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing/fstest"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// seedFiles are the files of a seed served over HTTP, each with its size
// limit, and whether it must be there.
var seedFiles = []struct {
	name     string
	limit    int64
	required bool
}{
	{"meta-data", MaxDocSize, true},
	{"user-data", datasource.MaxFileSize, false},
	{"vendor-data", datasource.MaxFileSize, false},
	{"network-config", MaxDocSize, false},
}

// ReadURL reads a NoCloud seed served over HTTP or HTTPS
// (seedfrom=http://... or https://...), as
// cloud-init's read_seeded does: each file's URL is base with the file name
// put in place of "%s", or appended to it when it has none (so a
// directory's URL needs its trailing slash, as cloud-init documents).
// meta-data must be there; user-data, vendor-data and network-config may
// answer 404. The files are then read as a seed directory's are (Read).
// Requests go through svc.HTTP, or an httpget.Getter with svc's Timeout,
// which verifies an https seed's certificate against the CA bundle of
// the root it is given (see httpget.LoadCABundle). A URL with a user or
// password is refused: nothing sends them.
func ReadURL(ctx context.Context, svc datasource.Service, base string) (*instance.Data, error) {
	if u, err := url.Parse(base); err != nil || u.User != nil {
		// The HTTP client sends no credentials, and its errors would
		// show them.
		return nil, fmt.Errorf("seed %s: want an http:// or https:// URL without a user or password", redact(base))
	}
	g := svc.HTTP
	if g == nil {
		g = &httpget.Getter{RequestTimeout: svc.Timeout, Logf: svc.Logf, CARoot: svc.Root}
	}
	fsys := fstest.MapFS{}
	for _, f := range seedFiles {
		u := seedFileURL(base, f.name)
		b, err := g.Get(ctx, httpget.Request{URL: u, Limit: f.limit})
		if !f.required && httpget.NotFound(err) {
			continue
		}
		if err != nil {
			hint := ""
			if httpget.NotFound(err) && !strings.HasSuffix(base, "/") && !strings.Contains(base, "%s") {
				hint = " (file names are appended to the seed URL as they are: end it with / for a directory)"
			}
			return nil, fmt.Errorf("seed %s: %s: %w%s", redact(base), f.name, err, hint)
		}
		fsys[f.name] = &fstest.MapFile{Data: b, Mode: 0o444}
	}
	d, err := Read(fsys)
	if err != nil {
		return nil, fmt.Errorf("seed %s: %w", redact(base), err)
	}
	if svc.Logf != nil {
		svc.Logf("nocloud: seed read from %s", redact(base))
	}
	return d, nil
}

// seedFileURL is read_seeded's URL of name under base.
func seedFileURL(base, name string) string {
	if strings.Contains(base, "%s") {
		return strings.ReplaceAll(base, "%s", name)
	}
	return base + name
}

// redact returns u without the password of its user information, for the
// logs; a string that does not parse as a URL is returned as "(a URL that
// does not parse)".
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return p.Redacted()
}
