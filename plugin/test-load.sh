#!/bin/bash
# test-load.sh -- load the plugin into the real pppd of this machine and
# check what happens at option-parsing time (no PPP kernel needed: pppd
# parses all options, including the plugin's, before it opens /dev/ppp).
#
#   test-load.sh [PLUGIN.so]
#
# Checks: the plugin loads and registers its options; a malformed peers file
# or a missing one makes pppd exit with status 2 (option error) naming
# FILE:LINE; a plugin built for another pppd version is refused by pppd.
set -u
so=$(realpath "${1:-./pptpd-policy.so}")
pppd=${PPPD:-/usr/sbin/pppd}
if [ ! -x "$pppd" ]; then
	echo "test-load: SKIP: no $pppd"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "test-load: SKIP: pppd's plugin option needs root"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }

# expect NAME RC REGEX -- pppd ARGS: run pppd, check exit status and output.
expect() {
	local name=$1 want_rc=$2 re=$3 out rc
	shift 4
	out=$("$pppd" "$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want_rc" ] && grep -Eq -- "$re" <<<"$out"; then
		ok "$name"
	else
		bad "$name (rc $rc, want $want_rc; output: $out)"
	fi
}

printf '# test\nuser alice require-128\nuser bob allow stateful rate 4M/1M\naddress 198.18.0.0/24 deny rate 0/512k\n' >"$tmp/good"
printf 'user alice require-128\n\nuser bob alow\n' >"$tmp/bad"
printf 'user alice require-128 rate 0/0\n' >"$tmp/badrate"

# The version pppd reports; the plugin must have been built for it (and
# says so at load: pptpd's log then names the pppd it serves).
ver=$("$pppd" --version 2>&1 | awk '{print $3}')
expect "loads into pppd $ver, built for it" 0 \
	"pptpd-policy: plugin for pppd ${ver//./\\.} loaded" -- \
	plugin "$so" --version
# pptpd's RADIUS setups load pppd's radius.so first: both in one pppd.
radius=$(dirname "$(realpath "$pppd")")/../lib/pppd/$ver/radius.so
if [ -e "$radius" ]; then
	expect "loads beside pppd's radius.so" 0 \
		"plugin for pppd ${ver//./\\.} loaded" -- \
		plugin radius.so plugin "$so" --version
fi
expect "accepts its options with a good peers file" 0 'pppd version' -- \
	plugin "$so" pptpd-peers "$tmp/good" pptpd-report /run/x.sock \
	pptpd-call 7 pptpd-client 198.18.0.2 pptpd-logwtmp --version
expect "malformed peers file: exit 2 naming file:line" 2 \
	"pptpd-policy: $tmp/bad:3: unknown policy 'alow'" -- \
	plugin "$so" pptpd-peers "$tmp/bad" --version
expect "peers file with a bad rate: exit 2 naming file:line" 2 \
	"pptpd-policy: $tmp/badrate:1: rate 0/0 limits nothing: omit rate" -- \
	plugin "$so" pptpd-peers "$tmp/badrate" --version
expect "missing peers file: exit 2" 2 \
	"pptpd-policy: $tmp/none: cannot open" -- \
	plugin "$so" pptpd-peers "$tmp/none" --version
expect "the kernel channel's option is taken by pppd" 0 'pppd version' -- \
	plugin "$so" nodetach pptpd-kernel 4711,33,198.18.0.1,198.18.0.2 \
	pptpd-kernel-fd 3 --version
expect "a bad descriptor for the kernel channel: exit 2" 2 \
	'pptpd-kernel-fd 1: not a descriptor above 2' -- \
	plugin "$so" pptpd-kernel 4711,33,198.18.0.1,198.18.0.2 \
	pptpd-kernel-fd 1 --version
expect "a bad kernel channel option: exit 2" 2 \
	'pptpd-kernel 4711,33,198.18.0.1: fewer than four fields' -- \
	plugin "$so" pptpd-kernel 4711,33,198.18.0.1 --version
# pppd as pptpd starts it: descriptor 4 is the call's report channel, a
# UNIX seqpacket socket (pair), or, for the refusal, a file.
printf '#!/usr/bin/env python3\nimport os, socket, sys\na, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)\nos.dup2(b.fileno(), 4)\nos.set_inheritable(4, True)\nos.execv("%s", ["pppd"] + sys.argv[1:])\n' "$pppd" >"$tmp/pppd-pair"
printf '#!/bin/sh\nexec "%s" "$@" 4</dev/null\n' "$pppd" >"$tmp/pppd-file"
chmod +x "$tmp/pppd-pair" "$tmp/pppd-file"
real=$pppd
pppd=$tmp/pppd-pair
expect "the report channel's option is taken by pppd" 0 'pppd version' -- \
	plugin "$so" pptpd-report-fd 4 pptpd-call 7 --version
pppd=$tmp/pppd-file
expect "a report channel that is not a seqpacket socket: exit 2" 2 \
	'pptpd-report-fd 4: not a UNIX seqpacket socket' -- \
	plugin "$so" pptpd-report-fd 4 pptpd-call 7 --version
pppd=$real
expect "unknown option still rejected" 2 'unrecognized option' -- \
	plugin "$so" pptpd-bogus --version

# A copy of the plugin that claims another pppd version: pppd refuses it.
python3 - "$so" "$tmp/other.so" "$ver" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
v = sys.argv[3].encode() + b'\x00'
assert d.count(v) >= 1, 'no version string'
other = b'9' * (len(v) - 1) + b'\x00'
open(sys.argv[2], 'wb').write(d.replace(v, other))
PY
expect "plugin for another pppd version is refused" 2 \
	"is for pppd version 9+, this is $ver" -- \
	plugin "$tmp/other.so" --version

echo "test-load: $pass passed, $fail failed"
[ "$fail" = 0 ]
