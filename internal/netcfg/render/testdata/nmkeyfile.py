#!/usr/bin/python3
"""Read NetworkManager keyfiles offline, as NetworkManager's keyfile plugin does.

Each argument is a .nmconnection file. It is read with libnm's own keyfile
reader (nm_keyfile_read, the code the daemon's keyfile plugin runs, through
GObject introspection: gir1.2-nm-1.0), with a handler that collects the
reader's warnings, and then normalized and verified as the daemon does
before it takes a connection. Every problem is printed as "FILE: problem";
the exit status is 1 when there is any, 0 when every file is accepted.
There is no offline checker in NetworkManager itself (nmcli and
NetworkManager need the daemon or read only NetworkManager.conf).
"""
import sys

import gi

gi.require_version("NM", "1.0")
from gi.repository import GLib, NM  # noqa: E402

KEYFILE_DIR = "/etc/NetworkManager/system-connections"


def problems(path):
    out = []
    kf = GLib.KeyFile()
    try:
        kf.load_from_file(path, GLib.KeyFileFlags.NONE)
    except GLib.Error as e:
        return ["not a key file: %s" % e.message]

    def handler(keyfile, connection, handler_type, handler_data, user_data):
        if handler_type == NM.KeyfileHandlerType.WARN:
            message, _severity = handler_data.warn_get()
            out.append("warning: %s" % message)
        return False

    try:
        conn = NM.keyfile_read(kf, KEYFILE_DIR, NM.KeyfileHandlerFlags.NONE, handler, None)
    except GLib.Error as e:
        return out + ["refused: %s" % e.message]
    try:
        conn.normalize()
        conn.verify()
    except GLib.Error as e:
        out.append("invalid: %s" % e.message)
    return out


def main():
    bad = False
    for path in sys.argv[1:]:
        for p in problems(path):
            print("%s: %s" % (path, p))
            bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
