package analyze

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
)

// TestDumpRoundTrip: Dump writes timestamps as Python's json does (5.0,
// not 5) and ParseDump reads back the same events; show and blame count
// one boot record. cmd/earlyinit's TestAnalyzeAgainstCloudInit compares
// the three with cloud-init analyze itself.
func TestDumpRoundTrip(t *testing.T) {
	start, fin := 1000.25, 1003.0
	rec := boot.Record{Version: "1.0", StartedUnix: 1000, Total: 2 * time.Second,
		Steps: []boot.StepRecord{{Name: "datasource", Start: 0, Duration: time.Second}}}
	st := &late.StageStatus{Start: &start, Finished: &fin, Modules: []late.ModuleResult{{Name: "ntp", Frequency: "once-per-instance", Status: late.ModuleOK, Start: 1001, Duration: 0.5}}}
	events, left := Events(rec, st, nil)
	if left || len(events) != 8 {
		t.Fatalf("%d events (late left out %v): %+v", len(events), left, events)
	}
	var b bytes.Buffer
	if err := Dump(&b, events); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"timestamp": 1000.0`) || !strings.Contains(b.String(), `"name": "boot/ntp"`) {
		t.Errorf("dump:\n%s", b.String())
	}
	back, err := ParseDump("dump", b.Bytes())
	if err != nil || len(back) != len(events) {
		t.Fatalf("ParseDump: %d events, %v", len(back), err)
	}
	for i := range events {
		if back[i] != events[i] {
			t.Errorf("event %d: %+v, want %+v", i, back[i], events[i])
		}
	}
	var show, blame bytes.Buffer
	Show(&show, back, ShowFormat)
	Blame(&blame, back)
	for name, out := range map[string]string{"show": show.String(), "blame": blame.String()} {
		if !strings.HasSuffix(out, "1 boot records analyzed\n") {
			t.Errorf("%s:\n%s", name, out)
		}
	}
	if !strings.Contains(show.String(), "|`->ntp ran successfully @01.00000s +00.50000s") {
		t.Errorf("show:\n%s", show.String())
	}
	if _, err := ParseDump("x", []byte(`[{"name": "a"}]`)); err == nil {
		t.Error("an event without a timestamp was read")
	}
}
