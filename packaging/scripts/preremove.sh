#!/bin/sh
# earlyinit's deb prerm and rpm %preun (nfpm puts this file in both).
# Removing the package gives back the distro's boot: `earlyinit setup off`
# records mode off and regenerates every installed kernel's initramfs with
# the distro's generator, while earlyinit's hooks are still installed (they
# add nothing in mode off). Then the mode recorded before is put back
# without regenerating: once the package is gone no hook acts on it (the
# kernel hooks left as conffiles do nothing without /usr/bin/earlyinit), and
# reinstalling after a remove without purge, or dpkg undoing the removal
# (postinst abort-remove), brings back the admin's mode instead of off.
# Upgrades do nothing here: the new version's postinst regenerates.
#
# A failure must not make the package unremovable: it is reported loudly,
# with what to run by hand, and the removal goes on. The images left then
# still hold earlyinit until they are regenerated.
#
# deb: $1 is remove (or upgrade, deconfigure, failed-upgrade). rpm: $1 is
# the number of earlyinit packages left after this one: 0 on erase.
set -e

case "$1" in
remove | 0)
	if ! command -v earlyinit >/dev/null 2>&1; then
		echo "earlyinit: WARNING: earlyinit is not on PATH; the initramfs images were not regenerated without it." >&2
		exit 0
	fi
	prev=$(earlyinit setup 2>/dev/null) || prev=""
	if ! earlyinit setup off; then
		echo "earlyinit: WARNING: 'earlyinit setup off' failed: some initramfs images may still hold earlyinit." >&2
		echo "earlyinit: WARNING: regenerate them with 'update-initramfs -u -k all' or 'dracut --force --regenerate-all'." >&2
	fi
	case "$prev" in
	own | distro)
		earlyinit setup --no-regenerate "$prev" >/dev/null 2>&1 || true
		;;
	esac
	;;
esac
exit 0
