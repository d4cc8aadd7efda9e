package blockdev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mkudf makes a UDF image with mkudffs, as Azure's provisioning media is.
func mkudf(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	need(t, "mkudffs")
	p := sparse(t, dir, name, 8<<20)
	run(t, "mkudffs", append(args, p)...)
	return p
}

// TestProbeUDF compares type and label with blkid (its UUID for UDF is
// derived from the volume set identifier, which earlyinit does not need).
func TestProbeUDF(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, label string
		args        []string
	}{
		{"2048", "rd_rdfe_stable.cloudapp.net", []string{"--blocksize=2048"}},
		{"512", "Azure Provisioning", []string{"--blocksize=512"}},
		{"4096", "UDF4K", []string{"--blocksize=4096"}},
		{"ucs2", "Provisioning-ü-€", []string{"--utf8", "--blocksize=2048"}},
		{"default", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string(nil), tc.args...)
			if tc.label != "" {
				args = append(args, "--label="+tc.label)
			}
			img := mkudf(t, dir, tc.name+".img", args...)
			want := blkid(t, img)
			got, err := probeFile(t, img)
			if err != nil || got.Type != "udf" || got.Type != want["TYPE"] || got.Label != want["LABEL"] {
				t.Errorf("Probe = %+v, %v; blkid says TYPE=%q LABEL=%q", got, err, want["TYPE"], want["LABEL"])
			}
			if tc.label != "" && got.Label != tc.label {
				t.Errorf("label %q, want %q", got.Label, tc.label)
			}
		})
	}
}

// TestProbeUDFCorrupt: a recognition sequence without an anchor is an
// error naming what is missing, not a UDF volume; an image without the
// sequence is not UDF at all.
func TestProbeUDFCorrupt(t *testing.T) {
	dir := t.TempDir()
	img := mkudf(t, dir, "udf.img", "--blocksize=2048", "--label=x")
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, bs := range []int{512, 2048, 4096} {
		if off := udfAnchor * bs; off+2 <= len(b) {
			b[off], b[off+1] = 0, 0
		}
	}
	bad := filepath.Join(dir, "bad.img")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if fs, err := probeFile(t, bad); err == nil || !strings.Contains(err.Error(), "no anchor volume descriptor pointer") {
		t.Errorf("no anchor: %+v, %v", fs, err)
	}
	if fs, ok, err := probeUDF(strings.NewReader(strings.Repeat("\x00", 64<<10)), 64<<10); ok || err != nil {
		t.Errorf("zeros: %+v, %v, %v", fs, ok, err)
	}
}
