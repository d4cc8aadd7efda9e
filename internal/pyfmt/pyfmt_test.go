package pyfmt

import (
	"errors"
	"testing"
)

func TestErrorNamesMissingKey(t *testing.T) {
	_, err := Format("mkfs -L %(label)s %(lable)s secret", map[string]string{"label": "x"})
	var fe *Error
	if !errors.As(err, &fe) || fe.Kind != KeyError || fe.Key != "lable" {
		t.Fatalf("got %#v", err)
	}
	if got, want := err.Error(), "no value for %(lable)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestErrorText(t *testing.T) {
	for _, tt := range []struct{ tmpl, want string }{
		{"50%", "ValueError: incomplete format"},
		{"%(a)d", "TypeError: %d format: a real number is required, not str"},
		{"%s", "Unsupported: %s without a name formats the whole mapping"},
	} {
		_, err := Format(tt.tmpl, map[string]string{"a": "x"})
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: err %v, want %q", tt.tmpl, err, tt.want)
		}
	}
}
