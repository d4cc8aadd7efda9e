#!/bin/sh
# earlyinit's dracut pre-pivot hook, installed into the initramfs as
# /lib/dracut/hooks/pre-pivot/90-earlyinit-provision.sh by the 90earlyinit
# module in mode distro.
#
# dracut sources its hooks (`. hook.sh`) from dracut's init or
# dracut-pre-pivot.service, once the real root is mounted at $NEWROOT
# (/sysroot), before switch-root: no `exit` here, no `set -e`, no variable
# left behind. `earlyinit provision` does the datasource, instance,
# network, growpart and handoff steps on that root; it reads
# earlyinit=disabled and earlyinit.* from /proc/cmdline itself. Nothing it
# does may stop the boot: a failure is reported and the boot goes on.

if [ -x /usr/bin/earlyinit ]; then
    _earlyinit_rc=0
    /usr/bin/earlyinit provision --root "${NEWROOT:-/sysroot}" || _earlyinit_rc=$?
    if [ "$_earlyinit_rc" -ne 0 ]; then
        if command -v warn >/dev/null 2>&1; then
            warn "earlyinit: provision failed (exit $_earlyinit_rc); the boot goes on"
        else
            echo "earlyinit: provision failed (exit $_earlyinit_rc); the boot goes on" >&2
        fi
    fi
    unset _earlyinit_rc
fi
