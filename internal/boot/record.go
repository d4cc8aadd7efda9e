package boot

import (
	"os"

	"github.com/earlyinit/earlyinit/internal/paths"
)

// markDisabled tells `earlyinit status` that this boot was disabled.
func markDisabled() error {
	if err := os.MkdirAll(paths.RunDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(paths.RunDisabledFile, nil, 0o644)
}

// saveLog leaves the initramfs log where the boot stage appends it to
// /var/log/earlyinit.log.
func (b *Boot) saveLog() {
	if err := os.MkdirAll(paths.RunDir, 0o755); err == nil {
		os.WriteFile(paths.InitramfsLogFile, b.Log.Bytes(), 0o600)
	}
}
