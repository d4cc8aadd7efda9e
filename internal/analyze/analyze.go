// Package analyze is cloud-init analyze's blame, show and dump over the
// events earlyinit makes of a boot: the boot record's initramfs steps and
// the late stages' modules in status.json. cloud-init makes its events
// from its log; earlyinit's are in the same shape (Dump prints them, and
// `cloud-init analyze show -i FILE` reads that output as it reads its
// own), and blame and show are ports of cloudinit/analyze's.
package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// ShowFormat is cloud-init analyze show's default --format.
const ShowFormat = "%I%D @%Es +%ds"

// Event is one event as cloud-init analyze dump prints it; the fields
// are in its sorted key order.
type Event struct {
	Description string `json:"description"`
	EventType   string `json:"event_type"`
	Level       string `json:"level,omitempty"`
	Name        string `json:"name"`
	Origin      string `json:"origin"`
	Result      string `json:"result,omitempty"`
	Timestamp   pyNum  `json:"timestamp"`
}

// pyNum is a float that JSON-encodes as Python's json does (repr: "5.0",
// not Go's "5").
type pyNum float64

func (n pyNum) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("timestamp %v", f)
	}
	return []byte(pyyaml.FloatRepr(f)), nil
}

// Events are the events of this boot: the initramfs ("initramfs",
// each step "initramfs/STEP"), then each late stage ("boot", "final") and
// its modules ("boot/MODULE"), start and finish each, timestamps in
// seconds since the epoch. A record without its start time (an older
// earlyinit) gives the initramfs's events from 0 and no late stages.
func Events(rec boot.Record, bootStage, finalStage *late.StageStatus) (events []Event, lateLeftOut bool) {
	ev := func(name, typ, desc string, ts float64, result string) {
		events = append(events, Event{Name: name, EventType: typ, Description: desc, Origin: "earlyinit", Timestamp: pyNum(ts), Result: result})
	}
	result := func(failed bool) string {
		if failed {
			return "FAIL"
		}
		return "SUCCESS"
	}
	base := rec.StartedUnix
	desc := "earlyinit " + rec.Version + " in the initramfs"
	if rec.Mode != "" {
		desc = "earlyinit " + rec.Version + " in the " + rec.Mode + " initramfs"
	}
	ev("initramfs", "start", desc, base, "")
	failed := false
	for _, s := range rec.Steps {
		start := base + s.Start.Seconds()
		ev("initramfs/"+s.Name, "start", "running "+s.Name, start, "")
		if s.Error != "" {
			failed = true
			ev("initramfs/"+s.Name, "finish", "running "+s.Name+" failed", start+s.Duration.Seconds(), "FAIL")
		} else {
			ev("initramfs/"+s.Name, "finish", s.Name+" ran successfully", start+s.Duration.Seconds(), "SUCCESS")
		}
	}
	ev("initramfs", "finish", desc, base+rec.Total.Seconds(), result(failed))
	if base == 0 {
		return events, bootStage != nil || finalStage != nil
	}
	for _, st := range []struct {
		name, desc string
		s          *late.StageStatus
	}{{"boot", "running the boot stage's modules", bootStage}, {"final", "running the final stage's modules", finalStage}} {
		s := st.s
		if s == nil || s.Start == nil {
			continue
		}
		ev(st.name, "start", st.desc, *s.Start, "")
		for _, m := range s.Modules {
			name := st.name + "/" + m.Name
			ev(name, "start", fmt.Sprintf("running %s with frequency %s", m.Name, m.Frequency), m.Start, "")
			end := m.Start + m.Duration
			switch m.Status {
			case late.ModuleError:
				ev(name, "finish", "running "+m.Name+" failed", end, "FAIL")
			case late.ModuleSkipped:
				why := "previously ran"
				if m.Reason != "" {
					why = "skipped: " + m.Reason
				}
				ev(name, "finish", m.Name+" "+why, end, "SUCCESS")
			case late.ModuleOK:
				ev(name, "finish", m.Name+" ran successfully", end, "SUCCESS")
			default:
				ev(name, "finish", m.Name+" "+m.Status, end, "WARN")
			}
		}
		if s.Finished != nil {
			ev(st.name, "finish", st.desc, *s.Finished, result(len(s.Errors) > 0))
		}
	}
	return events, false
}

// ParseDump reads events as Dump prints them (and cloud-init analyze
// dump), from name's content b.
func ParseDump(name string, b []byte) ([]Event, error) {
	var raw []map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: not a JSON list of events (%v): earlyinit reads events as `analyze dump` prints them, not cloud-init.log", name, err)
	}
	events := make([]Event, 0, len(raw))
	for i, m := range raw {
		str := func(k string) string { s, _ := m[k].(string); return s }
		n, ok := m["timestamp"].(json.Number)
		ts, err := n.Float64()
		if !ok || err != nil || str("name") == "" {
			return nil, fmt.Errorf("%s: event %d: want a name and a numeric timestamp", name, i)
		}
		events = append(events, Event{Name: str("name"), EventType: str("event_type"), Description: str("description"),
			Origin: str("origin"), Result: str("result"), Level: str("level"), Timestamp: pyNum(ts)})
	}
	return events, nil
}

