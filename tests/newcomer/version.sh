#!/usr/bin/env bash
# `pptpd -v` must print the release the ChangeLog names last: they are set by
# hand in two files (pptpd/version.h, ChangeLog), and 0.2.0 went out saying
# 0.1.0.  The firmware revision in SCCRP is the same version's major.minor,
# and debian/changelog's newest entry is the same release (make deb refuses
# to build otherwise: check it here, before a release is cut).
#
# usage: tests/newcomer/version.sh [DIR]   (DIR with a built pptpd/pptpd)
set -euo pipefail
dir=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
top=$(grep -m1 -E '^[0-9]{4}-[0-9]{2}-[0-9]{2}[[:space:]]+pptpd [0-9]+\.[0-9]+\.[0-9]+[[:space:]]*$' "$dir/ChangeLog" | awk '{print $3}' || true)
if [ -z "$top" ]; then
	echo "FAIL ChangeLog: no release line ('YYYY-MM-DD  pptpd X.Y.Z')"
	exit 1
fi
fail=0
got=$("$dir/pptpd/pptpd" -v)
if [ "$got" = "pptpd $top" ]; then
	echo "ok   pptpd -v: '$got', the ChangeLog's newest release"
else
	echo "FAIL pptpd -v: '$got', but the ChangeLog's newest release is $top (pptpd/version.h and ChangeLog move together)"
	fail=1
fi
IFS=. read -r major minor _ <<<"$top"
want=$(printf '0x%02x%02x' "$major" "$minor")
fw=$(awk '$1 == "#define" && $2 == "PPTPD_FIRMWARE_REV" {print tolower($3)}' "$dir/pptpd/version.h")
if [ "$((fw))" -eq "$((want))" ]; then
	echo "ok   PPTPD_FIRMWARE_REV $fw is $major.$minor"
else
	echo "FAIL PPTPD_FIRMWARE_REV $fw, want $want for $top (major.minor as two bytes)"
	fail=1
fi
deb=$(sed -n '1s/^[a-z0-9.+-]* (\([^)]*\)).*/\1/p' "$dir/debian/changelog" 2>/dev/null || true)
if [ "$deb" = "$top" ]; then
	echo "ok   debian/changelog: $deb"
else
	echo "FAIL debian/changelog's newest entry is '${deb:-none}', the ChangeLog's release $top (add an entry)"
	fail=1
fi
# The man pages' headers name the release they document (`man pptpd`'s
# footer): 0.7.0 went out with pages saying 0.6.0.
for m in "$dir"/man/*.[1-8]; do
	mv=$(sed -n '1s/^\.TH .* "pptpd \([0-9.]*\)".*/\1/p' "$m")
	if [ "$mv" = "$top" ]; then
		echo "ok   ${m#"$dir"/}: pptpd $mv"
	else
		echo "FAIL ${m#"$dir"/}: its .TH line names pptpd '${mv:-nothing}', the ChangeLog's release is $top"
		fail=1
	fi
done
exit $fail
