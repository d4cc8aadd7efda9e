package growpart

import (
	"errors"
	"fmt"

	"github.com/earlyinit/earlyinit/internal/resizefs"
)

// ResizeMounted grows the filesystem mounted at mount to fill dev, its
// block device (resizefs.Grow), and says in one line what happened; what
// names the mount in messages ("/", "/srv"). A partition the kernel
// already sees overlapping another one (a table enlarged over it by
// another tool or an older earlyinit) is never filled: the filesystem
// would grow over the other partition's data. A filesystem resizefs does
// not grow is a line, not an error (unsupported is set).
func (s System) ResizeMounted(what, mount string, dev Device) (line string, unsupported bool, err error) {
	if p, err := s.Partition(dev); err == nil {
		if err := s.CheckOverlap(p); err != nil {
			return "", false, fmt.Errorf("%s not resized: %w", what, err)
		}
	} else if !errors.Is(err, ErrNotPartition) {
		return "", false, fmt.Errorf("%s not resized: %w", what, err)
	}
	r, err := resizefs.Grow(mount, dev.Path)
	if errors.Is(err, resizefs.ErrUnsupported) {
		return fmt.Sprintf("%s not resized: %v", what, err), true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", what, err)
	}
	if r.Grown() {
		return fmt.Sprintf("%s (%s) grown from %d to %d bytes", what, r.FSType, r.Old, r.New), false, nil
	}
	return fmt.Sprintf("%s (%s): nothing to grow (%d bytes)", what, r.FSType, r.Old), false, nil
}
