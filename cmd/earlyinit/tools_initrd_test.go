//go:build initrd

package main

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/userdata"
)

// TestInitrdLeavesOutTools: the initramfs builds leave out render,
// cloud-id, make-mime and collect-logs (each costs more than a few KB
// there), naming the binary that has them, and the Jinja engine: their
// late stages drop a template with a warning saying which binary renders
// it, and keep the other parts.
func TestInitrdLeavesOutTools(t *testing.T) {
	for _, n := range []string{"render", "cloud-id", "make-mime", "collect-logs"} {
		v, ok := verbs[n]
		if !ok || v.flags != nil || !strings.Contains(v.help, "/usr/bin/earlyinit") {
			t.Errorf("verb %s: %+v, want the stand-in naming /usr/bin/earlyinit", n, v)
		}
	}
	parts := []userdata.Part{
		{Type: userdata.TypeJinja, Filename: "part-001", Content: []byte("## template: jinja\n#cloud-config\n")},
		{Type: userdata.TypeCloudConfig, Filename: "part-002", Content: []byte("#cloud-config\n")},
	}
	read := func() ([]byte, error) { t.Error("the instance data was read"); return nil, nil }
	got, warns := userdata.RenderJinja(parts, read, nil)
	if len(got) != 1 || got[0].Filename != "part-002" || len(warns) != 1 || !strings.Contains(string(warns[0]), "/usr/bin/earlyinit") {
		t.Errorf("parts %v, warnings %q", got, warns)
	}
}
