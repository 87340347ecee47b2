#!/bin/bash
# tests/package/live_upgrade.sh DEB -- run by tests/package/test_deb.sh in
# the test VM, booted with systemd as PID 1 over a copy of the VM's root
# with the package (A) installed (pkg_root_with_deb): a package upgrade
# while a client is connected, as an administrator's `apt upgrade` does it.
#
#   1. pptpd.service started with the shipped configuration; alice dials
#      in with pptp-linux from netns cli (198.18.0.2, on veth to the VM's
#      198.18.0.1) and pings the server's end of the tunnel.
#   2. dpkg -i DEB (B, a newer version) while a ping runs through the
#      tunnel: the postinst hands the sessions over (pptpctl upgrade).
#   3. pptpd.conf gets "privsep no", which the new binary refuses to take
#      a hand-over with; dpkg -i DEB again: the postinst says so and
#      restarts the unit.
#
# It prints facts, "NAME: VALUE" lines, which test_deb.sh checks; it
# asserts nothing itself. It rewrites /etc: only in the throw-away VM.
# Self-contained: the VM boots over the package's root and sees only this
# script's folder, not the tree (tests/e2e/lib.sh and its helpers).
set -u
deb=${1:?usage: live_upgrade.sh DEB}
fact() { printf '%s: %s\n' "$1" "$2"; }
[ -n "${PPTPD_IN_VM:-}" ] && [ -d /run/systemd/system ] ||
	{ echo "live_upgrade.sh: only in the test VM with systemd as PID 1" >&2; exit 2; }

prop() { systemctl show -p "$1" --value pptpd.service; }
# children_named PID COMM: the pids of PID's children called COMM.
children_named() {
	local d
	for d in /proc/[0-9]*; do
		[ "$(awk '{ print $4 }' "$d/stat" 2>/dev/null)" = "$1" ] &&
			[ "$(cat "$d/comm" 2>/dev/null)" = "$2" ] && echo "${d#/proc/}"
	done
	return 0
}
version() { pptpctl status 2>/dev/null | sed -n 's/^version: *//p'; }
answers() { [ -n "$(version)" ]; }
# running PID: alive and not a zombie (the client's pppd is our child).
running() { [ -n "$1" ] && [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
ended() { ! running "$1"; }
# wait_for SECONDS CMD...: until CMD succeeds.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.5
	done
}
tunnel_up() { ip -n cli -o -4 addr show dev ppp0 2>/dev/null | grep -q inet; }
tunnel_ping() { ip netns exec cli ping -c 3 -W 3 198.19.0.1 >/dev/null 2>&1; }

# What an administrator's machine has: no policy-rc.d (the VM root's
# forbids starting services), the distribution's unit name not masked
# (the VM masks Poptop's, whose name ours has).
rm -f /usr/sbin/policy-rc.d
systemctl unmask pptpd.service >/dev/null 2>&1
systemctl daemon-reload
echo 'alice pptpd alicepass *' >>/etc/ppp/chap-secrets
ip netns add cli
ip link add v-cli type veth peer name eth0 netns cli
ip addr add 198.18.0.1/24 dev v-cli
ip link set v-cli up
ip -n cli link set lo up
ip -n cli addr add 198.18.0.2/24 dev eth0
ip -n cli link set eth0 up

systemctl start pptpd.service
wait_for 20 answers
fact "version before" "$(version)"
m0=$(prop MainPID)
ip netns exec cli pppd pty "pptp 198.18.0.1 --nolaunchpppd" \
	name alice user alice password alicepass remotename pptpd \
	require-mppe-128 nodefaultroute noauth nodetach logfile /run/cli-pppd.log \
	</dev/null >/dev/null 2>&1 &
cpppd=$!
wait_for 90 tunnel_up
tunnel_ping && fact "ping before" ok
spppd=$(children_named "$m0" pppd)
worker=$(children_named "$m0" pptpd-worker)
fact "server pppd before" "$spppd"

# The upgrade, with a ping every 0.2 s through the tunnel from 3 s before
# it until 3 s after B's pptpd answers.
ip netns exec cli ping -i 0.2 198.19.0.1 >/run/ping.log 2>&1 &
ping=$!
sleep 3
dpkg -i "$deb" >/run/dpkg.log 2>&1
fact "dpkg -i" "exit $?"
grep '^pptpd-ng: ' /run/dpkg.log | sed 's/^/postinst: /'
# The postinst returns once B's worker answers (pptpctl upgrade --wait).
fact "version at dpkg's return" "$(version)"
wait_for 20 sh -c "pptpctl status 2>/dev/null | grep -q '^version: *pptpd $(dpkg-deb -f "$deb" Version)\$'"
sleep 3
kill -INT "$ping"
fact "version after" "$(version)"
[ "$(prop MainPID)" = "$m0" ] && fact "main pid" same
fact "main process name" "$(cat "/proc/$m0/comm")"
running "$spppd" && fact "server pppd after" "$spppd"
running "$cpppd" && fact "client pppd" alive
w=$(children_named "$m0" pptpd-worker)
[ -n "$w" ] && [ "$w" != "$worker" ] && fact "worker" "new, user $(getent passwd "$(awk '/^Uid:/ { print $2 }' "/proc/$w/status")" | cut -d: -f1)"
fact "sessions" "$(pptpctl sessions 2>/dev/null | grep -c 'alice')"
tunnel_ping && fact "ping after" ok
wait "$ping"
fact "ping across" "$(grep -o '[0-9]* packets transmitted, [0-9]* received' /run/ping.log)"
journalctl -u pptpd.service --no-pager -o cat | grep -Ei 'upgrad' | tail -n 4 | sed 's/^/journal: /'

# The hand-over refused: the postinst restarts the unit.
echo 'privsep no' >>/etc/pptpd.conf
dpkg -i "$deb" >/run/dpkg2.log 2>&1
fact "dpkg -i again" "exit $?"
grep '^pptpd-ng: ' /run/dpkg2.log | sed 's/^/postinst again: /'
m1=$(prop MainPID)
[ "$m1" != 0 ] && [ "$m1" != "$m0" ] && fact "after refusal" "restarted, $(prop ActiveState)"
wait_for 30 ended "$cpppd" && fact "client pppd after refusal" "ended"
exit 0
