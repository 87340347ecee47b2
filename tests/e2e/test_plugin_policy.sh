#!/bin/bash
# test_plugin_policy.sh -- per-peer MPPE policy of the pptpd-policy plugin,
# end to end: a real PPTP server ($PPTPD_SERVER: our pptpd/pptpd by
# default, or Poptop's /usr/sbin/pptpd) whose pppd loads the plugin, and
# real clients (pptp-linux + pppd) in other network namespaces.
#
# Policy file:   user alice require-128
#                user bob   allow
#                user carol deny
#                address 198.18.0.3 deny     (dave has no user rule)
# pppd options:  require-mppe-128 (the default when no rule matches)
#
# For each of alice, bob, carol one client that requires MPPE-128
# (require-mppe-128) and one that refuses MPPE (nomppe); dave from
# 198.18.0.3 (address rule) and from 198.18.0.2 (no rule: the default).
#   alice+mppe up/128   alice+nomppe fails   bob+mppe up/128
#   bob+nomppe up/none  carol+mppe fails     carol+nomppe up/none
#   dave@.3+nomppe up/none  dave@.3+mppe fails  dave@.2+nomppe fails
# Every session that comes up must carry traffic (ping through the tunnel);
# the plugin's report datagrams must say the same as the client's pppd.
#
# Needs a kernel with PPP: without /dev/ppp it re-runs itself in the VM
# test bed (scripts/vm/run).  Runs in private network and mount
# namespaces; /etc/ppp/{options,chap-secrets,ip-up.d,ip-down.d} are
# replaced by test copies in the mount namespace only.
#
# Environment: PPTPD_SERVER (server binary), E2E_KEEP=1 keeps the work dir,
# E2E_VERBOSE=1 prints the logs of every session.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"
plugin=$root/plugin/pptpd-policy.so
server=${PPTPD_SERVER:-$root/pptpd/pptpd}

