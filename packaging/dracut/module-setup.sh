#!/bin/bash
# earlyinit's dracut module, installed as
# /usr/lib/dracut/modules.d/90earlyinit/module-setup.sh.
#
# In mode distro (/etc/earlyinit/setup says "distro") dracut puts earlyinit
# in its initramfs: the static binary, the modules a config drive and the
# common virtual NICs need (host-only images leave them out), and a
# pre-pivot hook that runs `earlyinit provision` on the mounted root
# ($NEWROOT, /sysroot) before switch-root. pre-pivot hooks are run by
# dracut's own init (99base) and, in a systemd initramfs, by
# dracut-pre-pivot.service (98dracut-systemd, which systemd-initrd images
# include), so the module needs neither.
#
# In any other mode check() returns 255: dracut leaves the module out
# unless it is asked for by name, and the image is the distribution's.
#
# For tests only: EARLYINIT_ROOT replaces dracut's --sysroot in the state
# file's path, and EARLYINIT_BIN replaces /usr/bin/earlyinit.

# called by dracut
check() {
    local mode=""
    local state="${EARLYINIT_ROOT-${dracutsysrootdir-}}/etc/earlyinit/setup"
    if [[ -r $state ]]; then
        read -r mode < "$state" || true
    fi
    [[ $mode == distro ]] || return 255
    [[ -x ${EARLYINIT_BIN-${dracutsysrootdir-}/usr/bin/earlyinit} ]] || return 1
    return 0
}

# called by dracut
depends() {
    return 0
}

# called by dracut
installkernel() {
    # Not only the modules the build host has loaded: the image boots
    # elsewhere, from a config drive, on whatever NIC the cloud gives.
    hostonly='' instmods isofs vfat nls_utf8 nls_cp437 nls_iso8859-1 \
        virtio_net e1000 e1000e vmxnet3 hv_netvsc ena gve
}

# called by dracut
install() {
    # Static (CGO_ENABLED=0): no libraries to resolve.
    inst_simple "${EARLYINIT_BIN-/usr/bin/earlyinit}" /usr/bin/earlyinit
    # shellcheck disable=SC2154 # dracut sets moddir
    inst_hook pre-pivot 90 "$moddir/earlyinit-provision.sh"
}
