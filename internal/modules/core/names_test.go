package core

import (
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"alice", true},
		{"Alice.B_c-d", true},
		{"_svc", true},
		{"machine$", true},
		{"a1", true},
		{"1a", true},
		{strings.Repeat("a", 32), true},
		{"", false},
		{"-rf", false},
		{"--expire", false},
		{"1234", false},
		{".", false},
		{"..", false},
		{"$", false},
		{"a$b", false},
		{"a:b", false},
		{"a,b", false},
		{"a/b", false},
		{"a b", false},
		{"a\nb", false},
		{"$(reboot)", false},
		{"`id`", false},
		{"é", false},
		{strings.Repeat("a", 33), false},
	} {
		err := CheckName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("checkName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && len(tt.name) > 2 && strings.Contains(err.Error(), tt.name) {
			t.Errorf("checkName(%q) error repeats the name: %v", tt.name, err)
		}
	}
}
