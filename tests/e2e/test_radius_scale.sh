#!/bin/bash
# test_radius_scale.sh -- growing past one machine: two pptpd servers (A in
# netns srv at 198.18.0.1, B in netns srvb at 198.18.0.4, each with its own
# /run/pptpd as on its own machine) in front of one FreeRADIUS 3.2 whose
# sqlippool (SQLite) holds the one address pool both hand out
# (examples/radius/freeradius/pool/). Real clients (pptp-linux + pppd).
#
#   scripts/e2e-run tests/e2e/test_radius_scale.sh    (or run it directly)
#
# The shared pool is 198.19.0.100-105 (6 addresses). Each pptpd's own
# remoteip is a range of its own outside it (A 198.19.1.x, B 198.19.2.x):
# pptpd picks one of those when the call starts, pppd gives the client the
# RADIUS Framed-IP-Address instead, and FreeRADIUS rejects a login it has
# no address for, so a server's own range is never seen by a client and
# bounds only its concurrent calls.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
plugin=$root/plugin/pptpd-policy.so

if [ -z "${PPTPD_IN_VM:-}" ] && [ -z "${E2E_MNTNS:-}" ] && [ -z "${E2E_RADIUS_RUN:-}" ]; then
	make -s -C "$root/plugin" >/dev/null
	export E2E_RADIUS_RUN=1
	exec "$root/scripts/e2e-run" "$here/$(basename "$0")" "$@"
fi

. "$here/lib.sh"
for c in freeradius radclient sqlite3; do
	command -v "$c" >/dev/null || { echo "e2e: $c not installed (scripts/packages.txt)" >&2; exit 1; }
done

e2e_init
netns_up
NS_SRVB=${E2E_NS_PREFIX:-}srvb
SERVER_B_IP=198.18.0.4
netns_add_client "$NS_SRVB" "$SERVER_B_IP"

# ---- FreeRADIUS with the shared pool
users=(alice bob carol dave eve frank gina hank)
for u in "${users[@]}"; do printf '%s\tCleartext-Password := "%s"\n' "$u" "$(user_pass "$u")"; done >"$E2E_DIR/users"
freeradius_conf "$E2E_DIR/users"
raddb=$E2E_DIR/raddb pool=$E2E_ROOT/examples/radius/freeradius/pool
DB=$E2E_DIR/pool.sqlite
cp "$pool/site-pptpd-pool" "$raddb/sites-enabled/pptpd"
cp "$pool/sqlippool" "$raddb/mods-enabled/sqlippool"
cp "$pool/pptpd-sqlite.conf" "$raddb/mods-config/sql/ippool/"
sed "s|/var/lib/freeradius/pptpd-pool.sqlite|$DB|" "$pool/sql" >"$raddb/mods-enabled/sql"
{
	cat /etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql
	cat /etc/freeradius/3.0/mods-config/sql/ippool/sqlite/schema.sql
	for i in 0 1 2 3 4 5; do
		echo "INSERT INTO radippool (id, pool_name, framedipaddress, expiry_time) VALUES ($((i + 1)), 'pptpd', '198.19.0.10$i', datetime('now', '-1 second'));"
	done
} | sqlite3 "$DB"
freeradius_start

# leases [NAS]: live leases (address nas user), of one NAS or all.
leases() {
	sqlite3 -separator ' ' "$DB" "SELECT framedipaddress, nasipaddress, username FROM radippool
		WHERE expiry_time > datetime('now') ${1:+AND nasipaddress = '$1'} ORDER BY framedipaddress"
}
nleases() { leases "$@" | grep -c . || true; }

# ---- the two servers
DAE_SECRET=dae-s3cret
printf '%s %s\n' "$RADIUS_IP" "$DAE_SECRET" >"$E2E_DIR/dae-clients"
chmod 600 "$E2E_DIR/dae-clients"
radius_client_conf "$E2E_DIR/radius-a" pptpd-a "$SERVER_IP"
radius_client_conf "$E2E_DIR/radius-b" pptpd-b "$SERVER_B_IP"
SERVER_PPPD_OPTS="plugin radius.so
radius-config-file $E2E_DIR/radius-a/radiusclient.conf
avpair NAS-IP-Address=$SERVER_IP"
TUNNEL_REMOTE_RANGE=198.19.1.10-19
write_server_conf "plugin $plugin" "radius-dae-listen $SERVER_IP" "radius-dae-clients $E2E_DIR/dae-clients"
server_start

