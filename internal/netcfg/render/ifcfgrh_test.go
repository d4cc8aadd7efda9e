package render_test

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// How NetworkManager's ifcfg-rh plugin reads the files the sysconfig
// renderer writes, written here from what its sources do (shvar.c,
// nms-ifcfg-rh-utils.c, nms-ifcfg-rh-reader.c; NetworkManager commit
// 355bc902994f8f616bc80dcb451455f7aeb6b809): Debian has no ifcfg-rh
// plugin to run, so the sysconfig consumer test checks the files against
// these rules.

// shvarLine is one line of an ifcfg file as shvar.c's line_new_parse
// splits it: an assignment (Key set, Value the text after '=') or any
// other line (Key empty).
type shvarLine struct {
	N          int // line number, from 1
	Key, Value string
	Text       string
}

// shvarParse splits data into lines as svFile_new does: at '\n', a key
// being an identifier after optional ASCII white space, right before '='.
func shvarParse(data string) []shvarLine {
	var out []shvarLine
	lines := strings.Split(data, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		sl := shvarLine{N: i + 1, Text: l}
		k := 0
		for k < len(l) && asciiSpace(l[k]) {
			k++
		}
		if k < len(l) && (isAlpha(l[k]) || l[k] == '_') {
			for e := k + 1; e < len(l); e++ {
				if l[e] == '=' {
					sl.Key, sl.Value = l[k:e], l[e+1:]
					break
				}
				if !isAlnum(l[e]) && l[e] != '_' {
					break
				}
			}
		}
		out = append(out, sl)
	}
	return out
}

