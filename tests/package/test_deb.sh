#!/bin/bash
# tests/package/test_deb.sh -- the Debian package (debian/), built and used
# as an administrator would, in a clean Debian root of RELEASE.
#
#   tests/package/test_deb.sh [RELEASE]     (default: this machine's, e.g. bookworm)
#   tests/package/test_deb.sh --root-with-deb RELEASE DIR
#   tests/package/test_deb.sh --vm-smoke RELEASE
#
# Builds the package twice, this version (A) and A+pkgtest1 (B, whose
# shipped pptpd.conf and options.pptpd carry one more line), with
# debian/build-deb: on this machine for its own release, for another in a
# throw-away copy of `scripts/vm/mkroot RELEASE` (the VM's root: debhelper,
# ppp-dev, lintian; apt-get build-dep adds the rest). lintian errors fail
# the build. Then,
# in throw-away copies (overlayfs, or cp -a where overlayfs is missing) of
# the clean root `scripts/vm/mkroot RELEASE tests/package/clean-packages.txt`
# (minbase, no ppp, no pptpd), with apt fetching dependencies from the
# mirror:
#   fresh:   apt-get install ./A.deb; the files; pptpd -v; the conffiles;
#            the plugin loads into the installed pppd; the daemon starts with
#            the shipped configuration (in its own network namespace); an
#            upgrade to B keeps a changed /etc/pptpd.conf (B's as
#            .dpkg-dist) and takes B's options.pptpd, unchanged by the
#            admin; remove keeps the conffiles; purge removes them.
#   poptop:  Poptop's pptpd (Debian's package) installed, its pptpd.conf
#            changed and its service enabled, then ./A.deb: Poptop's
#            package is removed, ours owns /usr/sbin/pptpd and the changed
#            pptpd.conf, starts with it, is enabled; purging Poptop's
#            leftover configuration keeps pptpd.conf but removes
#            /etc/ppp/pptpd-options and the enablement (doc/packaging.md).
#   poptop-unchanged: the same with Poptop's pptpd.conf untouched and its
#            service not enabled: ours replaces it, and is not enabled;
#            apt-get install pptpd then goes back to Poptop.
#   live:    the VM with systemd as PID 1 over a copy of the VM's root with
#            A installed (pkg_root_with_deb), a client connected, dpkg -i
#            B.deb: B's postinst hands the session over to B's pptpd
#            (tests/package/live_upgrade.sh, scenario_live below).
# The whole systemd test with the package needs the same VM:
# --root-with-deb makes DIR a full copy of `scripts/vm/mkroot
# RELEASE` (the VM's root, with systemd) with this package installed, for
# `scripts/vm/run --root DIR --init systemd`; or source this file and
# call pkg_build/pkg_root_with_deb (below) from that test. --vm-smoke does
# that once: the unit starts, reports, answers pptpctl and stops (no client).
#
# Needs root, debootstrap, dpkg-dev and debhelper (scripts/packages.txt),
# and the Debian mirror. Work files: build/package-test/RELEASE/.
# Last line: "test_deb: N passed, M failed"; exit status 0 when none failed.
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here_release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")

log() { printf 'test_deb: %s\n' "$*" >&2; }
# apt-get as unattended upgrades run it: a conffile the admin changed is
# kept, one they did not is replaced (dpkg's prompt needs a terminal).
APT="apt-get -y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"

# pkg_tree OUTDIR: the tree's files copied to OUTDIR, as debian/build-deb
# copies them for a build (the files git lists, tracked and untracked, not
# ignored).
pkg_tree() { "$top/debian/build-deb" --copy "$1"; }

