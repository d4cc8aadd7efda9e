package httpget

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"
)

// FuzzReadResponse: whatever the bytes, readResponse returns an answer or
// an error, never more body than the limit, and a body only for 2xx.
func FuzzReadResponse(f *testing.F) {
	for _, tt := range responseCases {
		f.Add([]byte(tt.in), uint16(10))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		l := int64(limit) + 1
		resp, err := readResponse(bytes.NewReader(in), "GET", l)
		if err != nil {
			if resp != nil {
				t.Fatalf("an answer and an error: %v", err)
			}
			return
		}
		if resp.code < 200 || resp.code > 999 {
			t.Fatalf("final code %d", resp.code)
		}
		ok := resp.code <= 299
		if ok != (resp.body != nil) {
			t.Fatalf("code %d, body %q", resp.code, resp.body)
		}
		if int64(len(resp.body)) > l {
			t.Fatalf("%d body bytes over the %d limit", len(resp.body), l)
		}
		if !bytes.Contains(in, resp.body) && resp.header.Get("Transfer-Encoding") == "" {
			t.Fatalf("body %q not in the answer", resp.body)
		}
	})
}

// FuzzChunked: what net/http's chunked writer writes, in any cuts, the
// chunked reader reads back.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("hello, world"), uint8(3))
	f.Add([]byte{}, uint8(1))
	f.Add(bytes.Repeat([]byte{0, '\r', '\n'}, 100), uint8(17))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var buf bytes.Buffer
		w := httputil.NewChunkedWriter(&buf)
		for rest := data; len(rest) > 0; {
			n := min(int(cut)+1, len(rest))
			w.Write(rest[:n])
			rest = rest[n:]
		}
		w.Close()
		buf.WriteString("Trailer: x\r\n\r\n")
		got, err := io.ReadAll(&chunkedReader{r: bufio.NewReaderSize(&buf, 16)})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
		if buf.Len() != 0 {
			t.Fatalf("%d bytes left after the body", buf.Len())
		}
	})
}

// FuzzRequest: a request the client agrees to send is one net/http's
// server reads as sent: one request, its target, its header fields, no
// field smuggled in.
func FuzzRequest(f *testing.F) {
	f.Add("GET", "http://169.254.169.254/latest/meta-data/", "X-aws-ec2-metadata-token", "AQAEAB==", []byte(nil))
	f.Add("PUT", "http://[fe80::a9fe:a9fe%25eth0]/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds", "21600", []byte(nil))
	f.Add("POST", "http://10.0.0.1:8080/phone/$INSTANCE_ID?x=%41#f", "Content-Type", "application/x-www-form-urlencoded", []byte("a=b"))
	f.Add("GET", "http://h/a b", "X", "a\r\nHost: evil", []byte(nil))
	f.Fuzz(func(t *testing.T, method, url, name, value string, body []byte) {
		tg, err := parseURL(url)
		if err != nil {
			return
		}
		if strings.ContainsAny(tg.host, "% \r\n") || !strings.HasPrefix(tg.uri, "/") && tg.uri != "*" {
			t.Fatalf("parseURL(%q) = %+v", url, tg)
		}
		r := Request{Method: method, URL: url, Header: map[string]string{name: value}, Body: body}
		msg, err := buildRequest(r, tg)
		if err != nil {
			return
		}
		got, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(msg)))
		if err != nil {
			// net/http is stricter on the URL (e.g. a space in the
			// request-target); never on what the client checks.
			var pe *http.ProtocolError
			if strings.Contains(tg.uri, " ") || errors.As(err, &pe) && strings.Contains(err.Error(), "URI") {
				return
			}
			t.Fatalf("net/http cannot read %q: %v", msg, err)
		}
		gb, _ := io.ReadAll(got.Body)
		want := strings.TrimSpace(value)
		if got.Method != method || got.RequestURI != tg.uri || got.Host != tg.host || !bytes.Equal(gb, body) ||
			len(got.Header.Values(name)) != 1 || !strings.EqualFold(name, "User-Agent") && got.Header.Get(name) != want {
			t.Fatalf("sent %q, net/http read %s %s Host %q header %v body %q", msg, got.Method, got.RequestURI, got.Host, got.Header, gb)
		}
	})
}