B=$E2E_DIR/b
B_LOG=$B/server.log B_PPPD_LOG=$B/server-pppd.log
mkdir -p "$B/run"
chmod 700 "$B/run"
: >"$B_LOG"
: >"$B_PPPD_LOG"
sed -e "s|$E2E_SERVER_PPPD_LOG|$B_PPPD_LOG|" -e "s|radius-a|radius-b|" \
	-e "s|NAS-IP-Address=$SERVER_IP|NAS-IP-Address=$SERVER_B_IP|" "$E2E_DIR/options.pptpd" >"$B/options.pptpd"
sed -e "s|^option .*|option $B/options.pptpd|" -e "s|^remoteip .*|remoteip 198.19.2.10-19|" \
	-e "s|^radius-dae-listen .*|radius-dae-listen $SERVER_B_IP|" "$E2E_DIR/pptpd.conf" >"$B/pptpd.conf"
# B's /run/pptpd (its control socket, the plugin's facts) is its own, as
# on another machine: a private mount namespace with its own directory there.
# shellcheck disable=SC2016 # for the inner sh
ip netns exec "$NS_SRVB" unshare --mount --propagation private -- sh -c \
	'mkdir -p /run/pptpd && mount --bind "$1" /run/pptpd && shift && exec "$@"' sh "$B/run" \
	"$PPTPD" -f -c "$B/pptpd.conf" -p "$B/pptpd.pid" >>"$B_LOG" 2>&1 &
B_PID=$!
for ((i = 0; i < 150; i++)); do
	pid_listening "$B_PID" 1723 && break
	proc_alive "$B_PID" || { tail -n 20 "$B_LOG" >&2; echo "e2e: server B exited" >&2; exit 1; }
	e2e_sleep 0.2
done
pid_listening "$B_PID" 1723 || { echo "e2e: server B not listening" >&2; exit 1; }

# dial_all SERVER NS USER...: one client per user, all at once; waits.
# Under TCG the server's pppds for six calls at once take longer to start
# than pppd's 10 LCP tries: the clients keep asking.
dial_all() {
	local server=$1 ns=$2 u pids=()
	shift 2
	for u in "$@"; do
		CLIENT_SERVER=$server CLIENT_NS=$ns client_up "$u" "$u" "$(user_pass "$u")" \
			lcp-max-configure 60 >/dev/null 2>"$E2E_DIR/clients/$u.err" &
		pids+=($!)
	done
	for u in "${pids[@]}"; do wait "$u" || true; done
}
ip_of() { client_ip "$1" 2>/dev/null || echo none; }
ended_ok() {   # NAME: its pppd gone within 15 s
	local pid i
	pid=$(client_pid "$1") || return 0
	for ((i = 0; i < 75; i++)); do proc_alive "$pid" || return 0; e2e_sleep 0.2; done
	return 1
}
in_pool() { [[ $1 =~ ^198\.19\.0\.10[0-5]$ ]]; }

# ---- 1. six clients over two servers, all at once
t0=$SECONDS
dial_all "$SERVER_IP" "$NS_CLI" alice bob carol &
dpid=$!
dial_all "$SERVER_B_IP" "$NS_CLI2" dave eve frank
wait "$dpid" || true
diag "six dials at once took $((SECONDS - t0)) s"
declare -A addr=()
all=()
for u in alice bob carol dave eve frank; do
	addr[$u]=$(ip_of "$u")
	all+=("${addr[$u]}")
	diag "$u: ${addr[$u]}"
done
check "all six clients are up (3 on A, 3 on B) with an address from the shared pool" \
	eval '(for a in "${all[@]}"; do in_pool "$a" || exit 1; done)'
check "no two of the six tunnel addresses collide" \
	test "$(printf '%s\n' "${all[@]}" | sort -u | grep -c .)" = 6
