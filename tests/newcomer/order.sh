#!/usr/bin/env bash
# README's two commands on a fresh Debian 12 machine: `make demo` and
# `make check` must install the packages (scripts/install-deps) before they
# compile anything, since the plugin needs ppp-dev's <pppd/pppd.h>.  This
# asks make what it would run, as on a machine where nothing is built yet
# (-n -B), and fails when a compiler comes before the installer, or when the
# installer never comes.
#
# usage: tests/newcomer/order.sh [DIR]    (DIR: the tree to ask, default ours)
set -euo pipefail
dir=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
# A compiler name no recipe spells by itself: every line make would run
# through $(CC), in this Makefile and the plugin's, starts with it.
cc=newcomer-order-cc
fail=0

for target in demo check; do
	if ! out=$(env -u MAKEFLAGS -u MAKELEVEL make -s -n -B -C "$dir" \
			CC="$cc" "$target" 2>&1); then
		echo "FAIL make $target: make -n itself failed:"
		printf '%s\n' "$out" | tail -5 | sed 's/^/    /'
		fail=1
		continue
	fi
	install=$(printf '%s\n' "$out" | grep -n -m1 -E '(^|[ /])scripts/install-deps( |$)' | cut -d: -f1 || true)
	compile=$(printf '%s\n' "$out" | grep -n -m1 -E "^$cc " | cut -d: -f1 || true)
	if [ -z "$compile" ]; then
		echo "FAIL make $target: make -n -B shows no compiler run at all (the check is blind)"
		fail=1
	elif [ -z "$install" ]; then
		echo "FAIL make $target: compiles at line $compile of make -n with no scripts/install-deps before it"
		fail=1
	elif [ "$install" -gt "$compile" ]; then
		echo "FAIL make $target: compiles at line $compile of make -n, installs packages only at line $install"
		fail=1
	else
		echo "ok   make $target: scripts/install-deps (line $install) before the first compiler run (line $compile)"
	fi
done
exit $fail
