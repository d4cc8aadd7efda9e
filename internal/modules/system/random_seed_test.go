package system

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// seedOracle is cc_seed_random._decode, its output in base64.
const seedOracle = `
import base64
from cloudinit.config import cc_seed_random
out = []
for c in json.load(sys.stdin):
    out.append(base64.b64encode(cc_seed_random._decode(c[0], c[1])).decode())
json.dump(out, sys.stdout)
`

func TestSeedRandomDecodeMatchesCloudInit(t *testing.T) {
	cases := [][2]string{{"my random string", ""}, {"raw data", "raw"}, {"aGVsbG8gd29ybGQ=", "b64"}, {"aGVs\nbG8=", "base64"}}
	var want []string
	coretest.CloudinitOracle(t, seedOracle, cases, &want)
	for i, c := range cases {
		data := c[0]
		got, err := seedData(ccfg.RandomSeed{Data: &data, Encoding: c[1]})
		if err != nil {
			t.Fatal(err)
		}
		if w, _ := base64.StdEncoding.DecodeString(want[i]); !bytes.Equal(got, w) {
			t.Errorf("%q %s: got %q, want %q", c[0], c[1], got, w)
		}
	}
}

func TestSeedRandom(t *testing.T) {
	gz := coretest.Gzipped("gzipped seed")
	for _, tt := range []struct {
		name  string
		rc    map[string]any
		file  string
		want  string
		calls []string
	}{
		{"raw to /dev/urandom", map[string]any{"data": "my random string"}, "/dev/urandom", "my random string", nil},
		{"b64 to a file, with a command", map[string]any{"file": "/var/lib/rnd", "data": base64.StdEncoding.EncodeToString([]byte("s3cr3t-bytes")), "encoding": "base64", "command": []any{"pollinate", "--server=x"}}, "/var/lib/rnd", "s3cr3t-bytes", []string{"pollinate --server=x"}},
		{"gzip", map[string]any{"file": "/var/lib/rnd", "data": gz, "encoding": "gz"}, "/var/lib/rnd", "gzipped seed", nil},
		{"b64-gz", map[string]any{"file": "/var/lib/rnd", "data": base64.StdEncoding.EncodeToString(gz), "encoding": "b64-gz"}, "/var/lib/rnd", "gzipped seed", nil},
		{"missing command not required", map[string]any{"file": "/var/lib/rnd", "data": "x", "command": []any{"nosuch"}}, "/var/lib/rnd", "x", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.DistroEnv(t, "debian", "", "/usr/bin/pollinate")
			te.Write("/dev/urandom", "", 0o666)
			te.Cfg["random_seed"] = tt.rc
			if err := te.RunFunc(SeedRandom); err != nil {
				t.Fatal(err)
			}
			if got := te.Read(tt.file); got != tt.want {
				t.Errorf("%s: got %q, want %q", tt.file, got, tt.want)
			}
			if tt.file != "/dev/urandom" {
				te.WantMode(tt.file, 0o600, 0, 0)
			}
			te.WantCalls(tt.calls...)
			if len(tt.calls) > 0 {
				if env := te.Fake.Calls[0].Env; len(env) != 1 || env[0] != "RANDOM_SEED_FILE="+tt.file {
					t.Errorf("command env %q", env)
				}
			}
			if strings.Contains(te.LogBuf.String(), tt.want) {
				t.Errorf("the seed is in the log: %s", te.LogBuf.String())
			}
		})
	}
}

func TestSeedRandomRejects(t *testing.T) {
	for _, tt := range []struct {
		rc   map[string]any
		want string
	}{
		{map[string]any{"data": "x", "encoding": "rot13"}, "random_seed.encoding \"rot13\""},
		{map[string]any{"data": "abc", "encoding": "b64"}, "random_seed.data: encoding b64: bad base64"},
		{map[string]any{"data": "x", "file": "relative/seed"}, "random_seed.file"},
		{map[string]any{"data": "x", "file": "/var/seed\nx"}, "random_seed.file"},
		{map[string]any{"command_required": true}, "random_seed.command: none given"},
		{map[string]any{"command": []any{"nosuch"}, "command_required": true}, "random_seed.command: \"nosuch\" not found"},
		{map[string]any{"command": "pollinate"}, "random_seed.command: want a list"},
	} {
		te := coretest.DistroEnv(t, "debian", "")
		te.Cfg["random_seed"] = tt.rc
		err := te.RunFunc(SeedRandom)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.rc, err, tt.want)
		}
		if len(te.Calls()) > 0 {
			t.Errorf("%v: ran %v", tt.rc, te.Calls())
		}
	}
}
