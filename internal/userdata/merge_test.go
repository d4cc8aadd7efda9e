package userdata

import (
	"fmt"
	"reflect"
	"testing"
)

func ccPart(name, content, mergeType string) Part {
	return Part{Type: TypeCloudConfig, Filename: name, Content: []byte(content), MergeType: mergeType}
}

// The expected results were computed with cloud-init 22.4's own mergers
// (cloudinit.mergers.construct over the same inputs).
func TestMergeParts(t *testing.T) {
	tests := []struct {
		name  string
		parts []Part
		want  string // fmt.Sprint of the merged map
		warns []string
	}{
		{
			name: "default: later top-level keys replace whole",
			parts: []Part{
				ccPart("1", "#cloud-config\na: 1\nl: [1, 2, 3]\nd: {x: 1, y: 2}\n", ""),
				ccPart("2", "#cloud-config\na: 2\nl: [9]\nd: {x: 5}\n", ""),
			},
			want: "map[a:2 d:map[x:5] l:[9]]",
		},
		{
			name: "merge_how in the payload, removed from the result",
			parts: []Part{
				ccPart("1", "l: [1, 2]\nd: {l: [1]}\n", ""),
				ccPart("2", "l: [3]\nd: {l: [2]}\nmerge_how: list(append)+dict(recurse_array)+str()\n", ""),
			},
			want: "map[d:map[l:[1 2]] l:[1 2 3]]",
		},
		{
			name: "Merge-Type header: list replace works index by index",
			parts: []Part{
				ccPart("1", "l: [1]\ns: a\n", ""),
				ccPart("2", "l: [7, 8]\ns: b\n", "dict(no_replace,recurse_list)+list(replace)+str(append)"),
			},
			want: "map[l:[7] s:a]",
		},
		{
			name: "allow_delete",
			parts: []Part{
				ccPart("1", "l: [1]\ns: a\nk: 1\n", ""),
				ccPart("2", "s: b\nk: null\n", "dict(replace,allow_delete)"),
			},
			want: "map[l:[1] s:b]",
		},
		{
			name: "prepend and string append",
			parts: []Part{
				ccPart("1", "l: [1, 2]\ns: a\n", ""),
				ccPart("2", "l: [3]\ns: b\n", "dict(recurse_str,recurse_list)+list(prepend)+str(append)"),
			},
			want: "map[l:[3 1 2] s:ab]",
		},
		{
			name: "merge_how as a list, merge_type",
			parts: []Part{
				ccPart("1", "merge_how: [{name: list, settings: [append]}, [dict, recurse_array]]\nl: [1]\n", ""),
				ccPart("2", "l: [2]\nmerge_type: list(append)+dict(recurse_array)\n", ""),
			},
			want: "map[l:[1 2]]",
		},
		{
			name: "bad parts are skipped with a warning",
			parts: []Part{
				ccPart("good", "a: 1\n", ""),
				ccPart("empty", "#cloud-config\n", ""),
				ccPart("list", "- a\n", ""),
				ccPart("broken", "a: [\n", ""),
				ccPart("merger", "a: 2\nmerge_how: foo()\n", ""),
				ccPart("syntax", "a: 2\n", "dict(replace"),
				{Type: TypeShellScript, Content: []byte("a: 3\n")},
			},
			want:  "map[a:1]",
			warns: []string{"part empty: cloud-config: empty cloud config", "part list: cloud-config: top level is a list", "part broken:", `unknown merger "foo"`, "not in the form"},
		},
		{
			name:  "YAML 1.1 scalars",
			parts: []Part{ccPart("1", "a: off\nb: 0644\nc: 09\nd: 1:20\ne: 1e3\nf: 0x1F\ng: ~\nh: 'no'\ni: !!binary aGk=\nj: 1_000\nk: 2.5\n", "")},
			want:  "map[a:false b:420 c:09 d:80 e:1e3 f:31 g:<nil> h:no i:[104 105] j:1000 k:2.5]",
		},
		{
			name:  "anchors and merge keys",
			parts: []Part{ccPart("1", "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n", "")},
			want:  "map[base:map[x:1 y:2] d:map[x:1 y:3]]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warns := MergeParts(tt.parts)
			if got := fmt.Sprint(cfg); got != tt.want {
				t.Errorf("merged:\n got %s\nwant %s", got, tt.want)
			}
			for _, w := range tt.warns {
				if !hasWarning(warns, w) {
					t.Errorf("no warning %q in %q", w, warns)
				}
			}
			if len(tt.warns) == 0 && len(warns) != 0 {
				t.Errorf("unexpected warnings %q", warns)
			}
		})
	}
}