say() { printf '# %s\n' "$*"; }
die() { printf 'test_plugin_policy: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- stage 0
# Build what we need on the host (the VM sees the host's tree read-only).
if [ -z "${PPTPD_POLICY_STAGE:-}" ]; then
	make -s -C "$root/plugin" >/dev/null || die "plugin build failed"
	[ -x "$server" ] || die "server $server not built (make, or set PPTPD_SERVER=/usr/sbin/pptpd)"
	for t in pppd pptp ip ping unshare python3; do
		command -v "$t" >/dev/null || die "$t not installed"
	done
	if [ ! -e /dev/ppp ] && ! modprobe -q ppp_generic 2>/dev/null; then
		[ -z "${PPTPD_IN_VM:-}" ] || die "no PPP in the VM's kernel"
		say "no PPP in this kernel: running in the VM test bed"
		export PPTPD_SERVER=$server
		exec "$root/scripts/vm/run" --timeout 900 -- "$self" "$@"
	fi
	modprobe -q ppp_mppe 2>/dev/null || true
	modprobe -q pptp 2>/dev/null || true
	[ "$(id -u)" = 0 ] || die "must run as root"
	export PPTPD_POLICY_STAGE=1
	exec unshare --mount --propagation private "$self" "$@"
fi

# ---------------------------------------------------------------- setup
work=$(mktemp -d /tmp/e2e-policy.XXXXXX)
ns_s=pol-srv-$$ ns_c=pol-cli-$$ ns_c2=pol-cli2-$$
server_pid= report_pid=
cleanup() {
	set +e
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	for ns in "$ns_c" "$ns_c2" "$ns_s"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	sleep 0.5
	for ns in "$ns_c" "$ns_c2" "$ns_s"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	[ -n "$report_pid" ] && kill "$report_pid" 2>/dev/null
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "# work dir kept: $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# pppd of every side reads these: test copies, in this mount namespace only.
: >"$work/options"
mkdir -p "$work/empty.d"
cat >"$work/chap-secrets" <<'EOF'
# client	server	secret		addresses
alice		pptpd	alice-pw	*
bob		pptpd	bob-pw		*
carol		pptpd	carol-pw	*
dave		pptpd	dave-pw		*
EOF
chmod 600 "$work/chap-secrets"
for f in options chap-secrets; do
	[ -e "/etc/ppp/$f" ] || die "/etc/ppp/$f missing (package ppp)"
	mount --bind "$work/$f" "/etc/ppp/$f"
done
for d in ip-up.d ip-down.d; do
	[ -d "/etc/ppp/$d" ] && mount --bind "$work/empty.d" "/etc/ppp/$d"
done
# wtmp/utmp records (pptpd-logwtmp) go to test files.
for f in /var/log/wtmp /var/run/utmp; do
	[ -e "$f" ] || continue
	: >"$work/$(basename "$f")"
	mount --bind "$work/$(basename "$f")" "$f"
done

cat >"$work/pptpd-peers" <<'EOF'
# test policy
user alice require-128
user bob   allow
user carol deny
address 198.18.0.3 deny
EOF

# Poptop (pptpd v1.x) knows nothing of the plugin: its pppd options file
# loads it.  Ours passes the plugin, its report socket and the peers file
# to every pppd itself (pptpd.conf: plugin, peers) and logs the reports.
if "$server" -v 2>&1 | grep -q 'pptpd v1\.'; then
	kind=poptop
else
	kind=ours
fi

# Server side pppd options: MPPE-128 required unless a rule says otherwise.
cat >"$work/options.pptpd" <<EOF
name pptpd
refuse-pap
refuse-chap
refuse-mschap
require-mschap-v2
require-mppe-128
nobsdcomp
nodeflate
novj
novjccomp
nologfd
debug
logfile $work/server-pppd.log
EOF
cat >"$work/pptpd.conf" <<EOF
option $work/options.pptpd
localip 198.19.0.1
remoteip 198.19.0.10-30
EOF
if [ "$kind" = poptop ]; then
	cat >>"$work/options.pptpd" <<EOF
plugin $plugin
pptpd-peers $work/pptpd-peers
pptpd-report $work/report.sock
pptpd-logwtmp
EOF
else
	cat >>"$work/pptpd.conf" <<EOF
plugin $plugin
peers $work/pptpd-peers
logwtmp
debug
EOF
fi

# Network: server bridge 198.18.0.1/24; client netns .2 and .3.
ip netns add "$ns_s"
ip netns add "$ns_c"
ip netns add "$ns_c2"
ip -n "$ns_s" link set lo up
ip -n "$ns_s" link add br0 type bridge
ip -n "$ns_s" addr add 198.18.0.1/24 dev br0
ip -n "$ns_s" link set br0 up
i=0
for pair in "$ns_c:198.18.0.2" "$ns_c2:198.18.0.3"; do
	ns=${pair%%:*} addr=${pair#*:}
	i=$((i + 1))
	ip link add "pols$i-$$" type veth peer name "polc$i-$$"
	ip link set "pols$i-$$" netns "$ns_s"
	ip link set "polc$i-$$" netns "$ns"
	ip -n "$ns_s" link set "pols$i-$$" master br0 up
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "polc$i-$$" name eth0
	ip -n "$ns" addr add "$addr/24" dev eth0
	ip -n "$ns" link set eth0 up
done

# Poptop: the report socket, bound as pptpd binds it, one line per datagram.
: >"$work/reports"
[ "$kind" = poptop ] && python3 - "$work/report.sock" "$work/reports" <<'PY' &
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    while True:
        d = s.recv(4096)
        f.write(d.decode("ascii", "replace") + "\n")
PY
[ "$kind" = poptop ] && report_pid=$!

say "server: $server ($kind)"
ip netns exec "$ns_s" "$server" -f -c "$work/pptpd.conf" -p "$work/pptpd.pid" \
	>"$work/server.out" 2>&1 &
server_pid=$!
for _ in $(seq 50); do
	ip netns exec "$ns_s" ss -ltn 2>/dev/null | grep -q ':1723 ' && break
	sleep 0.2
done
ip netns exec "$ns_s" ss -ltn | grep -q ':1723 ' || {
	cat "$work/server.out"
	die "server is not listening on 1723"
}
if [ "$kind" = poptop ]; then
	for _ in $(seq 100); do [ -S "$work/report.sock" ] && break; sleep 0.2; done
	[ -S "$work/report.sock" ] || die "report socket not bound"
fi

# ---------------------------------------------------------------- cases
pass=0 fail=0 n=0
ok() { pass=$((pass + 1)); echo "ok $((pass + fail)) - $*"; }
notok() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - $*"; }

# How many server-side pppds have ended (Poptop: exit reports received by
# our socket; ours: the daemon's "ended" log lines).
exits_seen() {
	if [ "$kind" = poptop ]; then
		grep -c ' event=exit ' "$work/reports" 2>/dev/null || true
	else
		grep -c ': ended after' "$work/server.out" 2>/dev/null || true
	fi
}

# The MPPE strength the server reported for USER's last session.
server_mppe() {
	if [ "$kind" = poptop ]; then
		grep ' event=up ' "$work/reports" | grep " user=$1 " | tail -n 1 |
			grep -oE 'mppe=[^ ]*' | cut -d= -f2
	else
		grep "session start: .* user $1 " "$work/server.out" | tail -n 1 |
			grep -oE ' mppe [^ ]*' | cut -d' ' -f3
	fi
}

# session NAME NS USER MPPE(require|refuse) EXPECT(up128|upnone|fail)
session() {
	local name=$1 ns=$2 user=$3 mppe=$4 expect=$5
	local log=$work/client-$n.log mppeopt pid state= i
	local exits0
	n=$((n + 1))
	exits0=$(exits_seen)
	case "$mppe" in
	require) mppeopt=require-mppe-128 ;;
	refuse) mppeopt=nomppe ;;
	esac
	: >"$log"
	ip netns exec "$ns" pppd pty "pptp 198.18.0.1 --nolaunchpppd --nohostroute" \
		name "$user" user "$user" remotename pptpd \
		refuse-pap refuse-chap refuse-mschap refuse-eap \
		noauth nodetach nodefaultroute noipdefault nopersist \
		"$mppeopt" nobsdcomp nodeflate novj novjccomp \
		lcp-echo-interval 0 debug logfile "$log" \
		>>"$log.out" 2>&1 &
	pid=$!
	# Up (IP address assigned) or gone, within 40 s.
	for i in $(seq 200); do
		if grep -q 'local  IP address' "$log"; then state=up; break; fi
		if ! kill -0 "$pid" 2>/dev/null; then state=gone; break; fi
		sleep 0.2
	done
	[ -n "$state" ] || state=timeout
	local mppe_c=none
	grep -q 'MPPE 128-bit stateless compression enabled' "$log" && mppe_c=128
	grep -q 'MPPE 40-bit stateless compression enabled' "$log" && mppe_c=40
	local traffic=no
	if [ "$state" = up ]; then
		# Let IPCP settle on the server side too, then pass traffic.
		if ip netns exec "$ns" ping -c 3 -i 0.3 -W 3 198.19.0.1 >"$work/ping-$n" 2>&1; then
			traffic=yes
		fi
		kill "$pid" 2>/dev/null || true
	fi
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	# The server's pppd for this call ends too: its exit report.
	for i in $(seq 100); do
		[ "$(exits_seen)" -gt "$exits0" ] && break
		sleep 0.2
	done
	local mppe_s
	mppe_s=$(server_mppe "$user" || true)

	local got why=
	case "$state" in
	up) got=up$mppe_c ;;
	*) got=fail ;;
	esac
	if [ "$got" != "$expect" ]; then
		why="got $got ($state), want $expect"
	elif [ "$state" = up ] && [ "$traffic" != yes ]; then
		why="session up but no traffic: $(tail -n 2 "$work/ping-$n" | tr '\n' ' ')"
	elif [ "$state" = up ] && [ "$mppe_s" != "$mppe_c" ]; then
		why="server reports mppe '${mppe_s:-nothing}', client says $mppe_c"
	elif [ "$(exits_seen)" -le "$exits0" ]; then
		why="the server did not see its pppd end"
	fi
	if [ -z "$why" ]; then
		if [ "$state" = up ]; then
			ok "$name: $expect, traffic passes"
		else
			ok "$name: $expect ($(grep -m1 -oE 'MPPE required[^")]*|LCP terminated by peer[^"]*' "$log" || echo "pppd exited"))"
		fi
	else
		notok "$name: $why"
		E2E_VERBOSE=1
	fi
	if [ "${E2E_VERBOSE:-0}" = 1 ]; then
		sed 's/^/#   client: /' "$log" | tail -n 25
	fi
	if [ -n "$why" ]; then
		sed 's/^/#   server: /' "$work/server-pppd.log" | tail -n 40
		E2E_VERBOSE=0
	fi
	if [ "${E2E_VERBOSE:-0}" = 1 ]; then
		sed 's/^/#   server: /' "$work/server-pppd.log" | grep -E 'pptpd-policy|MPPE|CCP|LCP term|IP address|Connect time|Sent' || true
	fi
	: >"$work/server-pppd.log"
}

