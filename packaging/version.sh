#!/bin/sh
# Prints earlyinit's version, from git, for the binary (boot.Version) and the
# packages. It is a valid Debian upstream version and RPM version (digits
# first; no '-' or '_'), and later commits sort higher in both:
#   no tag:               0.0.0~git<YYYYMMDD>.<sha>   ('~': before any 0.0.0)
#   on tag v1.2.3:        1.2.3                       (v1.2.3-rc1: 1.2.3~rc1)
#   4 commits after it:   1.2.3+git<YYYYMMDD>.4.<sha>
# YYYYMMDD is the commit's date in UTC; sha is 12 hex digits. Outside a git
# work tree it prints 0.0.0~unknown.
set -eu
cd "$(dirname "$0")/.."
if ! head=$(git rev-parse --short=12 --verify -q HEAD 2>/dev/null); then
	echo "0.0.0~unknown"
	exit 0
fi
date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d HEAD)
if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null); then
	base=$(printf '%s' "${tag#v}" | tr -- '-_' '~~')
	case "$base" in
	*[!0-9A-Za-z.+~]* | [!0-9]*)
		echo "version.sh: tag $tag does not make a Debian and RPM version ($base)" >&2
		exit 1
		;;
	esac
	n=$(git rev-list --count "$tag..HEAD")
	if [ "$n" -eq 0 ]; then
		echo "$base"
	else
		echo "$base+git$date.$n.$head"
	fi
else
	echo "0.0.0~git$date.$head"
fi
