#!/bin/sh
# Before and after through the same harness in one run: the engine of git
# ref OLD (default HEAD) and of the work tree, each linked with this tree's
# bench, and Poptop's pptpctrl, through a real pty (bench_gre -F). Rounds
# alternate between them so a shared machine's load falls on all alike.
#   gre/bench/compare.sh [OLD] [ROUNDS] [bench -F options...]
# As root (raw GRE sockets).
set -eu
old=${1:-HEAD}
rounds=${2:-5}
[ $# -ge 2 ] && shift 2 || shift $#
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$top" gre/libgre.a proto/libproto.a common/libcommon.a
make -s -C "$here" bench_gre
# proto/ (GRE packets and sequencing) where OLD has it: they were in gre/
# before 0.6.x.
git -C "$top" archive "$old" gre common \
    $(git -C "$top" ls-tree --name-only "$old" proto) | tar -x -C "$tmp"
make -s -C "$tmp" -f - all >/dev/null <<'MK'
CFLAGS ?= -O2 -g
# -I. for trees that include by path, -Icommon -Igre for older ones.
W := -std=c11 -Wall -Wextra -D_GNU_SOURCE -I. -Icommon -Igre
GO := $(patsubst %.c,%.o,$(wildcard gre/*.c proto/*.c))
CO := $(patsubst %.c,%.o,$(wildcard common/*.c))
all: gre/libgre.a common/libcommon.a
%.o: %.c
	$(CC) $(W) $(CFLAGS) -c -o $@ $<
gre/libgre.a: $(GO)
	ar rcs $@ $^
common/libcommon.a: $(CO)
	ar rcs $@ $^
MK
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -I"$tmp" -I"$top" \
    -o "$tmp/bench_old" "$here/bench_gre.c" "$here/bench_floor.c" \
    "$tmp/gre/libgre.a" "$tmp/common/libcommon.a" -pthread
echo "old: $(git -C "$top" rev-parse --short "$old"), new: work tree"
for r in $(seq "$rounds"); do
	"$tmp/bench_old" -F -e -k 1 -t old "$@" 2>/dev/null | grep '^run'
	"$here/bench_gre" -F -k 1 -t new "$@" 2>/dev/null | grep '^run'
done | tee "$tmp/runs"
awk '
/^run/ { k = $2 " " $3; v[k] = v[k] " " $(NF-1); loss[k] = loss[k] " " $(NF-2) }
END {
	for (k in v) {
		n = split(v[k], a, " ");
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2;
		printf "median %-7s %-7s %6.2f us/frame  spread %s..%s  runs %d  losses%s\n",
		    substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1),
		    med, a[1], a[n], n, loss[k];
	}
}' "$tmp/runs" | sort -k3,3 -k2,2
