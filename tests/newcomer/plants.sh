#!/usr/bin/env bash
# Every planted regression of regress/plants/ still applies to this tree:
# `make regress VERSION=HEAD,HEAD+plant=NAME` (and CI's proof with cpu5)
# applies it strictly (git apply) to the exported ref, so a file it
# touches that moved or changed around its hunk fails the run, not here.
#
# usage: tests/newcomer/plants.sh [DIR]    (DIR: the tree, default ours)
set -uo pipefail
dir=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$dir" || exit 2
n=0 bad=0
for p in regress/plants/*.diff; do
	n=$((n + 1))
	if out=$(git apply --check "$p" 2>&1); then
		echo "ok   $p"
	else
		echo "FAIL $p does not apply: $out"
		bad=$((bad + 1))
	fi
done
[ "$n" -gt 0 ] || { echo "FAIL no plant found: the check is blind"; exit 1; }
echo "plants: $n, $bad not applying"
[ "$bad" -eq 0 ]
