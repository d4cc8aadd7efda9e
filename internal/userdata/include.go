package userdata

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Include is one URL of an #include part.
type Include struct {
	URL string
	// Once is set for URLs after an #include-once line: cloud-init fetches
	// them once per instance and reads them from its cache afterwards.
	Once bool
}

// IncludeURLs parses the text of an include part as cloud-init's
// _do_include does: one URL per line, "#include URL" and
// "#include-once URL" allowed; an #include-once line makes the URLs after
// it include-once until the next #include; other # lines and blank lines
// are skipped.
func IncludeURLs(content []byte) []Include {
	var out []Include
	once := false
	for _, line := range strings.Split(string(content), "\n") {
		line = strings.TrimRight(line, "\r")
		lc := strings.ToLower(line)
		switch {
		case strings.HasPrefix(lc, "#include-once"):
			line = strings.TrimLeft(line[len("#include-once"):], " \t\v\f")
			once = true
		case strings.HasPrefix(lc, "#include"):
			line = strings.TrimLeft(line[len("#include"):], " \t\v\f")
			once = false
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		if u := strings.TrimSpace(line); u != "" {
			out = append(out, Include{URL: u, Once: once})
		}
	}
	return out
}

// Getter fetches one include URL. once tells it the URL came after
// #include-once, so it may answer from a per-instance cache (and should
// store what it fetched there).
type Getter func(ctx context.Context, url string, once bool) ([]byte, error)

// maxIncludes bounds the URLs FetchIncludes fetches in one call, over all
// nesting levels.
const maxIncludes = 64

// FetchIncludes replaces every TypeInclude part by the parts its URLs
// yield, in place and in order: each fetched payload is decoded like
// user-data (gzip, MIME, further #includes, nested up to maxDepth levels).
// A URL that fails to fetch or decode, an include past maxDepth and URLs
// past maxIncludes are warnings. Parts without a filename are renumbered
// part-001, part-002... in their final order.
func FetchIncludes(ctx context.Context, parts []Part, get Getter, maxDepth int) ([]Part, []Warning) {
	if !hasIncludes(parts) {
		return dropIncludes(parts), nil
	}
	f := &fetcher{get: get, left: maxIncludes, maxDepth: maxDepth}
	out := f.expand(ctx, parts, 0)
	for i := range out {
		if out[i].autoName || out[i].Filename == "" {
			out[i].Filename = fmt.Sprintf("part-%03d", i+1)
			out[i].autoName = true
		}
	}
	return out, f.warns
}

type fetcher struct {
	get      Getter
	left     int
	maxDepth int
	warns    []Warning
}

func (f *fetcher) warnf(format string, args ...any) {
	f.warns = append(f.warns, Warning(fmt.Sprintf(format, args...)))
}

func (f *fetcher) expand(ctx context.Context, parts []Part, depth int) []Part {
	var out []Part
	for _, p := range parts {
		if p.Type != TypeInclude {
			out = append(out, p)
			continue
		}
		for _, inc := range IncludeURLs(p.Content) {
			// A URL may carry credentials (user:pass@, ?token=): warnings
			// show it without them.
			shown := RedactURL(inc.URL)
			if depth >= f.maxDepth {
				f.warnf("include %s: nested deeper than %d includes: not fetched", shown, f.maxDepth)
				continue
			}
			if f.left <= 0 {
				f.warnf("include %s: more than %d include URLs: not fetched", shown, maxIncludes)
				continue
			}
			if err := ctx.Err(); err != nil {
				f.warnf("include %s: %v", shown, err)
				continue
			}
			f.left--
			body, err := f.get(ctx, inc.URL, inc.Once)
			if err != nil {
				f.warnf("include %s: %s", shown, strings.ReplaceAll(err.Error(), inc.URL, shown))
				continue
			}
			sub, warns, err := Decode(body)
			for _, w := range warns {
				f.warnf("include %s: %s", shown, w)
			}
			if err != nil {
				f.warnf("include %s: %v", shown, err)
				continue
			}
			out = append(out, f.expand(ctx, sub, depth+1)...)
		}
	}
	return out
}

// RedactURL is u for a message: without its user information, query and
// fragment, which may hold credentials. Text that does not parse as a URL
// is not shown at all.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" {
		return "(an unparsable URL)"
	}
	if p.User != nil {
		p.User = url.User("REDACTED")
	}
	if p.RawQuery != "" || p.ForceQuery {
		p.RawQuery, p.ForceQuery = "REDACTED", false
	}
	p.Fragment, p.RawFragment = "", ""
	return p.String()
}

// dropIncludes returns parts without its (empty) include parts.
func dropIncludes(parts []Part) []Part {
	out := make([]Part, 0, len(parts))
	for _, p := range parts {
		if p.Type != TypeInclude {
			out = append(out, p)
		}
	}
	return out
}

// hasIncludes reports whether any part is an include with content.
func hasIncludes(parts []Part) bool {
	for _, p := range parts {
		if p.Type == TypeInclude && len(bytes.TrimSpace(p.Content)) > 0 {
			return true
		}
	}
	return false
}