# pkg_build RELEASE TREE OUTDIR [VERSION]: debian/build-deb in TREE (a copy
# from pkg_tree), for RELEASE: directly when it is this machine's release
# (build dependencies from scripts/packages.txt), otherwise chrooted into a
# throw-away copy of `scripts/vm/mkroot RELEASE` (the VM's root, which has
# debhelper, ppp-dev and lintian), where apt-get adds what the build still
# lacks (build-essential; apt-get build-dep). OUTDIR must then be inside
# TREE. Prints the .deb's path.
pkg_build() {
	local release=$1 tree=$2 out=$3 version=${4:-} root
	if [ "$release" = "$here_release" ]; then
		(cd "$tree" && DEB_VERSION=$version debian/build-deb "$out") | tail -n 1
	else
		root=$("$top/scripts/vm/mkroot" "$release") || return 1
		scratch_run "$root" "$tree.scratch" "$tree" -- "
			{ apt-get update -q && apt-get install -y -q --no-install-recommends build-essential &&
			  apt-get build-dep -y -q '$tree'; } >'$tree.deps.log' 2>&1 ||
				{ tail -n 20 '$tree.deps.log' >&2; exit 1; }
			cd '$tree' && DEB_VERSION='$version' debian/build-deb '$out'" | tail -n 1
		local rc=${PIPESTATUS[0]}
		rm -rf "$tree.scratch"
		return "$rc"
	fi
}

# scratch_run ROOT SCRATCH DIR -- CMD: run the shell command CMD chrooted
# into a throw-away copy of ROOT kept in SCRATCH (an overlayfs upper layer
# over ROOT, or a cp -a of it where overlayfs cannot be mounted), with DIR
# at its own path, fresh /tmp and /run, in a private mount namespace: ROOT
# itself (a cached root of mkroot) is never written to.
scratch_run() {
	local root=$1 s=$2 dir=$3
	shift 3
	[ "${1:-}" = -- ] && shift
	mkdir -p "$s"
	unshare --mount --propagation private -- bash -s "$root" "$s" "$dir" "$@" <<'EOS'
set -e
root=$1 s=$2 dir=$3
shift 3
m=$s/mnt
mkdir -p "$m"
if [ -d "$s/copy" ]; then
	mount --bind "$s/copy" "$m"
else
	mkdir -p "$s/upper" "$s/work"
	if ! mount -t overlay overlay -o "lowerdir=$root,upperdir=$s/upper,workdir=$s/work" "$m" 2>/dev/null; then
		rm -rf "$s/upper" "$s/work"
		cp -a "$root" "$s/copy.tmp" && mv "$s/copy.tmp" "$s/copy"
		mount --bind "$s/copy" "$m"
	fi
fi
mount -t proc proc "$m/proc"
mount --rbind /dev "$m/dev"
mount -t tmpfs -o mode=1777 tmpfs "$m/tmp"
mount -t tmpfs -o mode=0755 tmpfs "$m/run"
mkdir -p "$m/run/lock" "$m$dir"
mount --bind "$dir" "$m$dir"
# Name resolution for apt, as on this machine; no service starts from a
# maintainer script (Poptop's init script would, on this machine's network).
cp -L /etc/resolv.conf "$m/etc/resolv.conf" 2>/dev/null || true
[ -e "$m/usr/sbin/policy-rc.d" ] || { printf '#!/bin/sh\nexit 101\n' >"$m/usr/sbin/policy-rc.d"; chmod 0755 "$m/usr/sbin/policy-rc.d"; }
exec chroot "$m" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive /bin/bash -c "$@" </dev/null
EOS
}

# pkg_root_with_deb RELEASE DIR DEB: DIR becomes a full copy of `scripts/vm/
# mkroot RELEASE` (the VM's root: systemd, pppd, pptp-linux, Poptop...) with
# DEB installed in it (replacing Poptop's pptpd). For the systemd test in
# the VM: scripts/vm/run --root DIR. The copy keeps mkroot's policy-rc.d
# (no service starts while installing): start pptpd with systemctl there.
pkg_root_with_deb() {
	local release=$1 dir=$2 deb=$3 root rc
	root=$("$top/scripts/vm/mkroot" "$release") || return 1
	rm -rf "$dir" "$dir.scratch"
	mkdir -p "$dir" "$dir.scratch"
	cp -a "$root/." "$dir/"
	# scratch_run on the copy itself (its "copy" is DIR).
	ln -s "$dir" "$dir.scratch/copy"
	deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
	scratch_run "$root" "$dir.scratch" "$(dirname "$deb")" -- "apt-get update -q && $APT install $deb"
	rc=$?
	rm -rf "$dir.scratch"
	[ $rc -eq 0 ] && echo "$dir"
	return $rc
}

