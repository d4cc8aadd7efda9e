//go:build !initrd

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/paths"
)

func init() {
	verbs["man"] = &verbMan
}

// verbMan is the man verb.
var verbMan = verb{help: "print the manual page (roff, section 8), made from this help and the verbs' flags",
	flags: func() *pflag.FlagSet { return newFlags("man") }, run: manVerb}

func manVerb(args []string) int {
	fs := newFlags("man")
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return usageError("man", "takes no arguments, got %q", fs.Args())
	}
	if err := writeMan(os.Stdout, boot.Version); err != nil {
		fmt.Fprintf(os.Stderr, "earlyinit man: %v\n", err)
		return 1
	}
	return 0
}

// manFiles are the FILES section: the paths the package installs or
// earlyinit writes, each with what it is.
var manFiles = []struct{ path, what string }{
	{"/etc/earlyinit/setup", "the mode written by earlyinit setup: own, distro or off. Not part of the package; removed when the package is purged."},
	{"/etc/earlyinit/initramfs.conf", "the configuration of earlyinit initramfs: module set, host-only choice, compression."},
	{paths.DisabledFile, "when present, earlyinit does nothing at boot (cloud-init's /etc/cloud/cloud-init.disabled). Written by the image's builder or admin, never by earlyinit."},
	{"/etc/kernel/postinst.d/zz-earlyinit, /etc/kernel/postrm.d/zz-earlyinit", "Debian kernel hooks: in mode own, build or remove the initramfs of a kernel being installed or removed."},
	{"/usr/lib/kernel/install.d/60-earlyinit.install", "the kernel-install(8) plugin doing the same for kernel-install."},
	{"/usr/share/initramfs-tools/hooks/earlyinit", "the initramfs-tools hook: in mode distro, adds earlyinit and its boot script to the distro's initramfs."},
	{"/usr/lib/dracut/modules.d/90earlyinit/", "the dracut module: in mode distro, runs earlyinit provision on the mounted root before switch-root."},
	{paths.CacheDir, "the instance cache in the real root (cloud-init's /var/lib/cloud); earlyinit clean removes it but its seed directory."},
	{seedDir, "a seed kept by earlyinit clean, removed by earlyinit clean --seed (cloud-init's /var/lib/cloud/seed)."},
	{paths.InstanceLink + "/user-data.txt", "this instance's user-data (0600), as the datasource gave it; earlyinit schema --system checks it."},
	{paths.RunDir, "this boot's state (cloud-init's /run/cloud-init), in the initramfs's /run, then the real root's."},
	{paths.BootRecordFile, "the boot record: each initramfs step's start, duration and error; read by earlyinit analyze."},
	{paths.InitramfsLogFile, "the initramfs's log (0600), appended to the late stages' log."},
	{late.StatusFile + ", " + late.ResultFile, "the late stages' status and result, as cloud-init's; read by earlyinit status and analyze."},
	{paths.RunDir + "/" + instance.InstanceDataFile + ", " + instance.InstanceDataSensitiveFile, "the instance data, secrets redacted (0644) and whole (0600); read by earlyinit query."},
	{late.LogFile, "the late stages' log (0600), with the initramfs's; earlyinit clean --logs removes it."},
	{late.OutputLogFile, "the output of the commands and scripts the late stages run (0600); earlyinit clean --logs removes it."},
	{machineIDFile, "removed by earlyinit clean --machine-id, for the next boot to make a new one."},
}

// manCmdline is the KERNEL COMMAND LINE section: the options earlyinit
// reads (internal/settings, docs/reference.md's table), each with what it does.
var manCmdline = []struct{ opt, what string }{
	{"root=", "the root device: a path, LABEL=, UUID=, PARTUUID= or PARTLABEL=."},
	{"rootfstype=", "the filesystem type(s) to try, comma separated; default: what the probe finds."},
	{"rootflags=", "mount options for the root."},
	{"ro, rw", "mount the root read-only (the kernel's default) or read-write."},
	{"init=", "the real init; default: the first of /sbin/init, /etc/init, /bin/init, /bin/sh."},
	{"rootwait", "accepted; earlyinit always waits for the root, within earlyinit.timeout."},
	{"rootdelay=N", "sleep N seconds before looking for the root."},
	{"earlyinit=disabled", "skip all of earlyinit's work: only mount the root and switch_root (as the file " + paths.DisabledFile + ")."},
	{"earlyinit.debug", "log more: every module loaded, every device probed (a boolean: bare, or =1/yes/true/on, =0/no/false/off)."},
	{"earlyinit.timeout=", "the bound on every wait, in seconds or as a duration (1500ms); default 30 s."},
	{"earlyinit.ds=", "the datasources to try, in order, comma separated."},
	{"earlyinit.metadata_url=", "the metadata service's base URL, http:// only."},
	{"earlyinit.keepnet", "keep the temporary DHCP lease after the metadata service was read (a boolean)."},
	{"earlyinit.growpart=0", "do not grow the root's partition or filesystem (a boolean; default: as the configuration says)."},
	{"earlyinit.renderer=", "the network config format to write: networkd, netplan, sysconfig, eni or network-manager; default: detected."},
	{"earlyinit.test_panic=", "test builds only (tag faultinject): panic in the named steps."},
	{"ds=nocloud;s=PATH;i=ID;h=HOST", "cloud-init's NoCloud command line: a seed directory or URL, the instance id and host name (ds=nocloud-net too)."},
	{"network-config=disabled", "as cloud-init: no network files written, no NIC renamed."},
	{"-- ARGS", "arguments after \"--\" go to the real init."},
}

