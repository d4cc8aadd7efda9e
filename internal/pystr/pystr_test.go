package pystr

import (
	"reflect"
	"testing"
)

// TestSplitlines: str.splitlines ends lines at \r\n, \r, \n and the other
// Unicode line ends, drops the ends, and makes nothing of "".
func TestSplitlines(t *testing.T) {
	if got := Splitlines("a\r\nb\rc\n\nd\u2028e\n"); !reflect.DeepEqual(got, []string{"a", "b", "c", "", "d", "e"}) {
		t.Errorf("Splitlines %q", got)
	}
	if got := Splitlines(""); got != nil {
		t.Errorf("Splitlines of nothing %q", got)
	}
}
