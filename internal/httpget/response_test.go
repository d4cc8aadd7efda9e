package httpget

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// responseCases are answers and what readResponse makes of them, with a
// body limit of 10. They seed FuzzReadResponse too.
var responseCases = []struct {
	name   string
	method string
	in     string
	code   int
	body   string // for 2xx
	err    string // a substring of the error; "" for success
}{
	{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", code: 200, body: "hello"},
	{name: "content-length ignores trailing bytes", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhello", code: 200, body: "he"},
	{name: "content-length zero", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", code: 200, body: ""},
	{name: "content-length repeated alike", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", code: 200, body: "abc"},
	{name: "content-length at the limit", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", code: 200, body: "0123456789"},
	{name: "content-length over the limit", in: "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n0123456789a", err: "body over the limit"},
	{name: "content-length huge", in: "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\n\r\n", err: "body over the limit"},
	{name: "content-length short", in: "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nhello", err: "unexpected EOF after 5 of 8 bytes"},
	{name: "content-length conflicting", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", err: `conflicting Content-Length values "3, 4"`},
	{name: "content-length negative", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: `bad Content-Length "-1"`},
	{name: "content-length signed", in: "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", err: `bad Content-Length "+1"`},
	{name: "content-length not a number", in: "HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", err: `bad Content-Length "ten"`},
	{name: "content-length empty", in: "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", err: `bad Content-Length ""`},

	{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", code: 200, body: "hello"},
	{name: "chunked upper-case hex, extensions, trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nA;name=value\r\n0123456789\r\n0;last\r\nX-Trailer: 1\r\n\r\n", code: 200, body: "0123456789"},
	{name: "chunked empty", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", code: 200, body: ""},
	{name: "chunked overrides content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", code: 200, body: "ab"},
	{name: "chunked over the limit", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n5\r\n6789a\r\n0\r\n\r\n", err: "body over the limit"},
	{name: "chunked one huge chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n0123456789a", err: "body over the limit"},
	{name: "chunked size too long", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000001\r\nx\r\n0\r\n\r\n", err: `bad chunk size "00000000000000001"`},
	{name: "chunked bad size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", err: `bad chunk size "xyz"`},
	{name: "chunked empty size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n;ext\r\n", err: `bad chunk size ";ext"`},
	{name: "chunked negative size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", err: `bad chunk size "-1"`},
	{name: "chunked no CRLF after data", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", err: "no CRLF after chunk data"},
	{name: "chunked bare LF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n", err: `line "2\n" not ended by CRLF`},
	{name: "chunked cut in a chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc", err: "chunked body: unexpected EOF"},
	{name: "chunked cut before the last chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", err: "chunked body: unexpected EOF"},
	{name: "chunked cut in the trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n", err: "chunked body: unexpected EOF"},
	{name: "chunked line too long", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + strings.Repeat("x", 5000) + "\r\n", err: "chunked body: line over 4096 bytes"},
	{name: "transfer-encoding gzip", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", err: `unsupported Transfer-Encoding "gzip"`},
	{name: "transfer-encoding gzip, chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", err: `unsupported Transfer-Encoding "gzip, chunked"`},
	{name: "transfer-encoding twice", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", err: `unsupported Transfer-Encoding "chunked, chunked"`},

	{name: "until EOF", in: "HTTP/1.1 200 OK\r\nX: y\r\n\r\nhi\nworld", code: 200, body: "hi\nworld"},
	{name: "until EOF, HTTP/1.0", in: "HTTP/1.0 200 OK\r\n\r\nhello", code: 200, body: "hello"},
	{name: "until EOF, empty", in: "HTTP/1.1 200 OK\r\n\r\n", code: 200, body: ""},
	{name: "until EOF over the limit", in: "HTTP/1.1 200 OK\r\n\r\n0123456789a", err: "body over the limit"},
	{name: "no reason phrase", in: "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", code: 200, body: "ok"},
	{name: "bare LF line ends in the header", in: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", code: 200, body: "ok"},
	{name: "204 has no body", in: "HTTP/1.1 204 No Content\r\n\r\nnot a body", code: 204, body: ""},
	{name: "HEAD has no body", method: "HEAD", in: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", code: 200, body: ""},
	{name: "interim answers skipped", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", code: 200, body: "ok"},
	{name: "101", in: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", err: "unexpected HTTP 101 Switching Protocols"},
	{name: "404 body not read", in: "HTTP/1.1 404 Not Found\r\nContent-Length: 99\r\n\r\nnope", code: 404},
	{name: "301", in: "HTTP/1.1 301 Moved Permanently\r\nLocation: http://elsewhere/\r\n\r\n", code: 301},
	{name: "500 with a bad length", in: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: x\r\n\r\n", code: 500},

	{name: "nothing", in: "", err: "connection closed with no answer"},
	{name: "status line cut", in: "HTTP/1.1 200 O", err: "read header: unexpected EOF"},
	{name: "header cut", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", err: "read header: unexpected EOF"},
	{name: "HTTP/2", in: "HTTP/2 200 OK\r\n\r\n", err: `malformed status line "HTTP/2 200 OK"`},
	{name: "HTTP/1.2", in: "HTTP/1.2 200 OK\r\n\r\n", err: `malformed status line "HTTP/1.2 200 OK"`},
	{name: "lower-case protocol", in: "http/1.1 200 OK\r\n\r\n", err: `malformed status line "http/1.1 200 OK"`},
	{name: "no code", in: "HTTP/1.1\r\n\r\n", err: `malformed status line "HTTP/1.1"`},
	{name: "short code", in: "HTTP/1.1 20 OK\r\n\r\n", err: `malformed status line "HTTP/1.1 20 OK"`},
	{name: "long code", in: "HTTP/1.1 2000 OK\r\n\r\n", err: `malformed status line "HTTP/1.1 2000 OK"`},
	{name: "code below 100", in: "HTTP/1.1 099 OK\r\n\r\n", err: `malformed status line "HTTP/1.1 099 OK"`},
	{name: "code not a number", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: `malformed status line "HTTP/1.1 2x0 OK"`},
	{name: "two spaces", in: "HTTP/1.1  200 OK\r\n\r\n", err: `malformed status line "HTTP/1.1  200 OK"`},
	{name: "not HTTP", in: "SSH-2.0-OpenSSH_9.6\r\n", err: `malformed status line "SSH-2.0-OpenSSH_9.6"`},
	{name: "long garbage quoted short", in: strings.Repeat("a", 100) + "\r\n\r\n", err: `malformed status line "` + strings.Repeat("a", 64) + `..."`},
	{name: "header line without colon", in: "HTTP/1.1 200 OK\r\nContent-Length 5\r\n\r\nhello", err: `read header: malformed MIME header: missing colon: "Content-Length 5"`},
	{name: "space before colon", in: "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello", err: `read header: malformed field name "Content-Length "`},
	{name: "bad header name", in: "HTTP/1.1 200 OK\r\nCon\x01tent: 5\r\n\r\n", err: "read header: malformed MIME header line"},
	{name: "header too big", in: "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 70) + "\r\n", err: "read header: header over 65536 bytes"},
	{name: "status line too big", in: "HTTP/1.1 200 " + strings.Repeat("k", 70<<10) + "\r\n\r\n", err: "read status line: header over 65536 bytes"},
	{name: "endless interim answers", in: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 3000), err: "header over 65536 bytes"},
	{name: "header just under the bound, long body", in: "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("p", maxHeaderBytes-100) + "\r\n\r\n" + strings.Repeat("b", 5000), err: "body over the limit"},
}

func TestReadResponse(t *testing.T) {
	for _, tt := range responseCases {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = "GET"
			}
			// One byte at a time, to exercise every buffer boundary.
			resp, err := readResponse(iotest.OneByteReader(strings.NewReader(tt.in)), method, 10)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				if tt.err == "body over the limit" && !errors.Is(err, errTooBig) {
					t.Errorf("err = %v, want errTooBig", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if resp.code != tt.code {
				t.Errorf("code = %d, want %d", resp.code, tt.code)
			}
			if tt.code >= 200 && tt.code <= 299 {
				if resp.body == nil || string(resp.body) != tt.body {
					t.Errorf("body = %q (nil %v), want %q", resp.body, resp.body == nil, tt.body)
				}
			} else if resp.body != nil {
				t.Errorf("body = %q, want none read for a %d", resp.body, resp.code)
			}
		})
	}
}

func TestReadResponseHeader(t *testing.T) {
	resp, err := readResponse(strings.NewReader("HTTP/1.1 302 Found\r\nlocation: /elsewhere\r\nX-Two: a\r\nX-Two: b\r\n\r\n"), "GET", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.header.Get("Location"); got != "/elsewhere" {
		t.Errorf("Location = %q, want /elsewhere", got)
	}
	if got := resp.header.Values("X-Two"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("X-Two = %q, want [a b]", got)
	}
}

// TestReadResponseReadError: an error from the connection (a timeout, a
// reset) is kept, wrapped, whatever the framing.
func TestReadResponseReadError(t *testing.T) {
	for _, head := range []string{
		"",
		"HTTP/1.1 200 OK\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab",
		"HTTP/1.1 200 OK\r\n\r\nab",
	} {
		r := io.MultiReader(strings.NewReader(head), iotest.ErrReader(iotest.ErrTimeout))
		if _, err := readResponse(r, "GET", 10); !errors.Is(err, iotest.ErrTimeout) {
			t.Errorf("%q then a timeout: err = %v, want the timeout", head, err)
		}
	}
}

func TestParseStatusLine(t *testing.T) {
	for line, want := range map[string]int{
		"HTTP/1.1 200 OK":                    200,
		"HTTP/1.0 404 Not Found":             404,
		"HTTP/1.1 503":                       503,
		"HTTP/1.1 999 whatever it is":        999,
		"HTTP/1.1 302 Found, with spaces ok": 302,
	} {
		if got, err := parseStatusLine(line); err != nil || got != want {
			t.Errorf("parseStatusLine(%q) = %d, %v; want %d", line, got, err, want)
		}
	}
}
