package instance

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/paths"
)

// TestQueryAgainstCloudInit checks Query and ListKeys against what
// cloud-init's own query code answers for the same instance data and keys
// (testdata/gen-query.py wrote testdata/query-cloudinit.json).
func TestQueryAgainstCloudInit(t *testing.T) {
	data, err := os.ReadFile("testdata/query-instance-data.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/query-cloudinit.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Out  *string  `json:"out"`
		Keys []string `json:"keys"`
		Err  string   `json:"err"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 20 {
		t.Fatalf("only %d cases in the fixture", len(want))
	}
	for key, w := range want {
		got, err := Query(data, key)
		if w.Err != "" {
			if err == nil {
				t.Errorf("Query(%q) = %q, want error %q", key, got, w.Err)
			} else if !strings.EqualFold(err.Error(), w.Err) {
				t.Errorf("Query(%q) error %q, want %q", key, err, w.Err)
			}
			continue
		}
		if err != nil || w.Out == nil || got != *w.Out {
			t.Errorf("Query(%q) = %q, %v\nwant %q", key, got, err, deref(w.Out))
		}
		keys, err := ListKeys(data, key)
		if w.Keys == nil {
			if err == nil {
				t.Errorf("ListKeys(%q) = %v, want an error: not a dict", key, keys)
			}
		} else if err != nil || !reflect.DeepEqual(keys, w.Keys) {
			t.Errorf("ListKeys(%q) = %v, %v; want %v", key, keys, err, w.Keys)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestQueryErrors(t *testing.T) {
	for _, tt := range []struct{ data, key, want string }{
		{`[1]`, "a", "not a JSON object"},
		{`{"a":`, "a", "instance data"},
		{`{"a": 1} {}`, "", "trailing data"},
		{`{"a": "s"}`, "a.b", "instance-data 'a' has no 'b'"},
		{`{"a": [1]}`, "a.0", "instance-data 'a' has no '0'"},
	} {
		if got, err := Query([]byte(tt.data), tt.key); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Query(%s, %q) = %q, %v; want error with %q", tt.data, tt.key, got, err, tt.want)
		}
	}
}

// writeLayout writes what query reads of the instance cache under root,
// as internal/instance/cache lays it out: both instance-data files in
// paths.RunDir, the payloads in d's instance directory and the instance
// link to it. (The cache package's tests query what Store writes.)
func writeLayout(t *testing.T, root string, d *Data) {
	t.Helper()
	redacted, sensitive, err := InstanceData(d, SysInfo{})
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(root, paths.RunDir)
	idir := filepath.Join(root, paths.InstancesDir, InstanceDirName(d.InstanceID))
	for _, dir := range []string{run, idir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string][]byte{
		filepath.Join(run, InstanceDataFile):          redacted,
		filepath.Join(run, InstanceDataSensitiveFile): sensitive,
		filepath.Join(idir, "user-data.txt"):          d.UserData,
		filepath.Join(idir, "vendor-data.txt"):        d.VendorData,
	} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("instances/"+InstanceDirName(d.InstanceID), filepath.Join(root, paths.InstanceLink)); err != nil {
		t.Fatal(err)
	}
}

func TestReadQueryData(t *testing.T) {
	root := t.TempDir()
	d := testData()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("#cloud-config\nruncmd: [gz]\n"))
	zw.Close()
	d.UserData = gz.Bytes()
	d.VendorData = []byte{0xff, 0xfe, 0x00}
	writeLayout(t, root, d)

	for _, tt := range []struct {
		uid        int
		file       string
		userdata   string
		vendordata string
	}{
		{0, InstanceDataSensitiveFile, "#cloud-config\nruncmd: [gz]\n", "ci-b64://4A"},
		{1000, InstanceDataFile,
			"<redacted for non-root user> file:" + filepath.Join(root, "/var/lib/earlyinit/instance/user-data.txt"),
			"<redacted for non-root user> file:" + filepath.Join(root, "/var/lib/earlyinit/instance/vendor-data.txt")},
	} {
		p := DefaultQueryPaths(root, tt.uid)
		if filepath.Base(p.InstanceData) != tt.file {
			t.Errorf("uid %d reads %s, want %s", tt.uid, p.InstanceData, tt.file)
		}
		b, err := ReadQueryData(p, tt.uid == 0)
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]string{"userdata": tt.userdata, "vendordata": tt.vendordata} {
			if got, err := Query(b, key); err != nil || got != want {
				t.Errorf("uid %d: %s = %q, %v; want %q", tt.uid, key, got, err, want)
			}
		}
		pass, _ := Query(b, "ds.meta_data.admin_pass")
		if wantPass := map[int]string{0: d.AdminPass, 1000: Redacted}[tt.uid]; pass != wantPass {
			t.Errorf("uid %d: admin_pass = %q, want %q", tt.uid, pass, wantPass)
		}
	}
	// Root falls back to the redacted file when the sensitive one is gone.
	os.Remove(filepath.Join(root, paths.RunDir, InstanceDataSensitiveFile))
	if p := DefaultQueryPaths(root, 0); filepath.Base(p.InstanceData) != InstanceDataFile {
		t.Errorf("without the sensitive file root reads %s", p.InstanceData)
	}
	if _, err := ReadQueryData(queryPaths{InstanceData: filepath.Join(root, "missing")}, true); err == nil {
		t.Errorf("ReadQueryData of a missing file succeeded")
	}
}

func FuzzQuery(f *testing.F) {
	data, err := os.ReadFile("testdata/query-instance-data.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, "v1.instance_id")
	f.Add(data, "ds.meta_data.meta.v1_0.k")
	f.Add(data, "")
	f.Add([]byte(`{"v1": {"v2": {"a-b": [1.5e300, "\u00e9"]}}}`), "a_b")
	f.Add([]byte(`{"a": 1e999}`), "a")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		out, err := Query(data, key)
		if err != nil {
			return
		}
		// A non-string answer is JSON that parses back.
		var v any
		if json.Unmarshal([]byte(out), &v) == nil {
			return
		}
		if s, err2 := lookupString(data, key); err2 != nil || s != out {
			t.Fatalf("Query(%q) = %q is neither JSON nor the string leaf", key, out)
		}
	})
}

func lookupString(data []byte, key string) (string, error) {
	m, err := parseInstanceData(data)
	if err != nil {
		return "", err
	}
	v, err := lookupKey(m, key)
	if err != nil {
		return "", err
	}
	s, _ := v.(string)
	return s, nil
}
