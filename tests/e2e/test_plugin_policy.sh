#!/bin/bash
# test_plugin_policy.sh -- per-peer MPPE policy of the pptpd-policy plugin,
# end to end: a real PPTP server whose pppd loads the plugin, and real
# clients (pptp-linux + pppd) in other network namespaces.
#
#   scripts/e2e-run tests/e2e/test_plugin_policy.sh     (or run it directly:
#                                it goes through scripts/e2e-run by itself)
#   PPTPD_SERVER=/usr/sbin/pptpd ...   against Poptop 1.4.0 instead of ours
#   E2E_DATAPATH=kernel ...   ours on the kernel data path
#                              (test_plugin_policy_kernel.sh)
#
# Policy file:   user alice require-128
#                user bob   allow
#                user carol deny
#                address 198.18.0.3 deny     (dave has no user rule)
# pppd options:  require-mppe-128 (the default when no rule matches)
#
# For each of alice, bob, carol one client that requires MPPE-128
# (require-mppe-128) and one that refuses MPPE (nomppe); dave from
# 198.18.0.3 (address rule) and from 198.18.0.2 (no rule: the default):
#   alice+mppe up/128   alice+nomppe fails   bob+mppe up/128
#   bob+nomppe up/none  carol+mppe fails     carol+nomppe up/none
#   dave@.3+nomppe up/none  dave@.3+mppe fails  dave@.2+nomppe fails
# Every session that comes up must carry traffic (pings through the
# tunnel), and the server must report the MPPE strength the client saw.
# Then: the report channel (Poptop: datagrams on a test socket; ours: the
# daemon's session log lines) and wtmp records (pptpd-logwtmp).
#
# The refusing client is pppd with `nomppe` and without require-mppe-*:
# in pppd 2.4.9, `require-mppe-128 ... nomppe` leaves MPPE allowed in the
# receive direction (ccp_allowoptions is set as a side effect), so it
# would not be a client that refuses MPPE.
#
# Environment: PPTPD_SERVER (server binary, default our pptpd/pptpd), and
# lib.sh's E2E_KEEP, E2E_VERBOSE, E2E_DIAL_TIMEOUT.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
plugin=$root/plugin/pptpd-policy.so

# Build the plugin where the tree is writable, then run where PPP works.
if [ -z "${PPTPD_IN_VM:-}" ] && [ -z "${E2E_MNTNS:-}" ] && [ -z "${E2E_POLICY_RUN:-}" ]; then
	make -s -C "$root/plugin" >/dev/null
	export E2E_POLICY_RUN=1
	exec "$root/scripts/e2e-run" "$here/$(basename "$0")" "$@"
fi

. "$here/lib.sh"

server=${PPTPD_SERVER:-$PPTPD}
[ -f "$plugin" ] || make -s -C "$root/plugin" >/dev/null

e2e_init
# wtmp/utmp records (pptpd-logwtmp) go to test files.
for f in /var/log/wtmp /var/run/utmp; do
	[ -e "$f" ] || continue
	: >"$E2E_DIR/$(basename "$f")"
	mount --bind "$E2E_DIR/$(basename "$f")" "$f"
done
netns_up

cat >"$E2E_DIR/pptpd-peers" <<'EOF'
# test policy
user alice require-128
user bob   allow
user carol deny
address 198.18.0.3 deny
EOF

# Poptop (pptpd v1.x) knows nothing of the plugin: its pppd options file
# loads it, and the reports go to a socket of ours.  Our pptpd passes the
# plugin, the call's report channel and the peers file to every pppd itself
# (pptpd.conf: plugin, peers, logwtmp) and logs what the plugin reports.
reports=$E2E_DIR/reports
: >"$reports"
if "$server" -v 2>&1 | grep -q 'pptpd v1\.'; then
	kind=poptop
	SERVER_PPPD_OPTS="plugin $plugin
pptpd-peers $E2E_DIR/pptpd-peers
pptpd-report $E2E_DIR/report.sock
pptpd-logwtmp"
	write_server_conf
	python3 - "$E2E_DIR/report.sock" "$reports" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        f.write(s.recv(4096).decode("ascii", "replace") + "\n")
PY
	report_pid=$!
	for ((i = 0; i < 100; i++)); do [ -S "$E2E_DIR/report.sock" ] && break; e2e_sleep 0.2; done
	[ -S "$E2E_DIR/report.sock" ] || { echo "e2e: report socket not bound" >&2; exit 1; }
else
	kind=ours
	write_server_conf "plugin $plugin" "peers $E2E_DIR/pptpd-peers" "logwtmp"
fi
server_start "$server"
diag "server kind: $kind"
if [ "$kind" = ours ] && [ "${E2E_DATAPATH:-}" = kernel ]; then
	assert_log_contains "$E2E_SERVER_LOG" "data path: kernel PPTP channel" \
		"the calls ride the kernel's PPTP channel (datapath kernel)"
fi