// manExit is the EXIT STATUS section.
var manExit = []struct{ code, what string }{
	{"0", "success; for status, not run, running, done or disabled."},
	{"1", "failure: what failed is said on stderr; for status, an error in the late stages; for schema, an invalid cloud-config."},
	{"2", "a usage error (an unknown verb or flag, a missing operand), said on stderr with the verb's synopsis; for status, degraded (done or running with recoverable errors), as cloud-init's."},
}

// manSeeAlso are the SEE ALSO section's pages, as name(section).
var manSeeAlso = []string{"cloud-init(1)", "update-initramfs(8)", "dracut(8)", "kernel-install(8)"}

// writeMan writes earlyinit's manual page, in roff for man(7), to w: the
// CLI's own synopsis, description and verbs (their help lines), and the
// files. version goes in the page's footer.
func writeMan(w io.Writer, version string) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p(".\\\" Generated by `earlyinit man` from the CLI's help; do not edit.\n")
	p(".TH EARLYINIT 8 \"\" \"earlyinit %s\" \"System Administration\"\n", roffQuoted(version))
	p(".SH NAME\nearlyinit \\- cloud\\-init's job, done from the initramfs\n")
	verb, flags, _ := strings.Cut(strings.TrimPrefix(usageSynopsis, "earlyinit "), " ")
	p(".SH SYNOPSIS\n.B earlyinit\n.I %s\n.RI %s\n", roffText(verb), roffText(flags))
	p(".SH DESCRIPTION\n%s\n", roffLine(usageIntro))
	p(".SH OPTIONS\n")
	p(".TP\n.B %s\n%s\n", roffText("-h, --help"), roffLine("print the help (earlyinit VERB --help: a verb's), exit 0."))
	p(".TP\n.B %s\n%s\n", roffText("-v, --version"), roffLine("print the version, as earlyinit version, exit 0."))
	p(".SH VERBS\n")
	p("%s\n", roffLine("Flags may come before or after a verb's operands, in GNU's forms (--long, --long=VALUE, -s VALUE, bundled -ab); -- ends them. Each verb takes -h and --help."))
	for _, n := range verbNames() {
		p(".SS %s\n%s\n", roffText(verbSynopsis(n)), roffLine(verbs[n].help))
		if verbs[n].flags == nil {
			continue
		}
		verbs[n].flags().VisitAll(func(f *pflag.Flag) {
			p(".TP\n.B %s\n%s\n", roffText(flagSpec(f, "-", "--")), roffLine(flagUsage(f)))
		})
	}
	p(".SH KERNEL COMMAND LINE\n")
	p("%s\n", roffLine("At boot, earlyinit reads these words of /proc/cmdline. A malformed value of one of its options, or an unknown earlyinit.* key, is one error line on the console; the default is kept."))
	for _, c := range manCmdline {
		p(".TP\n.B %s\n%s\n", roffText(c.opt), roffLine(c.what))
	}
	p(".SH FILES\n")
	for _, f := range manFiles {
		p(".TP\n.I %s\n%s\n", roffText(f.path), roffLine(f.what))
	}
	p(".SH EXIT STATUS\n")
	for _, e := range manExit {
		p(".TP\n.B %s\n%s\n", roffText(e.code), roffLine(e.what))
	}
	p(".SH SEE ALSO\n")
	for i, s := range manSeeAlso {
		name, sect, _ := strings.Cut(strings.TrimSuffix(s, ")"), "(")
		sep := ","
		if i == len(manSeeAlso)-1 {
			sep = ""
		}
		p(".BR %s (%s)%s\n", roffText(name), roffText(sect), sep)
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("writing the manual page: %w", err)
	}
	return nil
}

// roffText escapes s for roff text or a macro's argument: a backslash is
// \e and a hyphen-minus \- (so options copy and paste as ASCII), and
// newlines become spaces so s stays one line.
func roffText(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`, "\n", " ", "\r", " ").Replace(s)
}

// roffLine escapes s as roffText does and, as s is a whole text line, keeps
// a leading dot or apostrophe from being read as a request (\& before it).
func roffLine(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffQuoted escapes s for a double-quoted macro argument: as roffText,
// with a double quote written as "" (groff's way inside quotes).
func roffQuoted(s string) string {
	return strings.ReplaceAll(roffText(s), `"`, `""`)
}
