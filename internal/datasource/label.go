package datasource

import "strings"

// LabelNearMiss tells whether a filesystem label that is not one of want
// looks like a mistyped one of them, and which: the same ignoring case, "_"
// for "-" and surrounding spaces ("Config-2", "CONFIG_2", "cidata "). Such a
// drive is not read (cloud-init would not read it either) but deserves a
// log line saying why, as a drive with an unrelated label does not.
func LabelNearMiss(label string, want []string) (string, bool) {
	for _, w := range want {
		if label == w {
			return "", false
		}
	}
	norm := func(s string) string {
		return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
	}
	n := norm(label)
	if n == "" {
		return "", false
	}
	for _, w := range want {
		if norm(w) == n {
			return w, true
		}
	}
	return "", false
}
