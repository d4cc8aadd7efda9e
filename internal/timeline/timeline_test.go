package timeline

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
)

func f(v float64) *float64 { return &v }

// A boot: the kernel ran 2.5 s before earlyinit, which started at wall
// time 1000.0; the boot stage ran from 1010 to 1012 with one module,
// the final stage from 1020 to 1021.5 with a failing one.
func sample() (boot.Record, *late.StageStatus, *late.StageStatus) {
	rec := boot.Record{
		Version: "v1", Init: "/sbin/init", Total: 1500 * time.Millisecond,
		StartedUnix: 1000, Uptime: 2.5,
		Steps: []boot.StepRecord{
			{Name: "modules", Start: 0, Duration: 400 * time.Millisecond},
			{Name: "root", Start: 400 * time.Millisecond, Duration: 300 * time.Millisecond, Error: `no "root" <here> & there`},
		},
	}
	bs := &late.StageStatus{Start: f(1010), Finished: f(1012), Modules: []late.ModuleResult{
		{Name: "users_groups", Status: "ok", Start: 1010.5, Duration: 1},
		{Name: "skipped_one", Status: late.ModuleSkipped, Start: 1011, Duration: 0},
	}}
	fs := &late.StageStatus{Start: f(1020), Finished: f(1021.5), Errors: []string{"runcmd failed"}, Modules: []late.ModuleResult{
		{Name: "scripts_user", Status: "error", Start: 1020, Duration: 1.5, Error: "exit 1"},
	}}
	return rec, bs, fs
}

func TestBuild(t *testing.T) {
	tl := Build(sample())
	want := []struct {
		label, group string
		start, end   float64
		status       string
	}{
		{"kernel and earlier initramfs", "kernel", 0, 2.5, "ok"},
		{"modules", "initramfs", 2.5, 2.9, "ok"},
		{"root", "initramfs", 2.9, 3.2, "error"},
		{"boot stage", "boot stage", 12.5, 14.5, "ok"},
		{"users_groups", "boot stage", 13, 14, "ok"},
		{"final stage", "final stage", 22.5, 24, "error"},
		{"scripts_user", "final stage", 22.5, 24, "error"},
	}
	if len(tl.Bars) != len(want) {
		t.Fatalf("%d bars, want %d: %+v", len(tl.Bars), len(want), tl.Bars)
	}
	for i, w := range want {
		b := tl.Bars[i]
		if b.Label != w.label || b.Group != w.group || math.Abs(b.Start-w.start) > 1e-9 || math.Abs(b.End-w.end) > 1e-9 || b.Status != w.status {
			t.Errorf("bar %d = %+v, want %+v", i, b, w)
		}
	}
	if len(tl.Marks) != 1 || math.Abs(tl.Marks[0].At-4.0) > 1e-9 {
		t.Errorf("marks = %+v, want the switch at 4s", tl.Marks)
	}
	if tl.End() != 24 {
		t.Errorf("End = %v, want 24", tl.End())
	}
}

// A record from an earlier earlyinit (no wall-clock start) draws the
// initramfs alone, from earlyinit's start.
func TestBuildOldRecord(t *testing.T) {
	rec, bs, fs := sample()
	rec.StartedUnix, rec.Uptime = 0, 0
	tl := Build(rec, bs, fs)
	if len(tl.Bars) != 2 || tl.Bars[0].Start != 0 {
		t.Errorf("bars = %+v", tl.Bars)
	}
}

// The SVG is well-formed XML with every label and note escaped.
func TestSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := Build(sample()).SVG(&buf); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, buf.String())
		}
		if c, ok := tok.(xml.CharData); ok {
			texts = append(texts, string(c))
		}
	}
	all := strings.Join(texts, "\n")
	for _, s := range []string{`no "root" <here> & there`, "users_groups (1s)", "switch to /sbin/init at 4s", "24s from the kernel's start"} {
		if !strings.Contains(all, s) {
			t.Errorf("SVG text lacks %q", s)
		}
	}
	if strings.Contains(all, "skipped_one") {
		t.Errorf("a skipped module is drawn")
	}
}
