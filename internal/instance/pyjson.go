package instance

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/earlyinit/earlyinit/internal/pyjson"
)

// generic turns any JSON-marshalable value into generic JSON values
// (map[string]any, []any, string, json.Number, bool, nil), keeping numbers as
// they were written.
func generic(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeGeneric(b)
}

func decodeGeneric(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return out, nil
}

// pyJSON encodes a generic JSON value exactly as Python's
// json.dumps(v, indent=1, sort_keys=True) does, which is how cloud-init
// writes instance-data.json, with the trailing newline cloud-init's
// write_json adds.
func pyJSON(v any) ([]byte, error) {
	b, err := pyjson.Dumps(v, 1)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
