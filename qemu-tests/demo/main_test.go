package main

import (
	"strings"
	"testing"
)

// TestSummaryOncePerStep: the console shows earlyinit's log twice (live,
// and again where the late stage replays it); the summary lists each step
// and the switch_root once.
func TestSummaryOncePerStep(t *testing.T) {
	log := "earlyinit: [   4.080] step modules done in 4.005s\n" +
		"earlyinit: [   6.836] step root done in 2.748s\n" +
		"earlyinit: [  10.033] switch_root to /sbin/init after 10.032s\n"
	console := "[    0.9] Run /init as init process\n" + log + "[   15.9] something\n" + log +
		"TESTINIT: /sbin/init pid=1 args= uptime=16.20\n"
	got := summary(console)
	for _, want := range []string{"step modules", "step root", "switch_root to /sbin/init", "real init /sbin/init started"} {
		if n := strings.Count(got, want); n != 1 {
			t.Errorf("%q %d times in the summary:\n%s", want, n, got)
		}
	}
}
