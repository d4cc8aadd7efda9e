// Package jsondoc decodes one JSON document from outside (a datasource's
// metadata, a network config) the way every reader in earlyinit wants it:
// numbers kept as json.Number, nothing after the value, and errors that
// name the document, the byte offset and its line:column; and, for the
// fields a reader takes into a struct, Unmarshal (errors naming the key)
// and Text (a string or a number, as its text).
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decode decodes one JSON document, keeping numbers as json.Number so they
// survive a round trip into instance-data.json unchanged. A syntax error names
// name, the byte offset and its line:column; trailing data after the value is
// an error too.
func Decode(name string, b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(name, b, err)
	}
	if _, err := dec.Token(); err == nil || !errors.Is(err, io.EOF) {
		off := dec.InputOffset()
		line, col := lineCol(b, off)
		return nil, fmt.Errorf("parse %s: invalid JSON at byte %d (line %d:%d): data after the top-level value", name, off, line, col)
	}
	return v, nil
}

func jsonError(name string, b []byte, err error) error {
	var off int64
	var serr *json.SyntaxError
	switch {
	case errors.As(err, &serr):
		off = serr.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(b))
		err = errors.New("unexpected end of JSON input")
	default:
		return fmt.Errorf("parse %s: %w", name, err)
	}
	line, col := lineCol(b, off)
	return fmt.Errorf("parse %s: invalid JSON at byte %d (line %d:%d): %v", name, off, line, col, err)
}

// lineCol turns a byte offset as json reports it (the count of bytes read when
// the error was found) into a 1-based line and column.
func lineCol(b []byte, off int64) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	prefix := b[:off]
	line = bytes.Count(prefix, []byte("\n")) + 1
	col = len(prefix) - (bytes.LastIndexByte(prefix, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}
