#!/bin/bash
# tests/newcomer/fresh.sh RELEASE [TARGET...] -- README's two commands as a
# newcomer runs them: in a fresh Debian root of RELEASE (bookworm, trixie)
# that has only debootstrap's minbase, git and make
# (tests/newcomer/fresh-packages.txt), a clone of this repository's
# committed HEAD, then `make demo` and `make check` (or TARGET...) chrooted
# in it, as root. Everything else they need, they must install themselves;
# where the kernel has no PPP they boot the test VM over that root, with the
# release's own kernel.
#
# A throw-away copy of the root in build/newcomer-RELEASE/ (removed first;
# E2E_KEEP-like: kept afterwards for a look). Long: a full `make check`.
# Not part of `make check` or CI; the closing note of a change to the
# install path says when it was last run.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
release=${1:?usage: tests/newcomer/fresh.sh RELEASE [TARGET...]}
shift
[ $# -gt 0 ] || set -- demo check
root=$("$top/scripts/vm/mkroot" "$release" "$top/tests/newcomer/fresh-packages.txt")
scr=$top/build/newcomer-$release
rm -rf "$scr"
mkdir -p "$scr"
echo "fresh: copying $root"
cp -a "$root" "$scr/root"
cp -L /etc/resolv.conf "$scr/root/etc/resolv.conf"
git clone -q "$top" "$scr/root/root/pptpd"
tree=$scr/root/root/pptpd
rc=0
for t in "$@"; do
	echo "fresh: make $t in a fresh $release root (git $(git -C "$tree" rev-parse --short HEAD))"
	start=$SECONDS
	if "$top/scripts/vm/in-root" "$scr/root" --tree "$tree" -- make "$t"; then
		echo "fresh: make $t: ok ($((SECONDS - start)) s)"
	else
		rc=$?
		echo "fresh: make $t: FAILED, exit $rc ($((SECONDS - start)) s)"
		break
	fi
done
exit "$rc"
