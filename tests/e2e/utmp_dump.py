#!/usr/bin/env python3
"""utmp_dump.py FILE -- print a utmp/wtmp file's records the way util-linux's
utmpdump starts its lines: [type] [pid] [id] [user] [line] [host].

Debian 13 ships no utmpdump (its login records moved to wtmpdb), but pppd's
and the plugin's logwtmp (glibc's there) still write /var/log/wtmp in utmp
format, and the e2e tests read it.  Record layout: glibc's struct utmp on
Linux x86-64 (utmp(5)), 384 bytes.
"""
import struct
import sys

RECORD = 384
HEAD = struct.Struct('<h2xi32s4s32s256s')   # type, pid, line, id, user, host
USER_W, LINE_W, HOST_W = 8, 12, 20           # utmpdump's minimum widths


def text(b):
    return b.split(b'\0', 1)[0].decode('utf-8', 'replace')


def main():
    data = open(sys.argv[1], 'rb').read()
    for off in range(0, len(data) - RECORD + 1, RECORD):
        typ, pid, line, ident, user, host = HEAD.unpack_from(data, off)
        print('[%d] [%05d] [%-4.4s] [%-*s] [%-*s] [%-*s]' % (
            typ, pid, text(ident), USER_W, text(user), LINE_W, text(line),
            HOST_W, text(host)))


if __name__ == '__main__':
    main()
