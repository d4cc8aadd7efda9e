package ccfg_test

import (
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// missing, as a value of oracleValues, is the key not given: the
// document is {}.
const missing = "(missing)"

// oracleValues runs prog, cloud-init's Python reading documents (see
// oracle.Run), on "k: V" for each V of values, and calls each with the
// value as earlyinit loads it (given is false for missing) and
// cloud-init's answer.
func oracleValues[W any](t *testing.T, prog string, values []string, each func(v string, x any, given bool, w W)) {
	t.Helper()
	docs := make([]string, len(values))
	for i, v := range values {
		docs[i] = "k: " + v
		if v == missing {
			docs[i] = "{}"
		}
	}
	var want []W
	oracle.Run(t, prog, docs, &want)
	for i, v := range values {
		raw, err := userdata.LoadYAML([]byte(docs[i]))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		x, given := raw.(map[string]any)["k"]
		each(v, x, given, want[i])
	}
}

// differences compares earlyinit's readings with cloud-init's, but for
// the known differences it lists ("VALUE/form": why, or "VALUE" where
// the form is ""); done fails on a
// listed difference no reading met, so the list stays true.
type differences struct {
	t    *testing.T
	list map[string]string
	seen map[string]bool
}

func newDifferences(t *testing.T, list map[string]string) *differences {
	return &differences{t: t, list: list, seen: map[string]bool{}}
}

// check holds the reading form of v: agree is whether earlyinit's got is
// cloud-init's.
func (d *differences) check(v, form string, agree bool, got, cloudInit any) {
	d.t.Helper()
	key := v
	if form != "" {
		key += "/" + form
	}
	if why, ok := d.list[key]; ok {
		d.seen[key] = true
		if agree {
			d.t.Errorf("%s: %s: now as cloud-init (%v): drop the difference %q", v, form, got, why)
		}
		return
	}
	if !agree {
		d.t.Errorf("%s: %s: earlyinit %v, cloud-init %v", v, form, got, cloudInit)
	}
}

func (d *differences) done() {
	d.t.Helper()
	for k, why := range d.list {
		if !d.seen[k] {
			d.t.Errorf("difference %s (%s) was not met: drop it", k, why)
		}
	}
}