# --- the test -----------------------------------------------------------

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; return 1; fi; }


main() {
	local release=${1:-$here_release}
	[ "$(id -u)" -eq 0 ] || { echo "test_deb: needs root (chroot, mounts)"; exit 2; }
	[ -n "$release" ] || { echo "test_deb: cannot tell this machine's release"; exit 2; }
	local work=$top/build/package-test/$release
	local tree=$work/tree
	rm -rf "$work"
	mkdir -p "$work"
	log "release $release, work in $work"

	local v
	v=$(cd "$top" && dpkg-parsechangelog -S Version)
	local hv
	hv=$(sed -n 's/^#define PPTPD_VERSION *"\(.*\)"/\1/p' "$top/pptpd/version.h")
	if [ "$v" = "$hv" ]; then
		ok "debian/changelog's version $v is pptpd/version.h's"
	else
		bad "debian/changelog's version $v, pptpd/version.h's $hv (a changelog entry is missing)"
	fi
	local vb=$v+pkgtest1

	# Build A and B, each from its own copy of the tree.
	pkg_tree "$tree/a"
	pkg_tree "$tree/b"
	echo "# test_deb: B line" >>"$tree/b/examples/pptpd.conf"
	echo "# test_deb: B line" >>"$tree/b/examples/options.pptpd"
	# B says its own version (pptpctl status), for the live upgrade.
	sed -i "s/^#define PPTPD_VERSION .*/#define PPTPD_VERSION \"$vb\"/" "$tree/b/pptpd/version.h"
	local deb_a deb_b
	deb_a=$(pkg_build "$release" "$tree/a" "$tree/a/build/deb")
	deb_b=$(pkg_build "$release" "$tree/b" "$tree/b/build/deb" "$vb")
	if [ -f "$deb_a" ] && [ -f "$deb_b" ]; then
		ok "built $(basename "$deb_a") and $(basename "$deb_b") (lintian: no errors)"
	else
		bad "build failed (logs: $tree/a/build/deb/build.log, $tree/b/build/deb/build.log)"
		echo "test_deb: $pass passed, $fail failed"
		return 1
	fi
	local lint
	lint=$(grep -c '^[WI]: ' "$tree/a/build/deb/lintian.txt" || true)
	echo "# lintian on $(basename "$deb_a"): $lint warnings/info (build/deb/lintian.txt):"
	grep '^[EWI]: ' "$tree/a/build/deb/lintian.txt" | sed 's/^/#   /'
	debs=$work/debs
	mkdir -p "$debs"
	cp "$deb_a" "$debs/a.deb"
	cp "$deb_b" "$debs/b.deb"

	clean=$("$top/scripts/vm/mkroot" "$release" "$top/tests/package/clean-packages.txt") || {
		bad "no clean $release root (scripts/vm/mkroot)"
		echo "test_deb: $pass passed, $fail failed"
		return 1
	}
	# /lib/systemd/system on Debian 12, /usr/lib/... on 13 (debian/rules).
	local unitdir
	unitdir=$(dpkg-deb -c "$deb_a" | awk '$6 ~ /\/pptpd\.service$/ { sub(/^\./, "", $6); sub(/\/pptpd\.service$/, "", $6); print $6 }')

	local name
	for name in fresh poptop poptop-unchanged; do
		scr=$work/scratch-$name
		rm -rf "$scr"
		case $name in
		fresh) scenario_fresh "$v" "$vb" "$unitdir" ;;
		poptop) scenario_poptop "$v" changed ;;
		poptop-unchanged) scenario_poptop "$v" unchanged ;;
		esac
		rm -rf "$scr"
	done
	scenario_live "$release" "$work" "$vb"

	echo "test_deb: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# The scenarios run their commands with run CMD, chrooted into the scratch