func TestMergeConfigs(t *testing.T) {
	// cloud-init: util.mergemanydict over the same two dicts.
	user := map[string]any{"a": 1, "l": []any{1}, "d": map[string]any{"x": 1}, "s": "str", "n": nil,
		"v": map[string]any{"enabled": false}}
	vendor := map[string]any{"a": 2, "l": []any{2, 3}, "d": map[string]any{"x": 2, "y": 3}, "s": map[string]any{"m": 1},
		"n": map[string]any{"z": 1}, "b": true, "v": map[string]any{"enabled": true, "prefix": []any{}}}
	got, warns := MergeConfigs(user, vendor)
	want := map[string]any{"a": 1, "l": []any{1}, "d": map[string]any{"x": 1, "y": 3}, "s": map[string]any{"m": 1},
		"n": nil, "v": map[string]any{"enabled": false, "prefix": []any{}}, "b": true}
	if !reflect.DeepEqual(got, want) || len(warns) != 0 {
		t.Errorf("MergeConfigs:\n got %v\nwant %v\nwarnings %q", got, want, warns)
	}
	if _, ok := user["b"]; ok {
		t.Error("MergeConfigs modified its input")
	}
	if d := user["d"].(map[string]any); len(d) != 1 {
		t.Error("MergeConfigs modified a nested input map")
	}
}

func TestMergeVendor(t *testing.T) {
	vendor := []Part{
		ccPart("v1", "#cloud-config\nhostname: vendor\nntp: {enabled: true}\nruncmd: [vendor]\n", ""),
		{Type: TypeShellScript, Filename: "v.sh", Content: []byte("#!/bin/sh\n")},
	}
	tests := []struct {
		name      string
		user      string
		want      string
		vendorLen int
		warns     []string
	}{
		{"user wins, vendor fills in", "hostname: user\nruncmd: [user]\n", "map[hostname:user ntp:map[enabled:true] runcmd:[user]]", 2, nil},
		{"explicitly enabled", "vendor_data: {enabled: true}\n", "map[hostname:vendor ntp:map[enabled:true] runcmd:[vendor] vendor_data:map[enabled:true]]", 2, nil},
		{"map without enabled", "vendor_data: {prefix: [x]}\n", "map[hostname:vendor ntp:map[enabled:true] runcmd:[vendor] vendor_data:map[prefix:[x]]]", 2, nil},
		{"disabled", "hostname: user\nvendor_data: {enabled: false}\n", "map[hostname:user vendor_data:map[enabled:false]]", 0, nil},
		{"YAML 1.1 off", "vendor_data: {enabled: off}\n", "map[vendor_data:map[enabled:false]]", 0, nil},
		{"string false", "vendor_data: {enabled: \"false\"}\n", "map[vendor_data:map[enabled:false]]", 0, []string{"deprecated"}},
		{"string yes", "vendor_data: {enabled: \"yes\"}\n", "map[hostname:vendor ntp:map[enabled:true] runcmd:[vendor] vendor_data:map[enabled:yes]]", 2, []string{"deprecated"}},
		{"null enabled", "vendor_data: {enabled: null}\n", "map[vendor_data:map[enabled:<nil>]]", 0, nil},
		{"vendor_data false", "vendor_data: false\n", "map[vendor_data:false]", 0, []string{"invalid vendor_data"}},
		{"vendor_data string", "vendor_data: \"false\"\n", "map[vendor_data:false]", 0, []string{"invalid vendor_data"}},
		{"disabled handler", "vendor_data: {disabled_handlers: [text/cloud-config]}\n", "map[vendor_data:map[disabled_handlers:[text/cloud-config]]]", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := []Part{ccPart("u", "#cloud-config\n"+tt.user, "")}
			cfg, warns := Merge(user, vendor)
			if got := fmt.Sprint(cfg); got != tt.want {
				t.Errorf("Merge:\n got %s\nwant %s", got, tt.want)
			}
			ucfg, _ := MergeParts(user)
			vparts, _ := VendorParts(ucfg, vendor)
			if len(vparts) != tt.vendorLen {
				t.Errorf("VendorParts: %d parts, want %d", len(vparts), tt.vendorLen)
			}
			for _, w := range tt.warns {
				if !hasWarning(warns, w) {
					t.Errorf("no warning %q in %q", w, warns)
				}
			}
			if len(tt.warns) == 0 && len(warns) != 0 {
				t.Errorf("unexpected warnings %q", warns)
			}
		})
	}
}

// TestMergeVendor2: user-data over vendor-data2 over vendor-data, each
// vendor source switched off by the user's own key only.
func TestMergeVendor2(t *testing.T) {
	part := func(s string) []Part { return []Part{{Type: TypeCloudConfig, Content: []byte(s)}} }
	for _, tt := range []struct {
		name                 string
		user, vendor, vendr2 string
		want                 map[string]any
	}{
		{"order", "a: user\n", "a: v1\nb: v1\nc: v1\n", "a: v2\nb: v2\n", map[string]any{"a": "user", "b": "v2", "c": "v1"}},
		{"vendor2 off", "vendor_data2: {enabled: false}\n", "b: v1\n", "b: v2\n", map[string]any{"vendor_data2": map[string]any{"enabled": false}, "b": "v1"}},
		{"vendor off", "vendor_data: {enabled: false}\n", "b: v1\nc: v1\n", "b: v2\n", map[string]any{"vendor_data": map[string]any{"enabled": false}, "b": "v2"}},
		{"vendor2 cannot turn vendor off", "a: 1\n", "c: v1\n", "vendor_data: {enabled: false}\n", map[string]any{"a": 1, "c": "v1", "vendor_data": map[string]any{"enabled": false}}},
	} {
		got, _ := MergeVendor2(part(tt.user), part(tt.vendor), part(tt.vendr2))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
