//go:build faultinject

package boot

import (
	"os"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/settings"
)

// injectFault panics at the start of each step named by
// earlyinit.test_panic=step[,step...] on the kernel command line. Only test
// builds have it (go build -tags faultinject; make qemu-test builds a second
// initramfs with it): a QEMU test proves the boot reaches the real init
// whichever step panics.
func injectFault(step string) {
	raw, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return
	}
	for _, f := range settings.SplitCmdline(string(raw)) {
		if v, ok := strings.CutPrefix(f, "earlyinit.test_panic="); ok && slices.Contains(strings.Split(v, ","), step) {
			panic("fault injected by earlyinit.test_panic=" + step)
		}
	}
}