check "the pool table leases 3 addresses to A (NAS-IP-Address $SERVER_IP) and 3 to B" \
	test "$(nleases "$SERVER_IP")/$(nleases "$SERVER_B_IP")" = 3/3
diag "leases: $(leases | tr '\n' ';')"
check "each lease names the user who holds that address" \
	eval '(l=$(leases); for u in alice bob carol dave eve frank; do grep -qx "${addr[$u]} [0-9.]* $u" <<<"$l" || exit 1; done)'
for u in alice dave; do
	ifn=$(client_ifname "$u" || true)
	loss=$(ping_loss "$(client_ns "$u")" "$TUNNEL_LOCAL_IP" 5 "$ifn")
	check "traffic through $u's tunnel ($ifn, ${addr[$u]})" test "$loss" = 0
done
assert_log_contains "$E2E_SERVER_LOG" "session start: .* user alice .*tunnel ${addr[alice]//./\\.} " \
	"server A's session start line names alice's address from RADIUS"
assert_log_contains "$B_LOG" "session start: .* user dave .*tunnel ${addr[dave]//./\\.} " \
	"server B's session start line names dave's address from RADIUS"

# ---- 2. the pool is exhausted: a seventh login is rejected, not given
# one of pptpd's own addresses
CLIENT_SERVER=$SERVER_IP CLIENT_NS=$NS_CLI client_up gina gina ginapass >/dev/null 2>&1 || true
check "a seventh client (pool exhausted) gets no session" test "$(ip_of gina)" = none
wait_for_log "$E2E_SERVER_LOG" 'authentication failed for gina' 20 || true
assert_log_contains "$E2E_SERVER_LOG" 'authentication failed for gina: rejected by the RADIUS server' \
	"server A logs the RADIUS rejection"
client_down gina

# ---- 3. accounting from both, in one place, told apart by NAS
for ((i = 0; i < 50; i++)); do
	[ "$(radius_detail | grep -c 'Acct-Status-Type = Start')" -ge 6 ] && break
	e2e_sleep 0.2
done
start_of() {   # USER NAS_ID NAS_IP ADDR: a Start record with all of them
	radius_detail | awk -v RS= -v u="$1" -v n="$2" -v a="$3" -v f="$4" '
		index($0, "User-Name = \"" u "\"") && index($0, "NAS-Identifier = \"" n "\"") &&
		index($0, "NAS-IP-Address = " a "\n") && index($0, "Framed-IP-Address = " f "\n") &&
		/Acct-Status-Type = Start/ { ok = 1 } END { exit !ok }'
}
check "FreeRADIUS has Accounting-Start for A's three (NAS-Identifier pptpd-a, NAS-IP-Address $SERVER_IP)" \
	eval '(for u in alice bob carol; do start_of "$u" pptpd-a "$SERVER_IP" "${addr[$u]}" || exit 1; done)'
check "and for B's three (NAS-Identifier pptpd-b, NAS-IP-Address $SERVER_B_IP)" \
	eval '(for u in dave eve frank; do start_of "$u" pptpd-b "$SERVER_B_IP" "${addr[$u]}" || exit 1; done)'

# ---- 4. a Disconnect-Request for a user on B, sent to B
dm() {   # SERVER ATTR: radclient disconnect; output in dm.out
	printf '%s\n' "$2" | ip netns exec "$NS_RAD" radclient -x -r 1 -t 2 \
		"$1:3799" disconnect "$DAE_SECRET" >"$E2E_DIR/dm.out" 2>&1 || true
	grep -E 'Received|Error-Cause' "$E2E_DIR/dm.out" | sed 's/^/#   dm: /' || true
}
dm "$SERVER_IP" 'User-Name = eve'
check "User-Name = eve sent to A: Disconnect-NAK 503 (eve is on B)" \
	grep -q 'Error-Cause = Session-Context-Not-Found' "$E2E_DIR/dm.out"
