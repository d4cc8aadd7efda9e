package instance

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/internal/paths"
)

// queryPaths are the files the query verb reads, like cloud-init query's
// --instance-data, --user-data and --vendor-data.
type queryPaths struct {
	InstanceData string
	UserData     string
	VendorData   string
}

// DefaultQueryPaths returns the files cloud-init query would read for a
// user with uid, under rootDir ("/" on a running system): the sensitive
// instance data for root when it exists, else the redacted one, and the
// current instance's user-data.txt and vendor-data.txt.
func DefaultQueryPaths(rootDir string, uid int) queryPaths {
	run := filepath.Join(rootDir, paths.RunDir)
	p := queryPaths{
		InstanceData: filepath.Join(run, InstanceDataFile),
		UserData:     filepath.Join(rootDir, paths.InstanceLink, "user-data.txt"),
		VendorData:   filepath.Join(rootDir, paths.InstanceLink, "vendor-data.txt"),
	}
	if uid == 0 {
		s := filepath.Join(run, InstanceDataSensitiveFile)
		if _, err := os.Stat(s); err == nil {
			p.InstanceData = s
		}
	}
	return p
}

// ReadQueryData reads the instance data at p.InstanceData and adds the
// top-level "userdata" and "vendordata" keys cloud-init query adds: for root
// (privileged), the content of p.UserData and p.VendorData (decoded as UTF-8,
// or gunzipped, else base64 with cloud-init's "ci-b64:" prefix; "" when
// missing); for anyone else "<redacted for non-root user> file:<path>".
func ReadQueryData(p queryPaths, privileged bool) ([]byte, error) {
	b, err := os.ReadFile(p.InstanceData)
	if err != nil {
		return nil, fmt.Errorf("read instance data: %w", err)
	}
	v, err := decodeGeneric(b)
	if err != nil {
		return nil, fmt.Errorf("read instance data %s: %w", p.InstanceData, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("read instance data %s: not a JSON object", p.InstanceData)
	}
	for key, path := range map[string]string{"userdata": p.UserData, "vendordata": p.VendorData} {
		if !privileged {
			m[key] = fmt.Sprintf("<%s> file:%s", Redacted, path)
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		m[key] = payloadString(raw)
	}
	return pyJSON(m)
}

// payloadString is cloud-init query's load_userdata, with undecodable bytes
// given as "ci-b64:<base64>" as its JSON encoder does.
func payloadString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
		if u, err := io.ReadAll(zr); err == nil && utf8.Valid(u) {
			return string(u)
		}
	}
	return b64Prefix + base64.StdEncoding.EncodeToString(b)
}

// jinjaOperator is jinja2's operator_re, which cloud-init uses to make the
// underscore aliases of keys ("local-hostname" -> "local_hostname"),
// compiled on first use: a package-level regexp.MustCompile costs every
// process its 2 KB and more at initialisation (issue 18).
var jinjaOperator struct {
	once sync.Once
	re   *regexp.Regexp
}

func alias(key string) string {
	jinjaOperator.once.Do(func() {
		jinjaOperator.re = regexp.MustCompile(`//|\*\*|==|!=|>=|<=|\+|-|/|\*|%|~|\[|\]|\(|\)|\{|\}|>|<|=|\.|:|\||,|;`)
	})
	return jinjaOperator.re.ReplaceAllString(key, "_")
}

// versionKey tells a "v<N>" key: `^v[0-9]+$`.
func versionKey(k string) bool {
	if len(k) < 2 || k[0] != 'v' {
		return false
	}
	for _, c := range []byte(k[1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// convert is cloud-init's convert_jinja_instance_data: the keys of any
// "v<N>" object are also copied into the object holding it (so "instance_id"
// works as well as "v1.instance_id"), and with aliases each key with an
// operator in it gets an underscore alias.
func convert(m map[string]any, aliases bool) map[string]any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, len(m))
	for _, k := range keys {
		if sub, ok := m[k].(map[string]any); ok {
			c := convert(sub, aliases)
			out[k] = c
			if versionKey(k) {
				for sk, sv := range c {
					out[sk] = sv
				}
			}
		} else {
			out[k] = m[k]
		}
		if aliases {
			if a := alias(k); a != k {
				out[a] = out[k]
			}
		}
	}
	return out
}

// lookup walks the dot-separated key in the converted instance data as
// cloud-init query does: each part must name a key, or the underscore alias
// of one.
func lookupKey(data map[string]any, key string) (any, error) {
	if key == "" {
		return convert(data, false), nil
	}
	var resp any = convert(data, false)
	var withAliases any = convert(data, true)
	walked := ""
	for _, part := range strings.Split(key, ".") {
		wa, _ := withAliases.(map[string]any)
		next, ok := wa[part]
		if !ok {
			if walked == "" {
				return nil, fmt.Errorf("undefined instance-data key '%s'", key)
			}
			return nil, fmt.Errorf("instance-data '%s' has no '%s'", walked, part)
		}
		withAliases = next
		r, _ := resp.(map[string]any)
		if v, ok := r[part]; ok {
			resp = v
		} else {
			ks := make([]string, 0, len(r))
			for k := range r {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				if alias(k) == part {
					resp = r[k]
					break
				}
			}
		}
		if walked != "" {
			walked += "."
		}
		walked += part
	}
	return resp, nil
}

func parseInstanceData(b []byte) (map[string]any, error) {
	v, err := decodeGeneric(b)
	if err != nil {
		return nil, fmt.Errorf("instance data: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("instance data: not a JSON object")
	}
	return m, nil
}

// Query returns what `cloud-init query <key>` prints for instance data b,
// without the final newline. key is a dot-separated path such as
// "v1.instance_id", "instance_id" (v1 keys are also at the top) or
// "ds.meta_data.local_hostname" (an underscore alias matches
// "local-hostname"); "" is the whole data, as --all. A string prints as it
// is; anything else prints as JSON in cloud-init's format.
func Query(instanceData []byte, key string) (string, error) {
	m, err := parseInstanceData(instanceData)
	if err != nil {
		return "", err
	}
	v, err := lookupKey(m, key)
	if err != nil {
		return "", err
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := pyJSON(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// ListKeys returns the sorted keys of the object at key ("" for the top),
// as `cloud-init query --list-keys [key]`.
func ListKeys(instanceData []byte, key string) ([]string, error) {
	m, err := parseInstanceData(instanceData)
	if err != nil {
		return nil, err
	}
	v, err := lookupKey(m, key)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("--list-keys provided but '%s' is not a dict", key)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}
