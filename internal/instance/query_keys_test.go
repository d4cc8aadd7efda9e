package instance

import "testing"

func TestVersionKey(t *testing.T) {
	for _, tt := range []struct {
		k    string
		want bool
	}{
		{"v1", true}, {"v2", true}, {"v10", true}, {"v007", true},
		{"v", false}, {"", false}, {"1", false}, {"V1", false}, {"v1a", false},
		{"va", false}, {"xv1", false}, {"v1 ", false}, {"v-1", false}, {"v١", false},
	} {
		if got := versionKey(tt.k); got != tt.want {
			t.Errorf("versionKey(%q) = %v, want %v", tt.k, got, tt.want)
		}
	}
}

func TestAlias(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"local-hostname", "local_hostname"},
		{"a//b**c==d", "a_b_c_d"},
		{"x.y:z|w,v;u", "x_y_z_w_v_u"},
		{"[a](b){c}", "_a__b__c_"},
		{"plain_key", "plain_key"},
		{"", ""},
	} {
		if got := alias(tt.in); got != tt.want {
			t.Errorf("alias(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