dm "$SERVER_B_IP" 'User-Name = eve'
check "User-Name = eve sent to B ($SERVER_B_IP:3799): Disconnect-ACK" grep -q 'Received Disconnect-ACK' "$E2E_DIR/dm.out"
check "eve's session ends" ended_ok eve
alive=0
for u in alice bob carol dave frank; do proc_alive "$(client_pid "$u")" && alive=$((alive + 1)); done
check "the five other sessions live on ($alive of 5)" test "$alive" = 5
assert_log_contains "$B_LOG" 'dae: Disconnect-Request id [0-9]+ from .*: call [0-9]+/[0-9]+ .* user eve hung up' \
	"server B logs the hang-up"
assert_log_lacks "$E2E_SERVER_LOG" 'dae: .* hung up' "server A hung up nothing"
for ((i = 0; i < 50; i++)); do [ "$(nleases "$SERVER_B_IP")" = 2 ] && break; e2e_sleep 0.2; done
check "eve's Accounting-Stop freed her address (B holds 2 leases)" test "$(nleases "$SERVER_B_IP")" = 2

# ---- 5. a server that stops releases its addresses
kill -TERM "$(server_pid)"
gone=0
for u in alice bob carol; do ended_ok "$u" && gone=$((gone + 1)); done
check "server A stopping (SIGTERM) ends its three sessions ($gone of 3)" test "$gone" = 3
for ((i = 0; i < 75; i++)); do [ "$(nleases "$SERVER_IP")" = 0 ] && break; e2e_sleep 0.2; done
check "radius.so's Accounting-Stop per session freed all of A's leases in the pool" \
	test "$(nleases "$SERVER_IP")" = 0
check "FreeRADIUS got an Accounting-Stop from pptpd-a for each of them" \
	test "$(radius_detail | awk -v RS= '/NAS-Identifier = "pptpd-a"/ && /Acct-Status-Type = Stop/' | grep -c 'Acct-Status-Type = Stop')" = 3
check "B's sessions live on" eval 'proc_alive "$(client_pid dave)" && proc_alive "$(client_pid frank)"'
proc_stop "$(server_pid)" 10
dial_all "$SERVER_B_IP" "$NS_CLI2" gina hank
ga=$(ip_of gina) ha=$(ip_of hank)
diag "after A stopped, on B: gina $ga, hank $ha"
check "two new clients on B get addresses (gina $ga, hank $ha)" eval 'in_pool "$ga" && in_pool "$ha" && [ "$ga" != "$ha" ]'
check "one of them is an address A held before it stopped" \
	eval '(for a in "$ga" "$ha"; do for u in alice bob carol; do [ "$a" = "${addr[$u]}" ] && exit 0; done; done; exit 1)'
check "none collides with B's live sessions" \
	eval '(for a in "$ga" "$ha"; do [ "$a" != "${addr[dave]}" ] && [ "$a" != "${addr[frank]}" ] || exit 1; done)'

# ---- 6. a server that crashes (the machine: pptpd and its pppds killed
# with no word to RADIUS) keeps its leases until they expire, or until it
# says Accounting-On when it comes back
n_b=$(nleases "$SERVER_B_IP")
mapfile -t bpids < <(netns_pids "$NS_SRVB")
# All stopped first: killed one after another, a pppd could see its pty
# hang up (the monitor gone before it) and send its Accounting-Stop in
# between, as a crash of the machine would not let it (seen in CI).
kill -STOP "${bpids[@]}" 2>/dev/null || true
kill -9 "${bpids[@]}" 2>/dev/null || true
e2e_sleep 2
n_after=$(nleases "$SERVER_B_IP")
check "after B crashed (kill -9 of its pptpd and pppds), its $n_b leases stay in the pool ($n_after)" \
	test "$n_after" = "$n_b" -a "$n_b" = 4
printf 'Acct-Status-Type = Accounting-On\nNAS-IP-Address = %s\nNAS-Identifier = pptpd-b\nAcct-Session-Id = 0\n' "$SERVER_B_IP" |
	ip netns exec "$NS_SRVB" radclient -r 2 -t 3 "$RADIUS_IP:1813" acct "$RADIUS_SECRET" >"$E2E_DIR/acct-on.out" 2>&1 || true
check "B's Accounting-On on its way back up frees them all" test "$(nleases "$SERVER_B_IP")" = 0
for u in dave frank gina hank; do client_down "$u"; done

e2e_done