// asciiSpace is g_ascii_isspace: space, \t, \n, \v, \f, \r.
func asciiSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// svUnescape is shvar.c's svUnescape: the value of an assignment (the
// text after "KEY=") as the plugin reads it, bash's quoting rules without
// expansion, line continuation or unquoted shell metacharacters. ok is
// false where svUnescape returns NULL: the plugin then takes the value as
// "" and logs "key ... is badly quoted" (or "does not contain valid
// UTF-8").
func svUnescape(value string) (string, bool) {
	var b strings.Builder
	i := 0
	for i < len(value) {
		c := value[i]
		switch {
		case asciiSpace(c) || c == ';':
			// Only white space, at most one ';', then an optional comment.
			semi := c == ';'
			j := i + 1
			for j < len(value) {
				if asciiSpace(value[j]) {
					j++
				} else if !semi && value[j] == ';' {
					semi = true
					j++
				} else {
					break
				}
			}
			if j < len(value) && value[j] != '#' {
				return "", false
			}
			return finishUnescape(b.String())
		case c == '\\':
			if i+1 >= len(value) {
				return "", false // no line continuation
			}
			b.WriteByte(value[i+1])
			i += 2
		case c == '\'':
			j := strings.IndexByte(value[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			b.WriteString(value[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			i++
			for {
				if i >= len(value) {
					return "", false
				}
				d := value[i]
				if d == '"' {
					i++
					break
				}
				if d == '`' || d == '$' {
					return "", false // no expansion
				}
				if d == '\\' {
					i++
					if i >= len(value) {
						return "", false
					}
					d = value[i]
					switch {
					case strings.IndexByte("$`\"\\", d) >= 0:
						// the backslash is dropped
					case d == '\'' || d == '~':
						// Kept unless the whole value looks as old
						// svEscape wrote it.
						if !looksLikeOldSvEscaped(value) {
							b.WriteByte('\\')
						}
					default:
						b.WriteByte('\\')
					}
				}
				b.WriteByte(d)
				i++
			}
		case c == '$' && i+1 < len(value) && value[i+1] == '\'':
			n, ok := ansiC(value[i+2:], &b)
			if !ok {
				return "", false
			}
			i += 2 + n
		case strings.IndexByte("|&()<>", c) >= 0:
			return "", false // metacharacters need quoting
		default:
			b.WriteByte(c)
			i++
		}
	}
	return finishUnescape(b.String())
}

// finishUnescape checks the value is UTF-8 (svUnescape's check_utf8) and
// cuts it at a NUL, as the C string would be.
func finishUnescape(s string) (string, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if !utf8.ValidString(s) {
		return "", false
	}
	return s, true
}

// looksLikeOldSvEscaped is _looks_like_old_svescaped: the whole value is
// "..." whose only escapes are of " \ $ ` ' ~.
func looksLikeOldSvEscaped(v string) bool {
	old := func(c byte) bool { return strings.IndexByte("\"\\$`'~", c) >= 0 }
	if v == "" || v[0] != '"' {
		return false
	}
	for k := 1; ; k++ {
		if k >= len(v) {
			return false
		}
		if !old(v[k]) {
			continue
		}
		switch v[k] {
		case '"':
			return k+1 == len(v)
		case '\\':
			k++
			if k >= len(v) || !old(v[k]) {
				return false
			}
		default:
			return false
		}
	}
}

// ansiC reads the body of $'...' (s starts after the opening quote) into
// b and returns how many bytes it used, the closing quote included.
func ansiC(s string, b *strings.Builder) (int, bool) {
	simple := map[byte]byte{'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '?': '?', '"': '"', '\\': '\\', '\'': '\''}
	hex := func(c byte) (int, bool) {
		v, err := strconv.ParseUint(string(c), 16, 8)
		return int(v), err == nil
	}
	i := 0
	for {
		if i >= len(s) {
			return 0, false
		}
		c := s[i]
		if c == '\'' {
			return i + 1, true
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		i++
		if i >= len(s) {
			return 0, false
		}
		c = s[i]
		if r, ok := simple[c]; ok {
			b.WriteByte(r)
			i++
			continue
		}
		switch {
		case c >= '0' && c <= '7':
			v := 0
			for n := 0; n < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7'; n++ {
				v = v*8 + int(s[i]-'0')
				i++
			}
			b.WriteByte(byte(v))
		case c == 'x' || c == 'u' || c == 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			i++
			d, ok := 0, false
			if i < len(s) {
				d, ok = hex(s[i])
			}
			if !ok {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			v := d
			i++
			for n := 1; n < max && i < len(s); n++ {
				d, ok := hex(s[i])
				if !ok {
					break
				}
				v = v*16 + d
				i++
			}
			if c == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
			i++
		}
	}
}

// keyKind is how a key list names keys: the key alone, the key with an
// optional decimal suffix, or (NetworkManager's NM_USER_) any suffix.
type keyKind int

const (
	kindPlain keyKind = iota
	kindNumbered
	kindPrefix
)

// keyList is a sorted list of known keys (testdata/sysconfig).
type keyList struct {
	names []string
	kinds []keyKind
	notes []string
}

// readKeyList reads "KEY KIND [NOTE]" lines; # starts a comment.
func readKeyList(t *testing.T, path string) *keyList {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := &keyList{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) == 0 || strings.HasPrefix(w[0], "#") {
			continue
		}
		kind, ok := map[string]keyKind{"plain": kindPlain, "numbered": kindNumbered, "prefix": kindPrefix}[w[1]]
		if !ok {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		l.names = append(l.names, w[0])
		l.kinds = append(l.kinds, kind)
		l.notes = append(l.notes, strings.Join(w[2:], " "))
	}
	if !sort.StringsAreSorted(l.names) {
		t.Fatalf("%s: not sorted", path)
	}
	return l
}

// isNumberedTag is nms_ifcfg_rh_utils_is_numbered_tag: key is tag, or tag
// and a decimal number.
func isNumberedTag(key, tag string) bool {
	rest, ok := strings.CutPrefix(key, tag)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(rest, 10, 64)
	return err == nil
}

// find looks key up as nms_ifcfg_rh_utils_is_well_known_key does: an
// exact match, else the entry just before where key would be inserted,
// if it is numbered (IPADDR for IPADDR1) or a prefix (NM_USER_ for
// NM_USER_X). It returns the entry's index, or -1.
func (l *keyList) find(key string) int {
	i := sort.SearchStrings(l.names, key)
	if i < len(l.names) && l.names[i] == key {
		if l.kinds[i] == kindPrefix {
			return -1
		}
		return i
	}
	if i == 0 {
		return -1
	}
	p := i - 1
	switch l.kinds[p] {
	case kindNumbered:
		if isNumberedTag(key, l.names[p]) {
			return p
		}
	case kindPrefix:
		if len(key) > len(l.names[p]) && strings.HasPrefix(key, l.names[p]) {
			return p
		}
	}
	return -1
}

// nmRouteLine checks one line of a route-/route6- file in the ip-route
// form as the plugin's parse_route_line does: words split at space, tab
// and newline; known options each at most once with an argument of their
// type; one destination ("to", or a bare address once). It returns the
// destination and the error the plugin would log ("ignoring invalid
// route").
func nmRouteLine(line string, v6 bool) (netip.Prefix, error) {
	type opt struct {
		kind     byte // a address, p address/prefix, u number, l number after an optional "lock", x hex byte, b 0 or 1, f flag, i name, S scope, s string
		disabled bool
	}
	opts := map[string]opt{
		"type": {kind: 's'}, "table": {kind: 'u'}, "src": {kind: 'a'}, "from": {kind: 'p', disabled: !v6},
		"tos": {kind: 'x'}, "weight": {kind: 'u', disabled: v6}, "scope": {kind: 'S'}, "onlink": {kind: 'f'},
		"window": {kind: 'l'}, "cwnd": {kind: 'l'}, "advmss": {kind: 'l'}, "initcwnd": {kind: 'l'}, "initrwnd": {kind: 'l'},
		"mtu": {kind: 'l'}, "quickack": {kind: 'b'}, "rto_min": {kind: 'u'},
		"to": {kind: 'p'}, "via": {kind: 'a'}, "metric": {kind: 'u'}, "dev": {kind: 'i'},
	}
	parseAddr := func(s string) error {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Is6() != v6 || a.Zone() != "" {
			return fmt.Errorf("not a valid IPv%c address: %q", map[bool]byte{false: '4', true: '6'}[v6], s)
		}
		return nil
	}
	var dest netip.Prefix
	parsePrefix := func(s string) error {
		if s == "default" {
			dest = netip.PrefixFrom(map[bool]netip.Addr{false: netip.IPv4Unspecified(), true: netip.IPv6Unspecified()}[v6], 0)
			return nil
		}
		if !strings.Contains(s, "/") {
			if err := parseAddr(s); err != nil {
				return err
			}
			a := netip.MustParseAddr(s)
			dest = netip.PrefixFrom(a, a.BitLen())
			return nil
		}
		p, err := netip.ParsePrefix(s)
		if err != nil || p.Addr().Is6() != v6 {
			return fmt.Errorf("not ADDR/PREFIX format: %q", s)
		}
		dest = p
		return nil
	}
	words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	seen := map[string]bool{}
	hasType := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		o, known := opts[w]
		if !known || o.disabled {
			if !hasType && strings.Contains(" local unicast broadcastmulticast throw unreachable prohibit blackhole nat ", " "+w+" ") {
				// The type is the word itself. (NetworkManager's list
				// runs "broadcast" and "multicast" together: neither is
				// a type there.)
				hasType = true
				continue
			}
			if seen["to"] {
				return dest, fmt.Errorf(`unrecognized argument ("to" is duplicate or %q is garbage)`, w)
			}
			seen["to"] = true
			if err := parsePrefix(w); err != nil {
				return dest, fmt.Errorf("unrecognized argument (inet prefix is expected rather than %q)", w)
			}
			continue
		}
		if seen[w] {
			return dest, fmt.Errorf("duplicate option %q", w)
		}
		seen[w] = true
		if o.kind == 'f' {
			continue
		}
		i++
		if i >= len(words) {
			return dest, fmt.Errorf("missing argument for %q", w)
		}
		arg := words[i]
		var err error
		switch o.kind {
		case 'a':
			err = parseAddr(arg)
		case 'p':
			err = parsePrefix(arg)
		case 'u', 'l':
			if o.kind == 'l' && arg == "lock" {
				i++
				if i >= len(words) {
					return dest, fmt.Errorf("missing argument for %q", w)
				}
				arg = words[i]
			}
			_, err = strconv.ParseUint(arg, 10, 32)
		case 'x':
			_, err = strconv.ParseUint(arg, 16, 8)
		case 'b':
			if arg != "0" && arg != "1" {
				err = errors.New("not 0 or 1")
			}
		case 'S':
			if !strings.Contains(" global nowhere host link site ", " "+arg+" ") {
				_, err = strconv.ParseUint(arg, 0, 8)
			}
		}
		if err != nil {
			return dest, fmt.Errorf("argument for %q: %v", w, err)
		}
	}
	if !seen["to"] {
		return dest, errors.New("missing destination prefix")
	}
	return dest, nil
}

// nmRouteSVKeys are the keys of a route- file in the ADDRESSn form that
// the plugin reads (SV_KEY_TYPE_ROUTE_SVFORMAT).
var nmRouteSVKeys = []string{"ADDRESS", "NETMASK", "GATEWAY", "METRIC", "OPTIONS"}

// nmRouteSV checks the routes of a route- file in the ADDRESSn form as
// read_one_ip4_route reads them: for n = 0, 1, ... until an ADDRESSn is
// missing, an IPv4 ADDRESSn, an IPv4 GATEWAYn if any, a NETMASKn that
// is a netmask, a METRICn that is a 32-bit number, OPTIONSn in the
// ip-route form.
func nmRouteSV(values map[string]string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	v4 := func(k string) (netip.Addr, error) {
		a, err := netip.ParseAddr(values[k])
		if err != nil || !a.Is4() {
			return a, fmt.Errorf("%s: invalid IP4 address %q", k, values[k])
		}
		return a, nil
	}
	for n := 0; ; n++ {
		if v, ok := values[fmt.Sprint("ADDRESS", n)]; !ok || v == "" {
			return out, nil
		}
		a, err := v4(fmt.Sprint("ADDRESS", n))
		if err != nil {
			return out, err
		}
		if _, ok := values[fmt.Sprint("GATEWAY", n)]; ok {
			if _, err := v4(fmt.Sprint("GATEWAY", n)); err != nil {
				return out, err
			}
		}
		mk := fmt.Sprint("NETMASK", n)
		if _, ok := values[mk]; !ok {
			return out, fmt.Errorf("missing IP4 route element %q", mk)
		}
		bits, err := netmaskBits(values[mk])
		if err != nil {
			return out, fmt.Errorf("invalid IP4 netmask %q: %v", mk, err)
		}
		if m, ok := values[fmt.Sprint("METRIC", n)]; ok && m != "" {
			if _, err := strconv.ParseUint(m, 10, 32); err != nil {
				return out, fmt.Errorf("invalid IP4 route metric %q", m)
			}
		}
		if o, ok := values[fmt.Sprint("OPTIONS", n)]; ok && o != "" {
			if _, err := nmRouteLine(a.String()+" "+o, false); err != nil {
				return out, fmt.Errorf("OPTIONS%d: %v", n, err)
			}
		}
		out = append(out, netip.PrefixFrom(a, bits))
	}
}

// netmaskBits is the prefix length of a dotted IPv4 netmask, refusing one
// that is not a run of ones.
func netmaskBits(mask string) (int, error) {
	a, err := netip.ParseAddr(mask)
	if err != nil || !a.Is4() {
		return 0, fmt.Errorf("not an IPv4 netmask: %q", mask)
	}
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n := 0
	for n < 32 && v&(1<<(31-n)) != 0 {
		n++
	}
	if n < 32 && v<<n != 0 {
		return 0, fmt.Errorf("not a netmask: %q", mask)
	}
	return n, nil
}

// routeFileNewSyntax is how both readers tell a route- file's form
// (initscripts' grep -Eq '^[[:space:]]*ADDRESS[0-9]+=',
// utils_has_route_file_new_syntax): any line assigning ADDRESSn.
func routeFileNewSyntax(data string) bool {
	for _, l := range strings.Split(data, "\n") {
		l = strings.TrimLeft(l, " \t\v\f\r")
		rest, ok := strings.CutPrefix(l, "ADDRESS")
		if !ok || rest == "" || rest[0] < '0' || rest[0] > '9' {
			continue
		}
		rest = strings.TrimLeft(rest, "0123456789")
		if strings.HasPrefix(rest, "=") {
			return true
		}
	}
	return false
}

// TestSvUnescape: the port of shvar.c's svUnescape on the cases its own
// tests and comments name.
func TestSvUnescape(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"abc", "abc", true},
		{`"a b"`, "a b", true},
		{`'a b'`, "a b", true},
		{`"a\$b\"c\\d\` + "`" + `e"`, "a$b\"c\\d`e", true},
		{`"a$b"`, "", false},    // no expansion
		{"\"a`b`\"", "", false}, // no command substitution
		{"a b", "", false},      // LANG=C ls
		{"a #comment", "a", true},
		{"a;", "a", true},
		{"a ; #c", "a", true},
		{"a;;", "", false},
		{`"a\'b"`, "a'b", true},    // old svEscape's form
		{`"a\'b"x`, `a\'bx`, true}, // not old svEscape's: bash's meaning
		{`$'a\nb\x41\101\u00e9'`, "a\nbAAé", true},
		{"a|b", "", false},
		{"a(b", "", false},
		{`a\`, "", false}, // no line continuation
		{`"abc`, "", false},
		{`'abc`, "", false},
		{"\xff", "", false}, // not UTF-8
		{`a"b c"'d'`, "ab cd", true},
	} {
		got, ok := svUnescape(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("svUnescape(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSvUnescapeAgreesWithBash: every value the port accepts means what
// bash makes of it, but for old svEscape's \' and \~ in double quotes,
// where NetworkManager chose to differ.
func TestSvUnescapeAgreesWithBash(t *testing.T) {
	bash := tool(t, "/bin/bash", "bash", "/usr/bin")
	values := []string{
		"plain", `"two words"`, `'single $x'`, `"esc \$ \" \\ \` + "`" + `"`, `"keep \n \a"`, `a\ b`,
		`"a\'b c"`, `"~"`, `'a'"b"c`, `$'tab\tnl\n'`, `$'\x41\102\u00e9\U0001F600'`, "x #c", "x;", "",
		`"="`, "a=b", `"mode=802.3ad miimon=100"`, `'"'`, `"'"`,
	}
	dir := t.TempDir()
	for i, v := range values {
		want, ok := svUnescape(v)
		if !ok {
			continue
		}
		p := fmt.Sprintf("%s/%d", dir, i)
		if err := os.WriteFile(p, []byte("X="+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", `. "$1" && printf %s "$X"`, "bash", p).Output()
		if err != nil {
			t.Errorf("bash sourcing X=%s: %v", v, err)
			continue
		}
		if string(out) != want && !strings.Contains(v, `\'`) {
			t.Errorf("X=%s: ifcfg-rh port %q, bash %q", v, want, out)
		}
	}
}

// TestWellKnownKeys: the lookup as nms_ifcfg_rh_utils_is_well_known_key
// does it, numbered and prefixed keys included.
func TestWellKnownKeys(t *testing.T) {
	nm := readKeyList(t, "testdata/sysconfig/nm-well-known-keys")
	for k, want := range map[string]bool{
		"IPADDR": true, "IPADDR1": true, "IPADDR12": true, "IPADDRX": false, "DNS1": true, "DNS_OVER_TLS": true,
		"NM_USER_FOO": true, "NM_USER_": false, "BONDING_OPTS": true, "BONDING_SLAVE0": false, "PRIO": false,
		"DHCLIENT_SET_DEFAULT_ROUTE": false, "METRIC0": true, "ROUTING_RULE_1": true,
	} {
		if got := nm.find(k) >= 0; got != want {
			t.Errorf("NetworkManager knows %s: %v, want %v", k, got, want)
		}
	}
	init := readKeyList(t, "testdata/sysconfig/initscripts-keys")
	for k, want := range map[string]bool{"ADDRESS0": true, "NETMASK3": true, "METRIC0": false, "IPV6_FORCE_ACCEPT_RA": true, "DNS3": false, "NETWORKING_IPV6": false} {
		if got := init.find(k) >= 0; got != want {
			t.Errorf("initscripts document %s: %v, want %v", k, got, want)
		}
	}
}

// TestNMRouteLine: the port of parse_route_line on lines it takes and
// refuses.
func TestNMRouteLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		v6   bool
		ok   bool
	}{
		{"10.0.0.0/8 via 192.0.2.1 metric 5 dev eth0", false, true},
		{"10.0.0.0/8 via 192.0.2.1 dev eth0 table 7 scope link mtu lock 1400", false, true},
		{"default via 192.0.2.1", false, true},
		{"2001:db8::/48 via 2001:db8::1 dev eth0", true, true},
		{"2001:db8::/48 from 2001:db8::/64", true, true},
		{"10.0.0.0/8 from 10.1.0.0/16", false, false}, // from is IPv6's
		{"10.0.0.0/8 via 2001:db8::1", false, false},
		{"10.0.0.0/8 metric 5 metric 6", false, false},
		{"10.0.0.0/8 10.1.0.0/16", false, false},
		{"via 192.0.2.1", false, false},
		{"10.0.0.0/8 scope bogus", false, false},
		{"10.0.0.0/8 mtu", false, false},
	} {
		_, err := nmRouteLine(tc.line, tc.v6)
		if (err == nil) != tc.ok {
			t.Errorf("nmRouteLine(%q, v6 %v): %v, want ok %v", tc.line, tc.v6, err, tc.ok)
		}
	}
}
