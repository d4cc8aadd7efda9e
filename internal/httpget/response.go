package httpget

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net/textproto"
	"strconv"
	"strings"
)

// maxHeaderBytes bounds the status line and header section of an answer,
// interim (1xx) answers included.
const maxHeaderBytes = 64 << 10

// maxChunkLine bounds a chunk-size line (size and extensions) and each
// trailer line of a chunked body.
const maxChunkLine = 4096

// errTooBig is a body over the limit given to readResponse.
var errTooBig = errors.New("body over the limit")

// response is what readResponse makes of an answer.
type response struct {
	code   int
	header textproto.MIMEHeader
	body   []byte // read only for 2xx answers
}

// readResponse reads an HTTP/1.x answer to a request made with method and
// "Connection: close": its final status line and header, and, for a 2xx
// answer, its body, delimited by Transfer-Encoding: chunked, else by
// Content-Length, else by the end of the stream. A body over limit bytes
// is errTooBig; reading stops just past the limit.
func readResponse(r io.Reader, method string, limit int64) (*response, error) {
	lr := &io.LimitedReader{R: r, N: maxHeaderBytes}
	br := bufio.NewReader(lr)
	tp := textproto.NewReader(br)
	resp := &response{}
	// over tells whether the header section has taken all of its bound:
	// the line just read may be cut short.
	over := func() bool { return lr.N <= 0 && br.Buffered() == 0 }
	for first := true; ; first = false {
		line, err := tp.ReadLine()
		if over() {
			return nil, fmt.Errorf("read status line: header over %d bytes", maxHeaderBytes)
		}
		if err != nil {
			return nil, headerErr("read status line", err, first && line == "")
		}
		if resp.code, err = parseStatusLine(line); err != nil {
			return nil, err
		}
		resp.header, err = tp.ReadMIMEHeader()
		if over() {
			return nil, fmt.Errorf("read header: header over %d bytes", maxHeaderBytes)
		}
		if err != nil {
			return nil, headerErr("read header", err, false)
		}
		for k := range resp.header {
			// net/textproto lets "Name : value" by, keeping the space.
			if !isToken(k) {
				return nil, fmt.Errorf("read header: malformed field name %q", k)
			}
		}
		if resp.code == 101 {
			return nil, fmt.Errorf("unexpected HTTP 101 %s", statusText(101))
		}
		if resp.code >= 200 {
			break
		}
		// An interim answer (100 Continue, 103 Early Hints): the real one
		// follows.
	}
	lr.N = math.MaxInt64
	if resp.code < 200 || resp.code > 299 {
		return resp, nil
	}
	if method == "HEAD" || resp.code == 204 {
		resp.body = []byte{}
		return resp, nil
	}
	var body io.Reader
	size := int64(-1)
	if te := resp.header.Values("Transfer-Encoding"); len(te) > 0 {
		if len(te) > 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked") {
			return nil, fmt.Errorf("unsupported Transfer-Encoding %q", strings.Join(te, ", "))
		}
		// Content-Length, if any, is ignored (RFC 9112, section 6.3).
		body = &chunkedReader{r: br}
	} else if cl := resp.header.Values("Content-Length"); len(cl) > 0 {
		n, err := parseContentLength(cl)
		if err != nil {
			return nil, err
		}
		if n > limit {
			return nil, errTooBig
		}
		size = n
		body = io.LimitReader(br, n)
	} else {
		body = br
	}
	b, err := readBody(body, size, limit)
	if err != nil {
		return nil, err
	}
	if size >= 0 && int64(len(b)) < size {
		return nil, fmt.Errorf("read body: %w after %d of %d bytes", io.ErrUnexpectedEOF, len(b), size)
	}
	resp.body = b
	return resp, nil
}

