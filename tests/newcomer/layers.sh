#!/usr/bin/env bash
# The layering of doc/architecture.md, checked on every #include "...":
# common/ uses nothing else; proto/ only common/; the engine (gre/) proto/
# and common/; the daemon (pptpd/) those three; the client, the plugin and
# pptpctl only proto/ and common/ (what crosses a wire or a process
# boundary is proto/'s, so none of them needs another's code). One named
# exception: pptpctl prints the version it was released with
# (pptpd/version.h, which the release tools read at that path in every
# release's tree).
#
# Within a folder, no circles: a file's module (F.c with F.h) may include
# another module's header only where that one does not, directly or not,
# include F's (tsort finds the loops). The daemon's objects hand down what
# their parts need (call.h's struct calls, ctrl.h's struct ctrls) and hear
# back through function pointers, not by including server.h.
#
# usage: tests/newcomer/layers.sh [DIR]    (DIR: the tree, default ours)
set -euo pipefail
dir=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$dir"

allowed() {   # FOLDER: the folders its files may include from
	case $1 in
	common) echo "common" ;;
	proto) echo "proto common" ;;
	gre) echo "gre proto common" ;;
	pptpd) echo "pptpd gre proto common" ;;
	client) echo "client proto common" ;;
	plugin) echo "plugin proto common" ;;
	ctl) echo "ctl proto common" ;;
	esac
}

bad=0 seen=0
for folder in common proto gre pptpd client plugin ctl; do
	while IFS=: read -r file line text; do
		seen=$((seen + 1))
		inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$text")
		top=${inc%%/*}
		[ "$top" = "$inc" ] && top=.   # no folder: pppd's or the same dir's
		[ "$file:$inc" = "ctl/pptpctl.c:pptpd/version.h" ] && continue
		[ "$top" = . ] && continue
		if [[ " $(allowed "$folder") " != *" $top "* ]]; then
			echo "FAIL $file:$line includes $inc: $folder/ may use only $(allowed "$folder")"
			bad=$((bad + 1))
		fi
	done < <(git ls-files -co --exclude-standard "$folder" | grep -E '\.(c|h)$' |
		xargs -r grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' /dev/null)
done
# Circles within a folder: one edge per include of a sibling module.
edges=0
for folder in common proto gre pptpd client plugin ctl; do
	pairs=$(git ls-files -co --exclude-standard "$folder" | grep -E '\.(c|h)$' |
		xargs -r grep -H -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"'"$folder"'/' |
		sed -E 's|^'"$folder"'/([^.:]*)\.[ch]:.*"'"$folder"'/([^".]*)\.h".*|\1 \2|' |
		awk '$1 != $2' | sort -u || true)
	[ -n "$pairs" ] || continue
	edges=$((edges + $(wc -l <<<"$pairs")))
	if ! loops=$(tsort <<<"$pairs" 2>&1 >/dev/null) || [ -n "$loops" ]; then
		echo "FAIL $folder/: modules include each other in a circle:"
		sed 's/^/    /' <<<"$loops"
		bad=$((bad + 1))
	fi
done
if [ "$edges" -lt 20 ]; then
	echo "FAIL only $edges includes between modules read: the circle check is blind"
	bad=$((bad + 1))
fi

# A check that read no include at all would pass blind.
if [ "$seen" -lt 100 ]; then
	echo "FAIL only $seen includes read: the check is blind"
	bad=$((bad + 1))
fi
echo "layers: $seen includes read ($edges between modules of one folder), $bad across the layering or in a circle"
[ "$bad" -eq 0 ]
