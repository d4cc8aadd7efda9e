package selinux

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		name, in  string
		mode, typ string
		err       string // substring of the error; "" for none
	}{
		{name: "fedora", in: "# comment\nSELINUX=enforcing\nSELINUXTYPE=targeted\n", mode: Enforcing, typ: "targeted"},
		{name: "permissive, default type", in: "SELINUX=permissive\n", mode: Permissive, typ: "targeted"},
		{name: "disabled", in: "SELINUX=disabled\nSELINUXTYPE=mls\n", mode: Disabled, typ: "mls"},
		{name: "quotes", in: "SELINUX=\"enforcing\"\nSELINUXTYPE='default'\n", mode: Enforcing, typ: "default"},
		{name: "spaces, comments after", in: "  SELINUX = enforcing # on\n\tSELINUXTYPE=\"default\" # Debian\n", mode: Enforcing, typ: "default"},
		{name: "case", in: "selinux=Enforcing\n", mode: Enforcing, typ: "targeted"},
		{name: "other keys", in: "SETLOCALDEFS=0\nAUTORELABEL=1\nSELINUX=permissive\n", mode: Permissive, typ: "targeted"},
		{name: "last wins", in: "SELINUX=disabled\nSELINUX=enforcing\n", mode: Enforcing, typ: "targeted"},
		{name: "CRLF", in: "SELINUX=enforcing\r\nSELINUXTYPE=targeted\r\n", mode: Enforcing, typ: "targeted"},
		{name: "bad mode", in: "# x\nSELINUX=enforce\n", err: `/etc/selinux/config line 2: SELINUX: "enforce": want enforcing, permissive or disabled`},
		{name: "empty mode", in: "SELINUX=\n", err: `line 1: SELINUX: "": want`},
		{name: "no =", in: "SELINUX enforcing\n", err: "line 1: SELINUX: no '='"},
		{name: "type with slash", in: "SELINUX=enforcing\nSELINUXTYPE=../../tmp\n", err: `line 2: SELINUXTYPE: "../../tmp": want the name of a directory`},
		{name: "type dotdot", in: "SELINUX=enforcing\nSELINUXTYPE=..\n", err: "line 2: SELINUXTYPE"},
		{name: "type empty", in: "SELINUX=enforcing\nSELINUXTYPE=\n", err: "line 2: SELINUXTYPE"},
		{name: "unterminated quote", in: "SELINUX=\"enforcing\n", err: "line 1: SELINUX: unterminated \" quote"},
		{name: "text after quote", in: "SELINUX='enforcing'x\n", err: "line 1: SELINUX: text after the closing quote"},
		{name: "spaces in value", in: "SELINUXTYPE=a b\nSELINUX=enforcing\n", err: "line 1: SELINUXTYPE: spaces in an unquoted value"},
		{name: "no SELINUX", in: "SELINUXTYPE=targeted\n", err: "/etc/selinux/config: no SELINUX= line"},
		{name: "empty", in: "", err: "no SELINUX= line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseConfig(configPath, []byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.mode != c.mode || got.policy != c.typ {
				t.Errorf("got %s %s, want %s %s", got.mode, got.policy, c.mode, c.typ)
			}
		})
	}
}