session "alice (require-128), client requires MPPE-128" "$ns_c" alice require up128
session "alice (require-128), client refuses MPPE"      "$ns_c" alice refuse  fail
session "bob (allow), client requires MPPE-128"         "$ns_c" bob   require up128
session "bob (allow), client refuses MPPE"              "$ns_c" bob   refuse  upnone
session "carol (deny), client requires MPPE-128"        "$ns_c" carol require fail
session "carol (deny), client refuses MPPE"             "$ns_c" carol refuse  upnone
session "dave from 198.18.0.3 (address deny), client refuses MPPE" "$ns_c2" dave refuse upnone
session "dave from 198.18.0.3 (address deny), client requires MPPE-128" "$ns_c2" dave require fail
session "dave from 198.18.0.2 (no rule: options' require-mppe-128), client refuses MPPE" "$ns_c" dave refuse fail

# The report channel.
check() { # NAME FILE REGEX
	if grep -qE -- "$3" "$2"; then ok "$1"; else notok "$1"; fi
}
if [ "$kind" = poptop ]; then
	if grep -vqE '^v=1 event=[a-z]+( [a-z0-9_]+=[^ =]*)*$' "$work/reports"; then
		notok "report datagrams follow report.h"
		sed 's/^/#   /' "$work/reports"
	else
		ok "report datagrams follow report.h ($(wc -l <"$work/reports") received)"
	fi
	check "auth report names the rule (file:line)" "$work/reports" \
		' event=auth .*user=bob .*policy=allow .*rule=[^ ]*pptpd-peers:3( |$)'
	check "exit report says the session was up" "$work/reports" \
		' event=exit .*user=bob .*up=1'
	check "down report carries traffic counts" "$work/reports" \
		' event=down .*user=bob .*rx_bytes=[1-9][0-9]* .*rx_packets=[1-9]'
