package httpget

import (
	"fmt"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects System's Getter follows. Python's
// requests follows 30 (cloud-init keeps that default); Go's net/http 10,
// which is what this is: the chains real servers make (http to https, a
// short link to a CDN to a signed URL) take two to four, and every hop is
// a full request inside the caller's time bound, which 30 would not fit.
const maxRedirects = 10

// redirectError is a redirect Get does not follow: one more than
// g.Redirects, one to a URL it cannot fetch (another scheme, user
// information), or from https to http, which would send the request, and
// fetch what comes back, in the clear.
type redirectError struct {
	Method, URL string // the request as it was asked for
	To          string // where the redirect pointed, its query redacted
	Reason      string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("%s %s: redirect to %s refused: %s", e.Method, e.URL, e.To, e.Reason)
}

// redirectCode tells whether code is a redirect Get follows (with a
// Location): requests' REDIRECT_STATI.
func redirectCode(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// redirect is the request that follows r's answer se, the n+1th redirect
// of first (the request as asked for), as requests' resolve_redirects makes
// it:
//
//   - the Location is resolved against r.URL;
//   - 303 and 302 turn any method but HEAD into GET, 301 turns POST into
//     GET; the body and its Content-Type are dropped, except for 307 and
//     308, which keep the method and the body;
//   - Cookie is dropped, and so is Authorization when the redirect leaves
//     the server (requests' should_strip_auth: another host name, or
//     another scheme or port, except http to https on their default
//     ports). Proxy-Authorization is the Getter's own, for its proxy only;
//   - https to http is refused, as is anything past g.Redirects.
func (g *Getter) redirect(first, r Request, n int, se *StatusError) (Request, error) {
	refuse := func(to, why string) (Request, error) {
		return Request{}, &redirectError{Method: first.Method, URL: first.URL, To: to, Reason: why}
	}
	cur, err := url.Parse(r.URL)
	if err != nil {
		return refuse(shownURL(se.Location), err.Error())
	}
	loc, err := url.Parse(se.Location)
	if err != nil {
		return refuse("(an unparsable Location)", "not a URL")
	}
	next := cur.ResolveReference(loc)
	next.Fragment, next.RawFragment = "", ""
	to := shownURL(next.String())
	if n >= g.Redirects {
		return refuse(to, fmt.Sprintf("more than %d redirects", g.Redirects))
	}
	if _, err := parseURL(next.String()); err != nil {
		return refuse(to, err.Error())
	}
	if cur.Scheme == "https" && next.Scheme == "http" {
		return refuse(to, "from https to http (earlyinit never downgrades)")
	}
	out := r
	out.URL = next.String()
	out.shown = first.URL + " redirected to " + to
	switch {
	case se.Code == 303 && r.Method != "HEAD", se.Code == 302 && r.Method != "HEAD", se.Code == 301 && r.Method == "POST":
		out.Method = "GET"
	}
	keepBody := se.Code == 307 || se.Code == 308
	if !keepBody {
		out.Body = nil
	}
	strip := stripAuth(cur, next)
	out.Header = make(map[string]string, len(r.Header))
	for k, v := range r.Header {
		switch strings.ToLower(k) {
		case "cookie":
			continue
		case "authorization":
			if strip {
				continue
			}
		case "content-type":
			if !keepBody {
				continue
			}
		}
		out.Header[k] = v
	}
	return out, nil
}

// stripAuth is requests' should_strip_auth: whether a redirect from old to
// next leaves the host its credentials were meant for.
func stripAuth(old, next *url.URL) bool {
	if !strings.EqualFold(old.Hostname(), next.Hostname()) {
		return true
	}
	op, np := old.Port(), next.Port()
	if old.Scheme == "http" && (op == "" || op == "80") && next.Scheme == "https" && (np == "" || np == "443") {
		return false
	}
	def := map[string]string{"http": "80", "https": "443"}[old.Scheme]
	if old.Scheme == next.Scheme && (op == "" || op == def) && (np == "" || np == def) {
		return false
	}
	return op != np || old.Scheme != next.Scheme
}

// shownURL is u for a message: its query, which in a redirect's Location
// often holds a signature or a token, replaced by REDACTED; no fragment.
func shownURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
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
