package repos

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestSystemInfoMirrorTemplates: system_info.package_mirrors' search
// templates are Python's tmpl % subst: a name the instance lacks skips
// the template (cloud-init's except KeyError), "%%" is "%", and another
// format error fails apt_configure as cloud-init's exception does.
func TestSystemInfoMirrorTemplates(t *testing.T) {
	fakeResolver(t)
	const cfg = `system_info:
  package_mirrors:
    - arches: [default]
      failsafe: {primary: "http://fail.safe/p", security: "http://fail.safe/s"}
      search:
        primary: [%s]
        security: ["http://%(missing)s.resolves/s"]
`
	for _, tt := range []struct{ name, search, want, err string }{
		{"missing name skipped", `"http://%(ec2_region)s.resolves/", "http://%(region)s.resolves/"`, "http://eu-west-1.resolves/", ""},
		{"all missing: failsafe", `"http://%(ec2_region)s.resolves/"`, "http://fail.safe/p", ""},
		{"percent escape", `"http://%(region)s.resolves/a%%20b"`, "http://eu-west-1.resolves/a%20b", ""},
		{"unnamed conversion skipped", `"http://%s.resolves/", "http://x.resolves/"`, "http://x.resolves/", ""},
		{"format error", `"http://%(region)d.resolves/"`, "", "search.primary.0: TypeError: %d format"},
		{"lone percent", `"http://x.resolves/", "http://x.resolves/100%"`, "", "search.primary.1: ValueError: incomplete format"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.NewEnv(t, strings.Replace(cfg, "%s", tt.search, 1))
			te.Env.Data = &instance.Data{Region: "eu-west-1"}
			got, err := systemInfoMirrors(t.Context(), te.Env, "amd64")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got["PRIMARY"] != tt.want || got["SECURITY"] != "http://fail.safe/s" {
				t.Errorf("got %v, want PRIMARY %s", got, tt.want)
			}
		})
	}
}

// fakeResolver makes the mirror checks resolve exactly the host names
// that end in ".resolves", for the test.
func fakeResolver(t *testing.T) {
	old := lookupHost
	t.Cleanup(func() { lookupHost = old })
	lookupHost = func(_ context.Context, host string) ([]string, error) {
		if strings.HasSuffix(host, ".resolves") {
			return []string{"192.0.2.1"}, nil
		}
		return nil, errors.New("no such host")
	}
}
