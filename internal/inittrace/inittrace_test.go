package inittrace

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []Init
		err      string
	}{
		{
			name: "runtime lines",
			in: "init internal/bytealg @0.003 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
				"init github.com/earlyinit/earlyinit/internal/userdata @4.1 ms, 0.27 ms clock, 114864 bytes, 1079 allocs\n",
			want: []Init{
				{Package: "internal/bytealg", Start: 3 * time.Microsecond},
				{Package: "github.com/earlyinit/earlyinit/internal/userdata", Start: 4100 * time.Microsecond, Clock: 270 * time.Microsecond, Bytes: 114864, Allocs: 1079},
			},
		},
		{
			name: "other lines skipped",
			in:   "gc 1 @0.01s 1%: ...\nhello\ninit os @1.6 ms, 0.040 ms clock, 528 bytes, 15 allocs\n",
			want: []Init{{Package: "os", Start: 1600 * time.Microsecond, Clock: 40 * time.Microsecond, Bytes: 528, Allocs: 15}},
		},
		{name: "none", in: "hello\n"},
		{name: "short", in: "init os @1.6 ms\n", err: "line 1"},
		{name: "bad number", in: "x\ninit os @1.6 ms, x ms clock, 528 bytes, 15 allocs\n", err: "line 2"},
		{name: "bad bytes", in: "init os @1.6 ms, 0.1 ms clock, -- bytes, 15 allocs\n", err: "bytes"},
		{name: "negative", in: "init os @-1 ms, 0.1 ms clock, 1 bytes, 15 allocs\n", err: "negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse() error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(): %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