else
	check "daemon logs the policy and its rule (file:line)" "$work/server.out" \
		'user bob authenticated, MPPE policy allow \([^)]*pptpd-peers:3\)'
	check "daemon logs session start with MPPE" "$work/server.out" \
		'session start: .* user alice .* mppe 128 stateless policy require-128'
	check "daemon logs session end with traffic counts" "$work/server.out" \
		'session end: .* user bob .* rx [1-9][0-9]* bytes [1-9][0-9]* packets'
	[ "${E2E_VERBOSE:-0}" = 1 ] && sed 's/^/#   daemon: /' "$work/server.out"
fi
# wtmp: a login (line ppp*, user, client address) and a logout per session.
if [ -e "$work/wtmp" ]; then
	utmpdump "$work/wtmp" >"$work/wtmp.txt" 2>/dev/null || true
	check "wtmp has alice's login on a ppp line from her address" \
		"$work/wtmp.txt" '\[7\] .*\[alice +\] \[ppp[0-9]+ *\] \[198\.18\.0\.2 *\]'
	check "wtmp has the logout" "$work/wtmp.txt" \
		'\[[78]\] .*\[ +\] \[ppp[0-9]+ *\] \[ *\]'
	[ "${E2E_VERBOSE:-0}" = 1 ] && sed 's/^/#   wtmp: /' "$work/wtmp.txt"
fi
[ "${E2E_VERBOSE:-0}" = 1 ] && sed 's/^/#   report: /' "$work/reports"

echo "1..$((pass + fail))"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