// Dump writes events as cloud-init analyze dump does (util.json_dumps:
// indent 1, sorted keys).
func Dump(w io.Writer, events []Event) error {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	e.SetIndent("", " ")
	return e.Encode(events)
}

// Blame writes cloud-init analyze blame's report of events.
func Blame(w io.Writer, events []Event) {
	recs := showRecords(events, "     %ds (%n)")
	for i, rec := range recs {
		var lines []string
		for _, r := range rec {
			if blameLine(r) {
				lines = append(lines, r)
			}
		}
		sort.Sort(sort.Reverse(sort.StringSlice(lines)))
		fmt.Fprintf(w, "-- Boot Record %02d --\n%s\n\n", i+1, strings.Join(lines, "\n"))
	}
	fmt.Fprintf(w, "%d boot records analyzed\n", len(recs))
}

// Show writes cloud-init analyze show's report of events, each event's
// line as format (ShowFormat) says.
func Show(w io.Writer, events []Event, format string) {
	recs := showRecords(events, format)
	for i, rec := range recs {
		fmt.Fprintf(w, "-- Boot Record %02d --\n", i+1)
		fmt.Fprintf(w, "The total time elapsed since completing an event is printed after the \"@\" character.\n")
		fmt.Fprintf(w, "The time the event takes is printed after the \"+\" character.\n\n")
		fmt.Fprintf(w, "%s\n", strings.Join(rec, "\n"))
	}
	fmt.Fprintf(w, "%d boot records analyzed\n", len(recs))
}

// blameLine is blame's filter, cloud-init's `^\s+\d+\.\d+`.
func blameLine(r string) bool {
	t := strings.TrimLeft(r, " \t\n\r\f\v")
	if len(t) == len(r) {
		return false
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i == len(t) || t[i] != '.' {
		return false
	}
	return i+1 < len(t) && t[i+1] >= '0' && t[i+1] <= '9'
}

// pyMicros is a timestamp as Python's datetime.utcfromtimestamp keeps it:
// whole microseconds, rounded half to even.
func pyMicros(ts float64) int64 {
	sec, frac := math.Modf(ts)
	return int64(sec)*1_000_000 + int64(math.RoundToEven(frac*1e6))
}

// pyDelta is cloud-init's delta_seconds of two timestamps.
func pyDelta(from, to float64) float64 {
	return float64(pyMicros(to)-pyMicros(from)) / 1e6
}

// showRecords is cloud-init's generate_records (analyze/show.py): per
// boot (a new one at each "init-local" or "initramfs" start after the
// first), "Starting stage: NAME", each start-finish pair as format says,
// "Finished stage: (NAME) SECONDS seconds" and the total.
func showRecords(events []Event, format string) [][]string {
	var boots [][]string
	var records []string
	var unprocessed []Event
	var start float64
	started := false
	total := 0.0
	for i, ev := range events {
		var next *Event
		if i+1 < len(events) {
			next = &events[i+1]
		}
		if ev.EventType == "start" {
			if len(records) > 0 && (ev.Name == "init-local" || ev.Name == "initramfs") {
				records = append(records, fmt.Sprintf("Total Time: %3.5f seconds\n", total))
				boots = append(boots, records)
				records, started, total = nil, false, 0
			}
			if !started {
				start, started = float64(ev.Timestamp), true
			}
			if next != nil && next.Name == ev.Name {
				if next.EventType == "finish" {
					records = append(records, formatEvent(format, start, ev, *next))
				}
			} else {
				records = append(records, "Starting stage: "+ev.Name)
				unprocessed = append(unprocessed, ev)
			}
			continue
		}
		if len(unprocessed) == 0 {
			continue // cloud-init fails on a finish without its start
		}
		prev := unprocessed[len(unprocessed)-1]
		if ev.Name == prev.Name {
			unprocessed = unprocessed[:len(unprocessed)-1]
			records = append(records, formatEvent("Finished stage: (%n) %d seconds", start, prev, ev)+"\n")
			total += pyDelta(float64(prev.Timestamp), float64(ev.Timestamp))
		}
	}
	records = append(records, fmt.Sprintf("Total Time: %3.5f seconds\n", total))
	return append(boots, records)
}

// formatEvent is cloud-init's format_record of event_record: the finish
// event's keys, with delta (its duration), elapsed (since the boot's
// first event) and indent (by its depth in the name).
func formatEvent(format string, first float64, start, finish Event) string {
	depth := strings.Count(start.Name, "/") - 1
	num := func(f float64) string { return fmt.Sprintf("%08.5f", f) }
	keys := map[byte]string{
		'd': num(pyDelta(float64(start.Timestamp), float64(finish.Timestamp))),
		'D': finish.Description,
		'E': num(pyDelta(first, float64(start.Timestamp))),
		'e': finish.EventType,
		'I': "|" + strings.Repeat(" ", max(depth, 0)) + "`->",
		'l': finish.Level,
		'n': finish.Name,
		'o': finish.Origin,
		'r': finish.Result,
		't': num(float64(finish.Timestamp)),
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] == '%' && i+1 < len(format) {
			if v, ok := keys[format[i+1]]; ok {
				b.WriteString(v)
				i++
				continue
			}
		}
		b.WriteByte(format[i])
	}
	return b.String()
}
