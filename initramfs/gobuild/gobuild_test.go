package gobuild

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestTags(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{"initrd"}},
		{[]string{"faultinject"}, []string{"initrd", "faultinject"}},
		{[]string{"faultinject", "initrd"}, []string{"faultinject", "initrd"}},
	} {
		if got := Tags(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tags(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// deps lists the packages earlyinit links with tags.
func deps(t *testing.T, tags []string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-tags", strings.Join(tags, ","), "github.com/earlyinit/earlyinit/cmd/earlyinit").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// What the initramfs build leaves out, to stay within the size goal:
// TLS and the image- and package-building code. The full build links
// them, so the list is not vacuous.
func TestInitrdBuildLeavesOut(t *testing.T) {
	out := []string{"crypto/tls", "crypto/x509", "github.com/earlyinit/earlyinit/initramfs", "github.com/earlyinit/earlyinit/internal/seed", "github.com/u-root/mkuimage/cpio"}
	initrd, full := deps(t, Tags(nil)), deps(t, nil)
	for _, p := range out {
		if slices.Contains(initrd, p) {
			t.Errorf("the initramfs build links %s", p)
		}
		if !slices.Contains(full, p) {
			t.Errorf("the full build does not link %s: update this list", p)
		}
	}
}
