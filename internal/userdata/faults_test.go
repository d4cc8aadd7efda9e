package userdata

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Fault-matrix rows for user-data: each must end in bounded time with a
// clear finding, never a panic or a stack overflow. The measured times are
// logged (go test -v).

// faultBound is far above what any case takes (tens of ms on a shared
// 2-core machine), low enough to catch a runaway.
const faultBound = 20 * time.Second

func timed(t *testing.T, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	took := time.Since(start)
	t.Logf("%s: %v", what, took)
	if took > faultBound {
		t.Errorf("%s took %v", what, took)
	}
}

func TestFaultDeepNesting(t *testing.T) {
	const depth = 100000
	for name, body := range map[string]string{
		"flow lists": strings.Repeat("[", depth) + strings.Repeat("]", depth),
		"flow maps":  strings.Repeat("{a: ", depth) + "x" + strings.Repeat("}", depth),
		"block list": "\n" + strings.Repeat("- ", depth) + "x",
	} {
		doc := []byte("#cloud-config\nruncmd: " + body + "\n")
		timed(t, name+" 100,000 deep", func() {
			errs := Validate("user-data", doc)
			if len(errs) != 1 || errs[0].Line != 2 || !strings.Contains(errs[0].Msg, "exceeded max depth of 10000") {
				t.Errorf("%s: Validate: %v", name, errs)
			}
			cfg, warns := MergeParts([]Part{ccPart("p", string(doc), "")})
			if len(cfg) != 0 || !hasWarning(warns, "exceeded max depth") {
				t.Errorf("%s: MergeParts: %v", name, warns)
			}
		})
	}
	// Just under yaml.v3's limit: parsed, resolved and walked without
	// trouble (Go stacks grow).
	doc := []byte("#cloud-config\nruncmd: " + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + "\n")
	timed(t, "9,990 deep", func() {
		if _, err := loadYAML(doc); err != nil {
			t.Errorf("loadYAML: %v", err)
		}
		Validate("user-data", doc)
	})
}

func TestFaultAliasBombs(t *testing.T) {
	// Billion laughs: 10^9 nodes once expanded, under a key the schema
	// walks (runcmd) and under one it does not (network).
	var b strings.Builder
	b.WriteString("#cloud-config\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("runcmd: *a9\nnetwork: {config: *a9}\n")
	doc := []byte(b.String())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// The schema walks only as deep as its types: runcmd's items must be
	// strings or lists of strings, so it stops at the second level.
	timed(t, "billion laughs: Validate", func() {
		if errs := Validate("user-data", doc); !hasFinding(errs, "runcmd.0.0: expected string, got list") {
			t.Errorf("Validate: %v", errs)
		}
	})
	// Resolving it (what the modules get) stops at maxYAMLNodes.
	timed(t, "billion laughs: MergeParts", func() {
		if cfg, warns := MergeParts([]Part{ccPart("p", string(doc), "")}); len(cfg) != 0 || !hasWarning(warns, "expands to more than 1048576 nodes") {
			t.Errorf("MergeParts: %v", warns)
		}
	})
	timed(t, "billion laughs: #cloud-config-archive", func() {
		parts, warns, err := Decode([]byte("#cloud-config-archive\n" + strings.TrimPrefix(b.String(), "#cloud-config\n")))
		if err != nil || len(parts) != 0 || !hasWarning(warns, "expands to more than") {
			t.Errorf("archive: %v %v %v", parts, warns, err)
		}
	})
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("billion laughs: %d MB allocated", alloc>>20)
	if alloc > 2<<30 {
		t.Errorf("billion laughs allocated %d MB", alloc>>20)
	}
}

func hasFinding(errs []SchemaError, s string) bool {
	for _, e := range errs {
		if strings.Contains(e.Error(), s) {
			return true
		}
	}
	return false
}

// TestFaultNotUTF8: cloud-config that is not UTF-8 is refused with the
// line and column of the first bad byte; a script that is not UTF-8 is
// kept byte for byte and runs, as in cloud-init (which writes a script's
// payload as bytes).
func TestFaultNotUTF8(t *testing.T) {
	doc := []byte("#cloud-config\nhostname: ok\nruncmd:\n  - echo caf\xe9\n")
	errs := Validate("user-data", doc)
	if len(errs) != 1 || errs[0].Error() != "user-data:4:13: not valid UTF-8 (byte offset 47): cloud-config must be UTF-8" {
		t.Errorf("Validate: %v", errs)
	}
	cfg, warns := MergeParts([]Part{ccPart("p", string(doc), "")})
	if len(cfg) != 0 || !hasWarning(warns, "line 4 column 13: not valid UTF-8") {
		t.Errorf("MergeParts: %v %v", cfg, warns)
	}
	// UTF-8 that is valid, multibyte included, is fine.
	if errs := Validate("user-data", []byte("#cloud-config\nfinal_message: café ☕\n")); len(errs) != 0 {
		t.Errorf("valid UTF-8: %v", errs)
	}
	script := []byte("#!/bin/sh\necho caf\xe9 \xff\xfe\n")
	parts, warns, err := Decode(script)
	if err != nil || len(warns) != 0 || len(parts) != 1 || parts[0].Type != TypeShellScript || !bytes.Equal(parts[0].Content, script) {
		t.Errorf("script: %+v %v %v", parts, warns, err)
	}
}

// TestFaultBigUserData: 200 MB of user-data is refused at once by its
// size, and so is gzip that inflates past MaxSize.
func TestFaultBigUserData(t *testing.T) {
	big := make([]byte, 200<<20)
	copy(big, "#cloud-config\n")
	timed(t, "200 MB user-data", func() {
		if _, _, err := Decode(big); err == nil || !strings.Contains(err.Error(), "user-data too big: 209715200 bytes, more than 16777216") {
			t.Errorf("Decode: %v", err)
		}
	})
	bomb := gz(t, make([]byte, 64<<20))
	timed(t, "gzip bomb (64 MB of zeros)", func() {
		if _, _, err := Decode(bomb); err == nil || !strings.Contains(err.Error(), "inflates past") {
			t.Errorf("Decode: %v", err)
		}
	})
}
