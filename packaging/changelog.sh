#!/bin/sh
# Writes the packages' changelog (Debian's format, as /usr/share/doc/
# earlyinit/changelog.gz of a native package) for version $1 to stdout: one
# entry naming the commit it was built from, dated and signed as that commit
# and packaging/nfpm.yaml's maintainer, so the same commit gives the same
# bytes.
set -eu
[ $# -eq 1 ] || { echo "usage: changelog.sh VERSION" >&2; exit 2; }
version=$1
cd "$(dirname "$0")/.."
maintainer=$(sed -n 's/^maintainer: *//p' packaging/nfpm.yaml)
[ -n "$maintainer" ] || { echo "changelog.sh: packaging/nfpm.yaml: no maintainer: line" >&2; exit 1; }
if commit=$(git rev-parse --verify -q HEAD 2>/dev/null); then
	when=$(LC_ALL=C TZ=UTC git log -1 --format=%cd --date='format-local:%a, %d %b %Y %H:%M:%S +0000' HEAD)
	what="Built from git commit $commit."
else
	when=$(LC_ALL=C date -u -R -d "@${SOURCE_DATE_EPOCH:-0}")
	what="Built outside git."
fi
printf 'earlyinit (%s) unstable; urgency=medium\n\n  * %s\n\n -- %s  %s\n' "$version" "$what" "$maintainer" "$when"