# How many server-side pppds have ended, or reported IP up (Poptop:
# reports on our socket; ours: the daemon's log lines).
ended_count() { server_count ' event=exit ' ': ended after'; }
up_count() { server_count ' event=up ' 'session start: '; }
server_count() {
	local f=$reports re=$1 n=0 line
	[ "$kind" = ours ] && f=$E2E_SERVER_LOG re=$2
	while IFS= read -r line; do [[ $line =~ $re ]] && n=$((n + 1)); done <"$f"
	echo "$n"
}

# The MPPE strength the server reported for USER's last session.
server_mppe() {
	local user=$1 line v=
	if [ "$kind" = poptop ]; then
		while IFS= read -r line; do
			[[ $line =~ \ event=up\ .*\ user=$user\ .*\ mppe=([^ ]*) ]] && v=${BASH_REMATCH[1]}
		done <"$reports"
	else
		while IFS= read -r line; do
			[[ $line =~ session\ start:\ .*\ user\ $user\ .*\ mppe\ ([^ ]*) ]] && v=${BASH_REMATCH[1]}
		done <"$E2E_SERVER_LOG"
	fi
	echo "$v"
}

# dial NAME NS USER MPPE_OPT: like lib.sh's client_up, but the MPPE option
# is ours (require-mppe-128 or nomppe) and a session that fails is an
# outcome, not an error.  Sets STATE (up|gone|timeout) and MPPE_C (what the
# client's pppd enabled: 128, 40 or none).
dial() {
	local name=$1 ns=$2 user=$3 mppeopt=$4
	local dir=$E2E_DIR/clients/$name pid line i
	rm -rf "$dir"
	mkdir -p "$dir/pptp-run"
	echo "$ns" >"$dir/ns"
	: >"$dir/pppd.log"
	# shellcheck disable=SC2016 # $1 is for the inner sh
	ip netns exec "$ns" unshare --mount --propagation private -- \
		sh -c 'mount --bind "$1" /var/run/pptp && shift && exec "$@"' sh "$dir/pptp-run" \
		pppd pty "pptp $SERVER_IP --nolaunchpppd" \
		name "$user" user "$user" password "$(user_pass "$user")" remotename pptpd \
		refuse-pap refuse-chap refuse-mschap refuse-eap \
		"$mppeopt" nobsdcomp nodeflate novj novjccomp \
		nodefaultroute noauth nodetach lcp-echo-interval 0 \
		logfile "$dir/pppd.log" debug ipparam "$name" linkname "$name" \
		</dev/null >"$dir/pppd.out" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/pid"
	STATE=timeout
	for ((i = 0; i < ${E2E_DIAL_TIMEOUT:-60} * 5; i++)); do
		while IFS= read -r line; do
			[[ $line == "local  IP address"* ]] && STATE=up && break
		done <"$dir/pppd.log"
		[ "$STATE" = up ] && break
		proc_alive "$pid" || { STATE=gone; break; }
		e2e_sleep 0.2
	done
	MPPE_C=none
	while IFS= read -r line; do
		[[ $line =~ MPPE\ ([0-9]+)-bit\ (stateless|stateful)\ compression\ enabled ]] &&
			MPPE_C=${BASH_REMATCH[1]}
	done <"$dir/pppd.log"
	return 0
}

# session DESC NS USER require|refuse EXPECT(up128|upnone|fail)
n=0
session() {
	local desc=$1 ns=$2 user=$3 mppe=$4 expect=$5
	local name=c$n ended0 up0 got why= traffic=no mppe_s reason line
	n=$((n + 1))
	ended0=$(ended_count)
	up0=$(up_count)
	case "$mppe" in
	require) dial "$name" "$ns" "$user" require-mppe-128 ;;
	refuse) dial "$name" "$ns" "$user" nomppe ;;
	esac
	if [ "$STATE" = up ]; then
		got=up$MPPE_C
		# The server's side is up too (its plugin reported it), then
		# pings must all come back.
		for ((i = 0; i < 50; i++)); do
			[ "$(up_count)" -gt "$up0" ] && break
			e2e_sleep 0.2
		done
		[ "$(ping_loss "$ns" "$TUNNEL_LOCAL_IP" 5)" = 0 ] && traffic=yes
	else
		got=fail
	fi
	client_down "$name"
	# The server's pppd for this call ends too.
	for ((i = 0; i < 100; i++)); do
		[ "$(ended_count)" -gt "$ended0" ] && break
		e2e_sleep 0.2
	done
	mppe_s=$(server_mppe "$user")
	if [ "$got" != "$expect" ]; then
		why="got $got ($STATE), want $expect"
	elif [ "$STATE" = up ] && [ "$traffic" != yes ]; then
		why="session up but pings through the tunnel fail"
	elif [ "$STATE" = up ] && [ "$mppe_s" != "$MPPE_C" ]; then
		why="server reports mppe '${mppe_s:-nothing}', client says $MPPE_C"
	elif [ "$(ended_count)" -le "$ended0" ]; then
		why="the server did not see its pppd end"
	fi
	if [ -n "$why" ]; then
		tap_not_ok "$desc: $why"
		diag "client log:"
		sed 's/^/#   /' "$E2E_DIR/clients/$name/pppd.log" | tail -n 25
		diag "server pppd log:"
		sed 's/^/#   /' "$E2E_SERVER_PPPD_LOG" | tail -n 40
	elif [ "$STATE" = up ]; then
		tap_ok "$desc: up, MPPE $MPPE_C, traffic passes"
	else
		reason="pppd exited"
		while IFS= read -r line; do
			[[ $line =~ (MPPE required but peer [a-z]+) ]] && reason=${BASH_REMATCH[1]} && break
		done <"$E2E_DIR/clients/$name/pppd.log"
		tap_ok "$desc: no session ($reason)"
	fi
	# Keep the server pppd log per session, for the next failure message.
	cat "$E2E_SERVER_PPPD_LOG" >>"$E2E_DIR/server-pppd.all.log"
	: >"$E2E_SERVER_PPPD_LOG"
}

