// Package ec2test plays an EC2-style instance metadata service for the
// tests of the EC2-compatible readers (internal/datasource/aliyun, zstack,
// outscale): a meta-data tree served as directory listings and leaves,
// user-data and vendor-data, an optional IMDSv2-style session token under
// the cloud's own header names, and a record of what was asked.
package ec2test

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Service is the fake service; its zero value serves nothing but 404s.
// Set the fields before the first request.
type Service struct {
	// Version is the one API version served ("latest" answers too);
	// Versions is the answer to GET /.
	Version, Versions string
	// Tree holds meta-data paths relative to <version>/meta-data/. A
	// directory lists what is under it; a path ending in "/" is an
	// explicit listing (as "public-keys/": "0=my-key").
	Tree map[string]string
	// UserData and VendorData are <version>/user-data and
	// <version>/vendor-data; nil is a 404.
	UserData, VendorData *string
	// Raw answers paths exactly (with the leading "/"), before anything
	// else: "/2016-01-01/meta-data/all".
	Raw map[string]string
	// Status answers paths (with the leading "/") with an HTTP status.
	Status map[string]int
	// Handlers answer paths (with the leading "/"), whatever the method,
	// before anything else: a fault (a hang, a slow or endless answer).
	Handlers map[string]http.HandlerFunc

	// TokenHeader, if set, makes the service hand out Token at PUT
	// /latest/api/token (when TokenTTLHeader is sent) and accept it in
	// TokenHeader; TokenRequired refuses GETs without it (401).
	TokenHeader, TokenTTLHeader, Token string
	TokenRequired                      bool
	// TokenTTL, if set, is the only TTL value the token PUT is answered
	// for (others get 400), as EC2 checks it.
	TokenTTL string
	// PutStatus answers the token PUT with this status instead.
	PutStatus int

	mu        sync.Mutex
	hits      map[string]int
	tokenless []string
}

// Serve starts s on a test server closed when the test ends, and returns
// its URL.
func Serve(t testing.TB, s *Service) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Hits is how many times "METHOD /path" was asked for.
func (s *Service) Hits(k string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[k]
}

// Requests is how many requests came in all.
func (s *Service) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.hits {
		n += v
	}
	return n
}

// Gets is how many GET requests came in all.
func (s *Service) Gets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, v := range s.hits {
		if strings.HasPrefix(k, http.MethodGet+" ") {
			n += v
		}
	}
	return n
}

// Tokenless are the paths GET without the token (when TokenHeader is set).
func (s *Service) Tokenless() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokenless...)
}

// ServeHTTP answers r: Handlers, Status, the token PUT, then GETs (see
// serveGet), every request recorded.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hasToken := s.record(r)

	if h := s.Handlers[r.URL.Path]; h != nil {
		h(w, r)
		return
	}
	if code, ok := s.Status[r.URL.Path]; ok {
		w.WriteHeader(code)
		return
	}
	if r.Method == http.MethodPut && r.URL.Path == "/latest/api/token" {
		s.putToken(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if s.TokenRequired && !hasToken {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	s.serveGet(w, r)
}

// record counts r (and a GET without the token), and tells whether it
// carries the token.
func (s *Service) record(r *http.Request) (hasToken bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hits == nil {
		s.hits = map[string]int{}
	}
	s.hits[r.Method+" "+r.URL.Path]++
	hasToken = s.TokenHeader != "" && r.Header.Get(s.TokenHeader) == s.Token
	if r.Method == http.MethodGet && s.TokenHeader != "" && !hasToken {
		s.tokenless = append(s.tokenless, r.URL.Path)
	}
	return hasToken
}

// putToken answers the token PUT.
func (s *Service) putToken(w http.ResponseWriter, r *http.Request) {
	switch {
	case s.PutStatus != 0:
		w.WriteHeader(s.PutStatus)
	case s.TokenHeader == "" || r.Header.Get(s.TokenTTLHeader) == "",
		s.TokenTTL != "" && r.Header.Get(s.TokenTTLHeader) != s.TokenTTL:
		w.WriteHeader(http.StatusBadRequest)
	default:
		w.Write([]byte(s.Token))
	}
}

// serveGet answers a GET: Raw, the versions, user-data and vendor-data,
// then the meta-data tree.
func (s *Service) serveGet(w http.ResponseWriter, r *http.Request) {
	if v, ok := s.Raw[r.URL.Path]; ok {
		w.Write([]byte(v))
		return
	}
	if r.URL.Path == "/" && s.Versions != "" {
		w.Write([]byte(s.Versions))
		return
	}
	ver, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if ver != s.Version && ver != "latest" {
		http.NotFound(w, r)
		return
	}
	switch rest {
	case "user-data", "vendor-data":
		v := s.UserData
		if rest == "vendor-data" {
			v = s.VendorData
		}
		if v == nil {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(*v))
		return
	}
	p, ok := strings.CutPrefix(rest, "meta-data/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.serveTree(w, r, p)
}

// serveTree answers meta-data path p: a leaf, an explicit listing, or
// the listing of a directory.
func (s *Service) serveTree(w http.ResponseWriter, r *http.Request, p string) {
	if v, ok := s.Tree[p]; ok {
		w.Write([]byte(v))
		return
	}
	if p != "" && !strings.HasSuffix(p, "/") {
		http.NotFound(w, r)
		return
	}
	// A directory: list what is under it.
	seen := map[string]bool{}
	var list []string
	for k := range s.Tree {
		sub, ok := strings.CutPrefix(k, p)
		if !ok || sub == "" {
			continue
		}
		if i := strings.Index(sub, "/"); i >= 0 {
			sub = sub[:i+1]
		}
		if !seen[sub] {
			seen[sub] = true
			list = append(list, sub)
		}
	}
	if len(list) == 0 {
		http.NotFound(w, r)
		return
	}
	sort.Strings(list)
	w.Write([]byte(strings.Join(list, "\n")))
}
