#!/bin/sh
# earlyinit's deb postrm and rpm %postun (nfpm puts this file in both).
# Purging the package (rpm: erasing it) removes the mode earlyinit setup
# recorded, which no package file owns, and /etc/earlyinit if that leaves
# it empty. A plain deb remove keeps it, as dpkg keeps conffiles.
#
# deb: $1 is purge, remove, upgrade, ... rpm: $1 is the number of earlyinit
# packages left after this one: 0 on erase.
set -e

case "$1" in
purge | 0)
	rm -f /etc/earlyinit/setup
	rmdir /etc/earlyinit 2>/dev/null || true
	;;
esac
exit 0
