//go:build initrd

package userdata

// The initramfs build (tag initrd) leaves out the Jinja engine (some
// 300 KB): its late stages, run on roots without the package, drop a
// `## template: jinja` part with a warning saying which binary renders it.

// RenderJinja drops the TypeJinja parts of parts, with a warning each.
func RenderJinja(parts []Part, _ func() ([]byte, error), _ map[string]any) ([]Part, []Warning) {
	var warns []Warning
	out := parts[:0:0]
	for _, p := range parts {
		if p.Type == TypeJinja {
			warns = append(warns, Warning("part "+p.Filename+": jinja templates are rendered by the package's /usr/bin/earlyinit, not by the initramfs build's late stages: skipped"))
			continue
		}
		out = append(out, p)
	}
	return out, warns
}
