// Package timeline turns what a boot left (the initramfs's boot record and
// the late stages' status) into one timeline from the kernel's start, and
// draws it as SVG: `earlyinit analyze plot`, in the manner of
// `systemd-analyze plot`.
package timeline

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
)

// Bar is one span of the boot, in seconds since the kernel started.
type Bar struct {
	// Label names it; Group is the row group ("kernel", "initramfs",
	// "boot stage", "final stage").
	Label, Group string
	Start, End   float64
	// Status is "ok", "error" or a module's status; Note is shown on
	// hover (an error's text).
	Status, Note string
}

// Timeline is the bars of one boot, in start order within each group.
type Timeline struct {
	Title string
	Bars  []Bar
	// Marks are instants: the switch to the real init.
	Marks []Mark
}

// Mark is an instant on the timeline.
type Mark struct {
	Label string
	At    float64
}

// Build makes the timeline of a boot. rec is the boot record; stages are
// status.json's boot and final stages (nil when not run). Times in the
// record are relative to earlyinit's start, the stages' are wall-clock:
// rec.StartedUnix and rec.Uptime join them. A record without them (an
// older earlyinit) starts the timeline at earlyinit's start and leaves
// the stages out.
func Build(rec boot.Record, bootStage, finalStage *late.StageStatus) Timeline {
	t := Timeline{Title: fmt.Sprintf("earlyinit %s: boot to %s", rec.Version, rec.Init)}
	if rec.Mode != "" {
		t.Title += " (" + rec.Mode + " initramfs)"
	}
	off := rec.Uptime // earlyinit's start, since the kernel's
	if off > 0 {
		t.Bars = append(t.Bars, Bar{Label: "kernel and earlier initramfs", Group: "kernel", Start: 0, End: off, Status: "ok"})
	}
	for _, s := range rec.Steps {
		st := "ok"
		if s.Error != "" {
			st = "error"
		}
		start := off + s.Start.Seconds()
		t.Bars = append(t.Bars, Bar{Label: s.Name, Group: "initramfs", Start: start, End: start + s.Duration.Seconds(), Status: st, Note: s.Error})
	}
	t.Marks = append(t.Marks, Mark{Label: "switch to " + rec.Init, At: off + rec.Total.Seconds()})
	if rec.StartedUnix == 0 {
		return t
	}
	// Kernel start in wall-clock seconds.
	zero := rec.StartedUnix - rec.Uptime
	for _, st := range []struct {
		name string
		s    *late.StageStatus
	}{{"boot stage", bootStage}, {"final stage", finalStage}} {
		if st.s == nil || st.s.Start == nil {
			continue
		}
		end := *st.s.Start
		if st.s.Finished != nil {
			end = *st.s.Finished
		}
		status := "ok"
		if len(st.s.Errors) > 0 {
			status = "error"
		}
		t.Bars = append(t.Bars, Bar{Label: st.name, Group: st.name, Start: *st.s.Start - zero, End: end - zero, Status: status,
			Note: strings.Join(st.s.Errors, "; ")})
		for _, m := range st.s.Modules {
			if m.Status == late.ModuleSkipped {
				continue
			}
			t.Bars = append(t.Bars, Bar{Label: m.Name, Group: st.name, Start: m.Start - zero, End: m.Start + m.Duration - zero, Status: m.Status, Note: m.Error})
		}
	}
	return t
}

// End is the timeline's last instant.
func (t Timeline) End() float64 {
	end := 0.0
	for _, b := range t.Bars {
		end = math.Max(end, b.End)
	}
	for _, m := range t.Marks {
		end = math.Max(end, m.At)
	}
	return end
}

// Layout constants, in pixels.
const (
	rowHeight = 18
	labelGap  = 6
	top       = 60
	left      = 20
)

// colour is a bar's colour by its status, false for another status.
func colour(status string) (string, bool) {
	switch status {
	case "ok":
		return "#7aa6da", true
	case "error":
		return "#d54e53", true
	case "incomplete":
		return "#e7c547", true
	}
	return "", false
}

// SVG writes the timeline as a standalone SVG document: one row per bar,
// a second grid, each bar's label and duration beside it, its note on
// hover. Every text is XML-escaped.
func (t Timeline) SVG(w io.Writer) error {
	end := t.End()
	// Wide enough to read a 10 ms step, narrow enough for a browser.
	scale := math.Min(400, math.Max(25, 2000/math.Max(end, 0.001)))
	width := left*2 + int(math.Ceil(end*scale)) + 360
	height := top + rowHeight*(len(t.Bars)+2) + 20
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", width, height)
	fmt.Fprintf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n")
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"22\" font-size=\"16\">%s</text>\n", left, esc(t.Title))
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"40\" fill=\"#555\">%s from the kernel's start to the last stage's end</text>\n", left, esc(secs(end)))
	// The second grid.
	step := 1.0
	for end/step > 40 {
		step *= 5
	}
	gridBottom := top + rowHeight*(len(t.Bars)+1)
	for s := 0.0; s <= end+step/2; s += step {
		x := left + s*scale
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, top-6, x, gridBottom)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" fill=\"#888\" font-size=\"10\">%gs</text>\n", x+2, top-8, s)
	}
	for i, bar := range t.Bars {
		y := top + rowHeight*i
		x := left + bar.Start*scale
		wd := math.Max(1, (bar.End-bar.Start)*scale)
		col, ok := colour(bar.Status)
		if !ok {
			col = "#b9ca4a"
		}
		if bar.Group == "kernel" {
			col = "#cccccc"
		}
		note := bar.Group + ": " + bar.Label + " " + secs(bar.End-bar.Start)
		if bar.Note != "" {
			note += " — " + bar.Note
		}
		fmt.Fprintf(&b, "<g><title>%s</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", esc(note), x, y, wd, rowHeight-4, col)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\">%s (%s)</text></g>\n", x+wd+labelGap, y+rowHeight-7, esc(bar.Label), esc(secs(bar.End-bar.Start)))
	}
	for _, m := range t.Marks {
		x := left + m.At*scale
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d54e53\" stroke-dasharray=\"4,3\"/>", x, top-6, x, gridBottom)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" fill=\"#d54e53\">%s at %s</text>\n", x+3, gridBottom+14, esc(m.Label), esc(secs(m.At)))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