session "alice (require-128), client requires MPPE-128" "$NS_CLI" alice require up128
session "alice (require-128), client refuses MPPE" "$NS_CLI" alice refuse fail
session "bob (allow), client requires MPPE-128" "$NS_CLI" bob require up128
session "bob (allow), client refuses MPPE" "$NS_CLI" bob refuse upnone
session "carol (deny), client requires MPPE-128" "$NS_CLI" carol require fail
session "carol (deny), client refuses MPPE" "$NS_CLI" carol refuse upnone
session "dave from 198.18.0.3 (address rule deny), client refuses MPPE" "$NS_CLI2" dave refuse upnone
session "dave from 198.18.0.3 (address rule deny), client requires MPPE-128" "$NS_CLI2" dave require fail
session "dave from 198.18.0.2 (no rule: require-mppe-128 from the options), client refuses MPPE" \
	"$NS_CLI" dave refuse fail

# The plugin's own log lines (server pppd log) name the rule.
assert_log_contains "$E2E_DIR/server-pppd.all.log" \
	'pptpd-policy: bob from 198\.18\.0\.2: MPPE allow \(.*pptpd-peers:3\)' \
	"plugin logs the policy chosen and its rule (file:line)"
assert_log_contains "$E2E_DIR/server-pppd.all.log" \
	"pptpd-policy: client refused MPPE, which .*pptpd-peers:2 requires" \
	"plugin logs why a required-MPPE session is cut"
assert_log_contains "$E2E_DIR/server-pppd.all.log" \
	"pptpd-policy: bob: .*policy allow .*continuing without MPPE" \
	"plugin logs the allow fallback to plaintext"

# The report channel.
if [ "$kind" = poptop ]; then
	bad=0
	while IFS= read -r line; do
		[[ $line =~ ^v=1\ event=[a-z]+(\ [a-z0-9_]+=[^\ =]*)*$ ]] || bad=1
	done <"$reports"
	check "report datagrams follow proto/report.h" test "$bad" = 0
	assert_log_contains "$reports" ' event=auth .*user=bob .*policy=allow .*rule=[^ ]*pptpd-peers:3( |$)' \
		"auth report names the rule (file:line)"
	assert_log_contains "$reports" ' event=exit .*user=bob .*up=1' \
		"exit report says the session was up"
	assert_log_contains "$reports" ' event=down .*user=bob .*rx_bytes=[1-9][0-9]* .*rx_packets=[1-9]' \
		"down report carries traffic counts"
	kill "$report_pid" 2>/dev/null || true
else
	assert_log_contains "$E2E_SERVER_LOG" 'user bob authenticated, MPPE policy allow \([^)]*pptpd-peers:3\)' \
		"daemon logs the policy and its rule (file:line)"
	assert_log_contains "$E2E_SERVER_LOG" 'session start: .* user alice .* mppe 128 stateless policy require-128' \
		"daemon logs the session start with MPPE"
	assert_log_contains "$E2E_SERVER_LOG" 'session end: .* user bob .* rx [1-9][0-9]* bytes [1-9][0-9]* packets' \
		"daemon logs the session end with traffic counts"
fi

# wtmp: a login (line ppp*, user, client address) and a logout per session.
if [ -e "$E2E_DIR/wtmp" ]; then
	# Debian 13 has no utmpdump: our reader prints the same columns.
	if command -v utmpdump >/dev/null; then
		utmpdump "$E2E_DIR/wtmp" >"$E2E_DIR/wtmp.txt" 2>/dev/null || true
	else
		"$here/utmp_dump.py" "$E2E_DIR/wtmp" >"$E2E_DIR/wtmp.txt" || true
	fi
	assert_log_contains "$E2E_DIR/wtmp.txt" '\[7\] .*\[alice +\] \[ppp[0-9]+ *\] \[198\.18\.0\.2 *\]' \
		"wtmp: alice's login on a ppp line from her address"
	assert_log_contains "$E2E_DIR/wtmp.txt" '\[[78]\] .*\[ +\] \[ppp[0-9]+ *\] \[ *\]' \
		"wtmp: the logout"
fi

e2e_done
