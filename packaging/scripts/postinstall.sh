#!/bin/sh
# earlyinit's deb postinst and rpm %post (nfpm puts this file in both).
# Installing or upgrading puts earlyinit into the next boot, as installing
# cloud-init does: `earlyinit setup --install` keeps the mode recorded in
# /etc/earlyinit/setup (default: distro) and regenerates every installed
# kernel's initramfs for it.
#
# A failed regeneration fails the install, loudly, as a failed
# update-initramfs fails a kernel's or initramfs-tools' postinst: dpkg leaves
# the package unconfigured (`dpkg --configure -a` retries once the cause is
# fixed) and rpm reports the failed %post. The initramfs images are written
# whole or not at all, so the kernels still boot the images they had.
#
# deb: $1 is configure, or abort-upgrade/abort-remove/abort-deconfigure when
# a removal or upgrade that ran our prerm is undone (regenerate again, as the
# prerm may have run `setup off`). rpm: $1 is the number of earlyinit
# packages installed after this one: 1 on install, 2 on upgrade.
set -e

case "$1" in
configure | abort-upgrade | abort-remove | abort-deconfigure | [0-9]*)
	if ! earlyinit setup --install; then
		echo "earlyinit: 'earlyinit setup --install' failed: the initramfs images were not regenerated for earlyinit." >&2
		echo "earlyinit: fix the error above, then run 'earlyinit setup --install' (or 'dpkg --configure -a')." >&2
		exit 1
	fi
	;;
esac
exit 0
