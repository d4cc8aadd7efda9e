package main

import (
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
)

func rec(total time.Duration, steps ...boot.StepRecord) boot.Record {
	return boot.Record{Total: total, ModuleLoad: total / 4, Steps: steps}
}

func step(name string, ms int) boot.StepRecord {
	return boot.StepRecord{Name: name, Duration: time.Duration(ms) * time.Millisecond}
}

func TestPrintTable(t *testing.T) {
	before := &image{label: "before", records: []boot.Record{
		rec(400*time.Millisecond, step("modules", 100), step("instance", 300)),
		rec(600*time.Millisecond, step("modules", 300), step("instance", 300)),
		rec(500*time.Millisecond, step("modules", 200), step("instance", 300)),
	}, failed: []string{"run 4: qemu: exit status 1"}}
	after := &image{label: "after", records: []boot.Record{
		rec(200*time.Millisecond, step("modules", 100), step("instance", 50), step("instance", 50), step("seed", 10)),
	}}
	var b strings.Builder
	printTable(&b, initrds{before, after})
	got := b.String()
	for _, want := range []string{
		"median per image                 before        after    change\n",
		"step modules                      200ms        100ms      -50%\n",
		// A step run twice is summed.
		"step instance                     300ms        100ms      -67%\n",
		// A step one image has not: no change figure.
		"step seed                             -         10ms\n",
		"total (to switch_root)            500ms        200ms      -60%\n",
		"module loading                    125ms         50ms      -60%\n",
		"earlyinit's own                   375ms        150ms      -60%\n",
		"before run 4: qemu: exit status 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestInitrdFlag(t *testing.T) {
	var l initrds
	if err := l.Set("before=build/bench/initramfs-before.img"); err != nil {
		t.Fatal(err)
	}
	if l[0].label != "before" || l[0].path != "build/bench/initramfs-before.img" {
		t.Errorf("Set: %+v", l[0])
	}
	for _, bad := range []string{"build/initramfs.img", "=x", "x="} {
		if err := l.Set(bad); err == nil {
			t.Errorf("Set(%q): no error", bad)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{3, 1, 2}, 2},
		{[]time.Duration{4, 1, 3, 2}, 2},
		{[]time.Duration{7}, 7},
	} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
