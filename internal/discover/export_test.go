package discover

import (
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/settings"
)

// Find tries the datasources in order and returns the first that reads
// cleanly, or nil when there is none: a normal state, logged as such. A
// source that is there but cannot be used is rejected with its reason
// logged, and nothing of it is kept; the error says how many were, when
// none could be used.
func Find(sys System, s settings.Settings, log Log) (*instance.Data, error) {
	return FindWith(sys, s, Image{}, log)
}