// headerErr words an error reading the status line or header: no answer,
// an answer cut short, or the reader's own error.
func headerErr(what string, err error, nothing bool) error {
	switch {
	case nothing && errors.Is(err, io.EOF):
		return errors.New("connection closed with no answer")
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: %w", what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// readBody reads r to its end, at most limit bytes: one more is errTooBig.
// size, if not negative, is the expected length.
func readBody(r io.Reader, size, limit int64) ([]byte, error) {
	n := size
	if n < 0 || n > limit {
		n = min(limit, 512)
	}
	b := make([]byte, 0, n+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if int64(len(b)) > limit {
			return nil, errTooBig
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
	}
}

// parseStatusLine parses "HTTP/1.x NNN reason" and returns NNN.
func parseStatusLine(line string) (int, error) {
	bad := func() (int, error) {
		if len(line) > 64 {
			line = line[:64] + "..."
		}
		return 0, fmt.Errorf("malformed status line %q", line)
	}
	proto, rest, ok := strings.Cut(line, " ")
	if !ok || (proto != "HTTP/1.1" && proto != "HTTP/1.0") {
		return bad()
	}
	code, _, _ := strings.Cut(rest, " ")
	if len(code) != 3 || !allDigits(code) || code[0] == '0' {
		return bad()
	}
	n, _ := strconv.Atoi(code)
	return n, nil
}

// parseContentLength reads the Content-Length values: all the same
// decimal number.
func parseContentLength(vs []string) (int64, error) {
	v := strings.TrimSpace(vs[0])
	for _, o := range vs[1:] {
		if strings.TrimSpace(o) != v {
			return 0, fmt.Errorf("conflicting Content-Length values %q", strings.Join(vs, ", "))
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || !allDigits(v) {
		return 0, fmt.Errorf("bad Content-Length %q", v)
	}
	return n, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// chunkedReader decodes a chunked body (RFC 9112, section 7.1): chunks of
// "hex-size[;ext] CRLF data CRLF", a last "0[;ext] CRLF", trailer lines
// and an empty line. Extensions and trailers are read and ignored.
type chunkedReader struct {
	r    *bufio.Reader
	left uint64 // bytes left in the current chunk
	mid  bool   // in a chunk whose data CRLF is still to come
	err  error  // sticky: io.EOF after the last chunk
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.err == nil && c.left == 0 {
		if c.mid {
			if c.err = c.crlf(); c.err != nil {
				break
			}
			c.mid = false
		}
		c.err = c.next()
	}
	if c.err != nil {
		return 0, c.err
	}
	if uint64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= uint64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		c.err = fmt.Errorf("chunked body: %w", err)
		return n, c.err
	}
	return n, nil
}

// next reads a chunk-size line, and after the last chunk the trailers.
func (c *chunkedReader) next() error {
	line, err := c.line()
	if err != nil {
		return err
	}
	size, _, _ := strings.Cut(line, ";")
	size = strings.TrimRight(size, " \t")
	if size == "" || len(size) > 16 {
		return fmt.Errorf("chunked body: bad chunk size %q", line)
	}
	n, err := strconv.ParseUint(size, 16, 64)
	if err != nil {
		return fmt.Errorf("chunked body: bad chunk size %q", line)
	}
	if n > 0 {
		c.left, c.mid = n, true
		return nil
	}
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if line == "" {
			return io.EOF
		}
	}
}

// crlf reads the CRLF after a chunk's data.
func (c *chunkedReader) crlf() error {
	var b [2]byte
	if _, err := io.ReadFull(c.r, b[:]); err != nil {
		return fmt.Errorf("chunked body: %w", unexpected(err))
	}
	if b != [2]byte{'\r', '\n'} {
		return errors.New("chunked body: no CRLF after chunk data")
	}
	return nil
}

// line reads a CRLF-terminated line of at most maxChunkLine bytes.
func (c *chunkedReader) line() (string, error) {
	var sb strings.Builder
	for {
		frag, err := c.r.ReadSlice('\n')
		if sb.Len()+len(frag) > maxChunkLine {
			return "", fmt.Errorf("chunked body: line over %d bytes", maxChunkLine)
		}
		sb.Write(frag)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("chunked body: %w", unexpected(err))
		}
		s, ok := strings.CutSuffix(sb.String(), "\r\n")
		if !ok {
			return "", fmt.Errorf("chunked body: line %q not ended by CRLF", sb.String())
		}
		return s, nil
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