# copy $scr of the clean root $clean, the packages in $debs. In the root,
# st PKG prints dpkg's state and version ("ii 0.4.2", "rc 0.4.2"; nothing
# when unknown).
PRELUDE='st() { dpkg-query -W -f="\${db:Status-Abbrev}\${Version}" "$1" 2>/dev/null; }; '
run() { scratch_run "$clean" "$scr" "$debs" -- "$PRELUDE$1"; }
# act CMD: run CMD, keeping its output for the next expect.
act() { last=$(run "$1" 2>&1); }
# expect WHAT COND: the shell condition COND holds in the root; if not, the
# last act's output is shown.
expect() { check "$1" run "$2" || { echo "$last" | tail -n 20 | sed 's/^/#   /'; return 1; }; }
# starts WHAT: pptpd starts with /etc/pptpd.conf, in a network namespace of
# its own (nothing of this machine's is bound), and runs until timeout
# stops it (exit 124).
starts() {
	local out
	if out=$(run 'out=$(unshare -n timeout 3 pptpd -f -c /etc/pptpd.conf 2>&1); rc=$?; echo "$out"
		[ $rc -eq 124 ] && grep -q "listening on" <<<"$out"'); then
		ok "pptpd starts with $1 ($(grep -m1 -o 'listening on.*' <<<"$out"))"
	else
		bad "pptpd does not start with $1: $out"
	fi
}
WANTS=/etc/systemd/system/multi-user.target.wants/pptpd.service

scenario_fresh() {
	local v=$1 vb=$2 unitdir=$3 out
	echo "# fresh install, upgrade, remove, purge"
	act "apt-get update -q && $APT install $debs/a.deb"
	expect "apt-get install ./pptpd-ng_${v}.deb installs it with its dependencies" \
		"[ \"\$(st pptpd-ng)\" = 'ii $v' ] && st ppp | grep -q '^ii'"

	local files="/usr/sbin/pptpd /usr/sbin/pptpctl /usr/bin/pptp-load /usr/bin/pptp-echo
		/usr/lib/pptpd/pptpd-policy.so $unitdir/pptpd.service /usr/lib/tmpfiles.d/pptpd.conf
		/usr/lib/sysusers.d/pptpd-ng.conf
		/usr/share/man/man8/pptpd.8.gz /usr/share/man/man8/pptpctl.8.gz
		/usr/share/man/man5/pptpd.conf.5.gz /usr/share/man/man5/pptpd-peers.5.gz
		/usr/share/man/man1/pptp-load.1.gz /usr/share/man/man1/pptp-echo.1.gz
		/usr/share/doc/pptpd-ng/copyright /etc/pptpd.conf /etc/ppp/options.pptpd"
	out=$(run "for f in $(echo $files); do [ -e \$f ] || echo \$f; done")
	if [ -z "$out" ]; then ok "files in place: $(echo $files | wc -w) of them"; else bad "missing: $(echo $out)"; fi
	expect "pptpd -v says pptpd ${v%%[+~]*}" "[ \"\$(pptpd -v)\" = 'pptpd ${v%%[+~]*}' ]"
	expect "the unit runs the installed daemon (ExecStart=/usr/sbin/pptpd)" \
		"grep -q '^ExecStart=/usr/sbin/pptpd ' $unitdir/pptpd.service"
	expect "conffiles registered: /etc/pptpd.conf, /etc/ppp/options.pptpd" \
		"c=\$(dpkg-query -W -f='\${Conffiles}' pptpd-ng); grep -q '^ /etc/pptpd.conf ' <<<\"\$c\" && grep -q '^ /etc/ppp/options.pptpd ' <<<\"\$c\""
	expect "the service is enabled (multi-user.target.wants)" "[ -L $WANTS ]"
	expect "the install made the worker's user pptpd: a system user, no login shell" \
		"u=\$(getent passwd pptpd) && [ \"\$(cut -d: -f3 <<<\"\$u\")\" -lt 1000 ] && [ \"\$(cut -d: -f3 <<<\"\$u\")\" -gt 0 ] && case \"\$(cut -d: -f7 <<<\"\$u\")\" in */nologin|*/false) true;; *) false;; esac"
	out=$(run "pppd plugin /usr/lib/pptpd/pptpd-policy.so --version 2>&1")
	if grep -q 'pptpd-policy' <<<"$out" && grep -q '^pppd version' <<<"$out"; then
		ok "the plugin loads into the installed pppd ($(grep -m1 'pptpd-policy:' <<<"$out" || grep -m1 'pptpd-policy' <<<"$out"))"
	else
		bad "the plugin does not load into pppd: $out"
	fi
	starts "the shipped configuration"

	# Upgrade: the admin changed pptpd.conf, not options.pptpd; B ships a
	# new version of both.
	run "echo '# test_deb: admin line' >>/etc/pptpd.conf"
	act "$APT install $debs/b.deb"
	expect "upgrade to $vb" "[ \"\$(st pptpd-ng)\" = 'ii $vb' ]"
	expect "the upgrade keeps the changed /etc/pptpd.conf (B's beside it as .dpkg-dist)" \
		"grep -q 'admin line' /etc/pptpd.conf && ! grep -q 'B line' /etc/pptpd.conf && grep -q 'B line' /etc/pptpd.conf.dpkg-dist"
	expect "the upgrade takes B's /etc/ppp/options.pptpd, which the admin had not changed" \
		"grep -q 'B line' /etc/ppp/options.pptpd"

	act "$APT remove pptpd-ng"
	expect "apt-get remove: binaries gone, conffiles kept (state rc)" \
		"st pptpd-ng | grep -q '^rc' && [ ! -e /usr/sbin/pptpd ] && grep -q 'admin line' /etc/pptpd.conf && [ -f /etc/ppp/options.pptpd ]"
	act "$APT purge pptpd-ng"
	expect "apt-get purge: conffiles, .dpkg-dist and the unit's enablement gone" \
		"! st pptpd-ng | grep -q '^[ir]' && [ ! -e /etc/pptpd.conf ] && [ ! -e /etc/pptpd.conf.dpkg-dist ] && [ ! -e /etc/ppp/options.pptpd ] && [ ! -e $WANTS ]"
}

scenario_poptop() {
	local v=$1 how=$2
	echo "# Poptop's pptpd first, its pptpd.conf $how"
	act "apt-get update -q && $APT install pptpd"
	expect "Poptop's pptpd $(run 'st pptpd | cut -c4-') installed" "st pptpd | grep -q '^ii'"
	# "changed": the admin edited pptpd.conf and enabled the service (as
	# `systemctl enable pptpd` does; no systemd runs here); "unchanged":
	# neither (Poptop's postinst does not enable its unit).
	[ "$how" = changed ] && run "echo '# test_deb: Poptop admin line' >>/etc/pptpd.conf &&
		mkdir -p ${WANTS%/*} && ln -s \$(dpkg -L pptpd | grep '/pptpd.service\$') $WANTS"

	act "$APT install $debs/a.deb"
	expect "installing ours removes Poptop's package (state rc) and installs pptpd-ng" \
		"st pptpd | grep -q '^rc' && st pptpd-ng | grep -q '^ii'"
	expect "/usr/sbin/pptpd is ours (dpkg -S, pptpd -v)" \
		"dpkg -S /usr/sbin/pptpd | grep -q '^pptpd-ng:' && [ \"\$(pptpd -v)\" = 'pptpd ${v%%[+~]*}' ]"
	if [ "$how" = changed ]; then
		expect "Poptop's changed /etc/pptpd.conf is kept, now our conffile" \
			"grep -q 'Poptop admin line' /etc/pptpd.conf && grep -q '^option /etc/ppp/pptpd-options' /etc/pptpd.conf && dpkg-query -W -f='\${Conffiles}' pptpd-ng | grep -q '^ /etc/pptpd.conf '"
		starts "Poptop's pptpd.conf"
		expect "pptpd.service enabled, as it was under Poptop" "[ -L $WANTS ] && [ -e $WANTS ]"
		act "dpkg --purge pptpd"
		expect "purging Poptop's leftover keeps /etc/pptpd.conf (ours) and ours installed" \
			"grep -q 'Poptop admin line' /etc/pptpd.conf && st pptpd-ng | grep -q '^ii'"
		# What doc/packaging.md tells Poptop's users to expect.
		expect "... but removes Poptop's /etc/ppp/pptpd-options and disables pptpd.service, as doc/packaging.md says" \
			"[ ! -e /etc/ppp/pptpd-options ] && [ ! -e $WANTS ]"
	else
		expect "Poptop's unchanged /etc/pptpd.conf is replaced by ours" \
			"grep -q '^option /etc/ppp/options.pptpd' /etc/pptpd.conf && [ ! -e /etc/pptpd.conf.dpkg-dist ]"
		expect "pptpd.service not enabled, as it was not under Poptop" "[ ! -e $WANTS ]"
		act "$APT install pptpd"
		expect "apt-get install pptpd goes back: Poptop's package in, ours out (state rc)" \
			"st pptpd | grep -q '^ii' && st pptpd-ng | grep -q '^rc' && dpkg -S /usr/sbin/pptpd | grep -q '^pptpd:'"
	fi
}

# scenario_live RELEASE WORK VB: an upgrade to B with a client connected,
# under systemd in the VM (tests/package/live_upgrade.sh, which says what it
# does): the postinst hands the session over to B's pptpd (same main pid,
# same pppd, traffic through the tunnel before and after, B's version in
# pptpctl status); and where the hand-over is refused (privsep no), it
# says so and restarts the unit.
scenario_live() {
	local release=$1 work=$2 vb=$3 root=$2/vm-root cwd=$2/vm-cwd out n
	echo "# a package upgrade with a session up, under systemd in the VM"
	if ! pkg_root_with_deb "$release" "$root" "$debs/a.deb" >/dev/null 2>"$work/vm-root.log"; then
		bad "no VM root with A installed (pkg_root_with_deb: $work/vm-root.log)"
		return 1
	fi
	rm -rf "$cwd"
	mkdir -p "$cwd"
	cp "$debs/b.deb" "$top/tests/package/live_upgrade.sh" "$cwd/"
	# The VM shares the working directory at its own path (not under
	# /tmp, which the guest has of its own).
	out=$(cd "$cwd" && "$top/scripts/vm/run" --root "$root" --init systemd --timeout 900 -- \
		"$cwd/live_upgrade.sh" "$cwd/b.deb" 2>&1 | tr -d '\r')
	echo "$out" | sed 's/^/# vm: /'
	rm -rf "$root"
	has() { grep -Eq -- "$1" <<<"$out"; }
	check "a client dials in to the packaged unit and pings through the tunnel" has '^ping before: ok$'
	check "dpkg -i B with the session up succeeds" has '^dpkg -i: exit 0$'
	check "B's postinst hands the sessions over instead of restarting (pptpctl upgrade)" \
		has '^postinst: pptpd-ng: upgrading: '
	check "... and waits until B's pptpd has taken over (pptpctl upgrade --wait says so)" \
		has "^postinst: pptpd-ng: taken over: pptpd ${vb//+/\\+} \\(/usr/sbin/pptpd\\), pid [0-9]+\$"
	check "... so that pptpctl status says B's version when dpkg returns" \
		has "^version at dpkg's return: pptpd ${vb//+/\\+}\$"
	check "pptpctl status then says B's version, pptpd $vb" has "^version after: pptpd ${vb//+/\\+}\$"
	check "the same pptpd process (systemd's main pid) carries on, named pptpd (ps, pidof)" \
		bash -c 'grep -q "^main pid: same\$" <<<"$1" && grep -q "^main process name: pptpd\$" <<<"$1"' sh "$out"
	check "the session lives on: the server's pppd, the client's pppd, pptpctl sessions" \
		bash -c 'grep -q "^server pppd after: $(sed -n "s/^server pppd before: //p" <<<"$1")\$" <<<"$1" &&
			grep -q "^client pppd: alive\$" <<<"$1" && grep -q "^sessions: 1\$" <<<"$1"' sh "$out"
	check "B's worker took over, as user pptpd" has '^worker: new, user pptpd$'
	check "the tunnel passes traffic after the upgrade" has '^ping after: ok$'
	# The hand-over takes about a second (pptpctl(8)): a few pings lost.
	n=$(sed -n 's/^ping across: //p' <<<"$out")
	check "pings every 0.2 s through the tunnel across the upgrade: at least 80 % answered ($n)" \
		awk -v n="$n" 'BEGIN { split(n, f, " "); exit !(f[1] > 0 && f[4] * 10 >= f[1] * 8) }'
	check "the hand-over refused (privsep no): the postinst says so" \
		has '^postinst again: pptpd-ng: the running pptpd .* cannot hand its sessions over'
	check "... and restarts the unit, which ends the session" \
		bash -c 'grep -q "^after refusal: restarted, active\$" <<<"$1" && grep -q "^client pppd after refusal: ended\$" <<<"$1"' sh "$out"
}

# pkg_vm_smoke DIR: boot the VM with systemd as PID 1 over DIR (from
# pkg_root_with_deb) and run the packaged unit: it starts, is active,
# reports its status (sd_notify STATUS=), answers pptpctl, stops. Not the
# systemd test itself (no client dials in); `systemctl unmask` because the
# VM's init masks the distribution's pptpd.service, whose name ours has.
pkg_vm_smoke() {
	local dir=$1 out
	# The VM shares the working directory: an empty one (not under /tmp,
	# which the guest has of its own).
	mkdir -p "$dir.cwd"
	out=$(cd "$dir.cwd" && "$top/scripts/vm/run" --root "$dir" --init systemd --timeout 600 -- sh -c '
		systemctl unmask pptpd >/dev/null 2>&1
		systemctl daemon-reload
		systemctl start pptpd && sleep 2
		echo "active: $(systemctl is-active pptpd)"
		echo "status: $(systemctl show -p StatusText --value pptpd)"
		for p in /proc/[0-9]*; do
			[ "$(cat $p/comm 2>/dev/null)" = pptpd-worker ] || continue
			u=$(awk "/^Uid:/ {print \$2}" $p/status)
			echo "worker: $(getent passwd "$u" | cut -d: -f1)" \
			    $(grep -E "^(CapEff|Seccomp):" $p/status)
		done
		pptpctl status | sed "s/^/pptpctl: /"
		systemctl stop pptpd
		echo "after stop: $(systemctl is-active pptpd)"' 2>&1 | tr -d '\r')
	echo "$out" | sed 's/^/# vm: /'
	check "the unit starts under systemd in the VM" grep -q '^active: active$' <<<"$out"
	check "it reports its state (sd_notify STATUS=)" grep -q '^status: .*sessions active' <<<"$out"
	check "its worker runs as user pptpd, no capabilities, under seccomp (privsep yes, as shipped)" \
		grep -Eq '^worker: pptpd CapEff: 0+ Seccomp: 2$' <<<"$out"
	check "pptpctl answers" grep -q '^pptpctl: version: *pptpd ' <<<"$out"
	check "systemctl stop stops it" grep -q '^after stop: inactive$' <<<"$out"
}

if [ "${1:-}" = --vm-smoke ]; then
	release=${2:?usage: test_deb.sh --vm-smoke RELEASE}
	"$0" --root-with-deb "$release" "$top/build/package-test/$release/vm-root" >/dev/null || exit 1
	pkg_vm_smoke "$top/build/package-test/$release/vm-root"
	echo "test_deb: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
fi
if [ "${1:-}" = --root-with-deb ]; then
	release=${2:?usage: test_deb.sh --root-with-deb RELEASE DIR}
	dir=${3:?usage: test_deb.sh --root-with-deb RELEASE DIR}
	tree=$top/build/package-test/$release/vm-tree
	pkg_tree "$tree"
	deb=$(pkg_build "$release" "$tree" "$tree/build/deb") && [ -f "$deb" ] ||
		{ log "build failed ($tree/build/deb/build.log)"; exit 1; }
	pkg_root_with_deb "$release" "$dir" "$deb" >&2 || { log "install into $dir failed"; exit 1; }
	echo "$dir"
	exit 0
fi
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
