package userdata

// TypeJinja is a part starting "## template: jinja": Decode keeps it,
// RenderJinja renders it into the part it becomes (jinja.go; the
// initramfs build drops it, jinja_initrd.go).
const TypeJinja = typeJinja
