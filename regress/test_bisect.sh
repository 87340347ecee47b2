#!/bin/sh
# regress/bisect finds a planted regression: a scratch history of 16
# commits on top of this tree's HEAD, in a temporary clone, where commit
# 11 applies regress/plants/cpu5.diff (5 % more server CPU per MB) and the
# others change nothing. `regress/bisect BASE TIP` must name commit 11
# within ceil(log2 16) + 1 = 5 measured steps (the check of TIP against
# BASE included), in QUICK mode on the one stream and metric the plant is
# clearest on (udp-high.up's CPU per MB: +5.0 %, interval +4.7 .. +5.2 %
# in the calibration runs, regress/README.md). The empty commits share
# their tree, so the whole history is two builds (regress/build.py).
#   regress/test_bisect.sh        (as root: the VM test bed)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
tmp=$(mktemp -d /tmp/bisect-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
say() { echo "test_bisect: $*"; }

git clone -q --no-hardlinks "$top" "$tmp/repo"
cd "$tmp/repo"
# The plant and the bisect of this tree (the work tree's, like regress's
# own plants), in the clone's history.
cp "$top/regress/bisect" regress/bisect
cp "$top/regress/plants/cpu5.diff" regress/plants/cpu5.diff
export GIT_AUTHOR_NAME=bisect GIT_AUTHOR_EMAIL=bisect@example.invalid
export GIT_COMMITTER_NAME=bisect GIT_COMMITTER_EMAIL=bisect@example.invalid
git add -A regress && git commit -q --allow-empty -m "scratch base"
base=$(git rev-parse HEAD)
for i in $(seq 1 16); do
	if [ "$i" = 11 ]; then
		git apply regress/plants/cpu5.diff
		git commit -q -a -m "scratch $i: the plant"
		planted=$(git rev-parse HEAD)
	else
		git commit -q --allow-empty -m "scratch $i"
	fi
done
tip=$(git rev-parse HEAD)

# The builds of the clone's regress go to its own regress/build; the VM
# test bed's cache is the user's, as for any run.
set +e
STREAMS=udp-high.up METRIC=cpu_per_mb QUICK=1 \
    REGRESS_RESULTS="$tmp/results" regress/bisect "$base" "$tip" \
    2>&1 | tee "$tmp/out"
rc=$?
set -e
fail=0
found=$(sed -n 's/^first bad commit: \([0-9a-f]*\) .*/\1/p' "$tmp/out")
steps=$(sed -n 's/^steps measured: \([0-9]*\) .*/\1/p' "$tmp/out")
if [ "$found" = "$planted" ]; then
	say "ok   the plant's commit named ($planted)"
else
	say "FAIL named '${found:-nothing}', the plant is $planted (exit $rc)"
	fail=1
fi
if [ -n "$steps" ] && [ "$steps" -le 5 ]; then
	say "ok   $steps measured steps (at most 5)"
else
	say "FAIL ${steps:-?} measured steps (at most 5)"
	fail=1
fi
[ "$fail" = 0 ] && say "2 passed, 0 failed" || say "failed"
exit "$fail"
