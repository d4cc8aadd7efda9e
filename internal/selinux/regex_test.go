package selinux

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestHasMetaSimplify(t *testing.T) {
	for _, c := range []struct {
		re   string
		meta bool
		lit  string
	}{
		{"/etc/hostname", false, "/etc/hostname"},
		{`/etc/ld\.so\.cache`, false, "/etc/ld.so.cache"},
		{`/usr/lib/a\-b\_c\,d`, false, "/usr/lib/a-b_c,d"},
		{`/etc/.*`, true, ""},
		{`/a]`, true, ""}, // ] ) } count, as in libselinux 3.x
		{`/a)`, true, ""},
		{`/a\d`, true, ""}, // an escape outside the list is a regex
		{`/a\`, true, ""},
		{`/a+`, true, ""},
		{`/a|b`, true, ""},
	} {
		if got := hasMeta(c.re); got != c.meta {
			t.Errorf("hasMeta(%q) = %v, want %v", c.re, got, c.meta)
		}
		lit, ok := simplify(c.re)
		if ok == c.meta || lit != c.lit {
			t.Errorf("simplify(%q) = %q, %v; want %q, %v", c.re, lit, ok, c.lit, !c.meta)
		}
	}
}

// TestRegexSemantics holds the translation to PCRE2's behaviour as
// libselinux compiles it: "^" + re + "$", PCRE2_DOTALL.
func TestRegexSemantics(t *testing.T) {
	for _, c := range []struct {
		re      string
		match   []string
		nomatch []string
	}{
		{`/etc/.*`, []string{"/etc/x", "/etc/", "/etc/a\nb"}, []string{"/etc", "/etcx", "x/etc/y"}},
		// "$" and \Z allow one final newline, as PCRE's do.
		{`/a`, []string{"/a", "/a\n"}, []string{"/a\n\n", "/ab"}},
		{`/a$`, []string{"/a", "/a\n"}, []string{"/ab"}},
		{`/a\Z`, []string{"/a", "/a\n"}, []string{"/a\nb"}},
		{`/a\z`, []string{"/a"}, []string{"/a\n"}},
		// Not grouped: "^/foo|/bar$", as libselinux anchors it.
		{`/foo|/bar`, []string{"/foo", "/foo/anything", "/x/bar"}, []string{"/x/foo", "/bar/x"}},
		{`/(foo|bar)`, []string{"/foo", "/bar"}, []string{"/foo/x"}},
		{`/a\Q.*$\E`, []string{"/a.*$"}, []string{"/abc", "/a"}},
		{`/a\Q.*`, []string{"/a.*"}, []string{"/ab"}},
		{`/a\Eb`, []string{"/ab"}, nil},
		{`/a{b}`, []string{"/a{b}"}, []string{"/ab"}}, // not a quantifier: literal
		{`/a{2}`, []string{"/aa"}, []string{"/a"}},
		{`/[]a]x`, []string{"/]x", "/ax"}, []string{"/bx"}},
		{`/[^]a]x`, []string{"/bx"}, []string{"/]x", "/ax"}},
		{`/[[:digit:]]+`, []string{"/123"}, []string{"/a"}},
		{`/[$]`, []string{"/$"}, []string{"/"}},
		{`/a(?:b)?`, []string{"/a", "/ab"}, nil},
		{`/(?<n>x)`, []string{"/x"}, nil},
		{`/(?i)abc`, []string{"/ABC"}, nil},
		{`/[^/]+`, []string{"/abc"}, []string{"/a/b"}},
	} {
		re, err := compileRegex(c.re)
		if err != nil {
			t.Errorf("compileRegex(%q): %v", c.re, err)
			continue
		}
		for _, s := range c.match {
			if !re.MatchString(s) {
				t.Errorf("%q (%s) does not match %q", c.re, re, s)
			}
		}
		for _, s := range c.nomatch {
			if re.MatchString(s) {
				t.Errorf("%q (%s) matches %q", c.re, re, s)
			}
		}
	}
}

// TestRegexRefused: PCRE constructs RE2 lacks, or spells with another
// meaning, are errors, never a different match.
func TestRegexRefused(t *testing.T) {
	for _, re := range []string{
		`/(a)\1`,       // backreference (RE2 would read an octal escape)
		`/a(?=b)`,      // lookahead
		`/a(?!b)`,      //
		`/(?<=a)b`,     // lookbehind
		`/(?<!a)b`,     //
		`/(?>ab)`,      // atomic group
		`/a*+`,         // possessive
		`/a++`,         //
		`/(?#c)a`,      // comment
		`/a\vb`,        // \v is a class in PCRE, a character in RE2
		`/a\Rb`,        //
		`/[\v]`,        //
		`/[\b]`,        // backspace in PCRE
		`/a{1001}`,     // over RE2's repeat limit
		`/(a`,          // plain syntax errors
		`/[a`,          //
		`/a\`,          //
		`/(?x) a`,      // extended mode
		`/(?|(a)|(b))`, // branch reset
		`/\pL`,         // Unicode property classes
		`/\PL`,         //
		`/\p{Greek}`,   //
		`/[\pL/]`,      //
		`/[^\PN]`,      //
	} {
		if _, err := compileRegex(re); err == nil {
			t.Errorf("compileRegex(%q) compiled", re)
		}
	}
	if _, err := compileRegex(`/(a)\1`); !errors.Is(err, errUnsupported) {
		t.Errorf("backreference error %v, want errUnsupported", err)
	}
	if _, err := compileRegex(`/x\pLy`); !errors.Is(err, errUnicodeClass) {
		t.Errorf(`\pL error %v, want errUnicodeClass`, err)
	}
	long := "/" + string(make([]byte, maxRegexLen))
	if _, err := compileRegex(long); err == nil {
		t.Errorf("a %d byte regex compiled", len(long))
	}
}

func TestLiteralPrefix(t *testing.T) {
	for re, want := range map[string]string{
		`/var/lib(/.*)?`:    "/var/lib",
		`/etc/ld\.so\.conf`: "/etc/ld.so.conf",
		`/usr/lib/x?`:       "/usr/lib/",
		`/a|/b`:             "",
		`/home/[^/]+/x`:     "/home/",
		`(/.*)?`:            "",
		`/(?i)abc`:          "/",
		`/a{2}`:             "/",
	} {
		_, got, _, err := checkRegex(re)
		if err != nil || got != want {
			t.Errorf("checkRegex(%q) prefix %q, %v; want %q", re, got, err, want)
		}
	}
}

// TestFixedPrefix: the prefix read from the text, without parsing; never
// longer than the parsed expression's (literalPrefix), and "" wherever an
// alternation outside the groups could start a match elsewhere.
func TestFixedPrefix(t *testing.T) {
	for re, want := range map[string]string{
		`/var/lib(/.*)?`:             "/var/lib",
		`/etc/ld\.so\.conf.*`:        "/etc/ld.so.conf",
		`/usr/lib/x?`:                "/usr/lib/",
		`/etc/ab?c`:                  "/etc/a",
		`/etc/a\.?`:                  "/etc/a",
		`/etc/a\\+`:                  "/etc/a",
		`/a*`:                        "/",
		`/a+`:                        "/",
		`/a{2}`:                      "/",
		`/a|/b`:                      "",
		`/a(b|c)`:                    "/a",
		`/a(b)|c`:                    "",
		`/a[|]b`:                     "/a",
		`/a[]|]b|c`:                  "",
		`/a[b`:                       "",
		`/a)|(b`:                     "",
		`/a\Q|\E`:                    "/a",
		`/a\Q(\E|/b`:                 "",
		`/a\Q(|`:                     "/a",
		`/home/[^/]+/x`:              "/home/",
		`/a\d`:                       "/a",
		`/a\1`:                       "/a",
		`(/.*)?`:                     "",
		`/(?i)abc`:                   "/",
		`/usr/lib/x\`:                "/usr/lib/x",
		`/run/.*`:                    "/run/",
		`/dev/[shmxv]d[^/]*`:         "/dev/",
		`/etc/systemd/network(/.*)?`: "/etc/systemd/network",
	} {
		if got := fixedPrefix(re); got != want {
			t.Errorf("fixedPrefix(%q) = %q; want %q", re, got, want)
		}
		if _, parsed, _, err := checkRegex(re); err == nil && !strings.HasPrefix(parsed, fixedPrefix(re)) {
			t.Errorf("fixedPrefix(%q) = %q, not a prefix of the parsed expression's %q", re, fixedPrefix(re), parsed)
		}
	}
}

// FuzzFixedPrefix: for every expression RE2 takes, the prefix read from
// its text starts the parsed expression's literal prefix, which every
// match starts with; and a path the expression matches starts with it.
func FuzzFixedPrefix(f *testing.F) {
	for _, s := range []string{`/var/lib(/.*)?`, `/a\Q(\E|/b`, `/a[]|]b|c`, `/etc/a\.?`, `/a(?i)b`, `/x{0,3}y`, `/a\Q.*$\E|/b$\Z`} {
		f.Add(s, "/var/lib/x")
	}
	f.Fuzz(func(t *testing.T, re, key string) {
		expr, parsed, _, err := checkRegex(re)
		if err != nil {
			return
		}
		fixed := fixedPrefix(re)
		if !strings.HasPrefix(parsed, fixed) {
			t.Fatalf("fixedPrefix(%q) = %q, not a prefix of the parsed expression's %q", re, fixed, parsed)
		}
		if rx, err := regexp.Compile(expr); err == nil && rx.MatchString(key) && !strings.HasPrefix(key, fixed) {
			t.Fatalf("%q matches %q, which does not start with fixedPrefix %q", re, key, fixed)
		}
	})
}

// TestProgSize holds progSize to the program regexp.Compile makes.
func TestProgSize(t *testing.T) {
	for _, re := range []string{
		`a`, `abc`, `(?i)abc`, `[a-z]`, `[^/]`, `.`, `(?-s:.)`, `^$`, `\b\B`, `\A\z`, `(?m)^$`,
		`(a)`, `(?:a)`, `(?P<n>a)`, `()`, `(?:)`,
		`a*`, `a+`, `a?`, `a*?`, `a+?`, `a??`, `(a|)*`, `(?:a|)+`, `(a*)*`, `(?:a*)*`, `(?:a+)+`, `(?:a?)?`, `(?:(?:)*)*`,
		`(?:a*?)*`, `(?:a?)??`, `(?:a+)*`, `(?:a*)+`, `(?:(?:)+)?`,
		`a|b|c`, `a|`, `|`, `a||b`, `(?:a|b)*`,
		`x{0}`, `x{1}`, `x{2}`, `x{2,5}`, `x{0,3}`, `x{3,}`, `x{0,}`, `x{1,}`, `(?:a*){0,}`, `x{2,5}?`, `x{0,1}`, `x{1,2}`,
		`(a*){2,3}`, `((a{0,2}){0,3}){2}`, `(?:|a){3}`, `(?:a|b*){2,}`, `(x{0}){3}`, `(?:x{0}){3,}`, `(?:a?){0,3}`, `(?:a?){2,4}`,
		`(?:a??){0,3}`, `(?:a{0,3}){0,2}?`, `(?:(?:a{0,10}){0,10}){0,10}`, `(?:a*){2,}`, `(?:a+){1,}`, `(?:(?:)*){2,3}`,
		`[^\x00-\x{10FFFF}]`, `[^\x00-\x{10FFFF}]*`, `[^\x00-\x{10FFFF}]+`, `(a[^\x00-\x{10FFFF}])*`, `a[^\x00-\x{10FFFF}]|b`,
		`(?:[^\x00-\x{10FFFF}]|a)+`, `(?:[^\x00-\x{10FFFF}]|)*`, `(?:[^\x00-\x{10FFFF}]){2,3}`, `([^\x00-\x{10FFFF}]){0,3}`,
		`(?s)^/etc/.*(?:\n?\z)`, `(?s)^/var/lib(/.*)?(?:\n?\z)`, `(?s)^/(.{0,10}){3}x(?:\n?\z)`,
	} {
		tree, err := syntax.Parse(re, syntax.Perl)
		if err != nil {
			t.Errorf("%s: %v", re, err)
			continue
		}
		prog, err := syntax.Compile(tree.Simplify())
		if err != nil {
			t.Errorf("%s: %v", re, err)
			continue
		}
		if got, want := progSize(tree), int64(len(prog.Inst)); got != want {
			t.Errorf("progSize(%s) = %d; want %d", re, got, want)
		}
	}
}

// hostileRegex is the entry: 3,964 bytes, under libselinux's
// limit, whose program has 880,010 instructions (regexp.Compile: 0.9 s
// and 360 MiB allocated).
var hostileRegex = "/(" + strings.Repeat(".{0,1000}", 440) + ")x"

// TestRegexTooBig: an expression over maxRegexInsts is refused, and the
// refusal costs a parse, not a compile.
func TestRegexTooBig(t *testing.T) {
	if len(hostileRegex) >= maxRegexLen {
		t.Fatalf("hostileRegex is %d bytes, over libselinux's limit", len(hostileRegex))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := compileRegex(hostileRegex)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errTooBig) || !strings.Contains(err.Error(), "compiled program of 880010 instructions, over the limit of 1000") {
		t.Errorf("compileRegex(hostileRegex): %v; want errTooBig with its size", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 || elapsed > time.Second {
		t.Errorf("refusing it took %v and %d bytes; want under 1 s and 1 MiB", elapsed, alloc)
	}
	// Just under the limit, and just over.
	for n, ok := range map[int]bool{496: true, 497: false} {
		re := fmt.Sprintf("/a{0,%d}", n) // 2n+7 instructions
		if _, err := compileRegex(re); (err == nil) != ok {
			t.Errorf("compileRegex(%s): %v", re, err)
		}
	}
}
