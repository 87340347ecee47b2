#!/bin/bash
# test_multicall.sh -- several calls on one control connection (issue 12).
# pptp-linux's call manager carries every tunnel from one host to one server
# over a single control connection (RFC 2637 allows many calls on one), so a
# second "pptp 198.18.0.1" from the same host asks for its call on the
# connection the first one opened.
#
#   scripts/e2e-run tests/e2e/test_multicall.sh
#
# What a user checks: two tunnels from one Linux host both come up, each with
# its own address, and pass traffic, also at the same time; hanging one up
# leaves the other; dialling in and out 10 times beside a running tunnel
# works every time and leaves no pppd, no zombie, no descriptor behind and
# every address back in the pool; and the bounds hold: with
# calls-per-connection 2 a third call on the connection is refused, with
# calls-per-client 3 a fourth call from the address (on a connection of its
# own) is refused, while the tunnels already up keep passing traffic and
# another host still gets in.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CYCLES=${MULTICALL_CYCLES:-10}
# A refused call fails within a second or two; a dial that works takes ~3 s
# in the VM. No need to wait the default minute for either.
E2E_DIAL_TIMEOUT=${E2E_DIAL_TIMEOUT:-20}

# dial NAME USER [SHARE]: client_up from netns cli; with SHARE, through the
# pptp call manager of client SHARE, so on its control connection. Prints
# the tunnel address; returns 1 if the tunnel does not come up.
dial() {
	CLIENT_CALLMGR_OF=${3:-} client_up "$1" "$2" "$(user_pass "$2")"
}

# ctrl_of TUNNEL_IP: the control connection ("198.18.0.2:PORT") of the
# latest call given that tunnel address, from "call A/B IP:PORT: started
# pppd PID for TUNNEL_IP".
ctrl_of() {
	local ip=${1//./\\.}
	sed -n "s/.*call [0-9]*\/[0-9]* \([0-9.]*:[0-9]*\): started pppd [0-9]* for $ip\$/\1/p" \
		"$E2E_SERVER_LOG" | tail -n 1
}

# assert_tunnel_ping NAME COUNT MSG: no loss to the server's tunnel address
# through client NAME's own ppp interface.
assert_tunnel_ping() {
	local loss
	loss=$(ping_loss "$(client_ns "$1")" "$TUNNEL_LOCAL_IP" "$2" "$(client_ifname "$1")")
	if [ "$loss" = 0 ]; then tap_ok "$3"; else tap_not_ok "$3 ($loss% loss)"; fi
	return 0
}

# refusals KEY: how many calls from the client host the server has refused
# naming the bound KEY ("call N refused: too many ... (calls-per-client)").
refusals() {
	grep -Ec "198\\.18\\.0\\.2:[0-9]+: call [0-9]+ refused: .*\\($1\\)" "$E2E_SERVER_LOG" || true
}

# pppd_count NS: pppd processes in netns NS.
pppd_count() {
	local p comm n=0
	for p in $(netns_pids "$1"); do
		read -r comm 2>/dev/null <"/proc/$p/comm" && [ "$comm" = pppd ] && n=$((n + 1))
	done
	echo "$n"
}

# wait_server_children N: until the server has N pppd children (10 s).
wait_server_children() {
	for _ in $(seq 50); do [ "$(server_children)" -eq "$1" ] && return 0; e2e_sleep 0.2; done
	return 1
}

e2e_init
netns_up
# Tunnels in one netns share their destination, the server's tunnel
# address: the replies of the second come in on its own ppp interface while
# the route back points at the first, which reverse-path filtering drops.
ip netns exec "$NS_CLI" sysctl -q -w net.ipv4.conf.all.rp_filter=0 \
	net.ipv4.conf.default.rp_filter=0
PLUGIN="plugin $E2E_ROOT/plugin/pptpd-policy.so"
write_server_conf "$PLUGIN"
server_start "$PPTPD"
tap_ok "pptpd listens on 198.18.0.1:1723"

# ---- two tunnels from one host on one control connection
ip1=$(dial m1 alice)
ctrl1=$(ctrl_of "$ip1")
tap_ok "first tunnel from 198.18.0.2: $ip1 on control connection $ctrl1"
if ip2=$(dial m2 bob m1); then
	tap_ok "second tunnel from the same host, through the same pptp call manager: $ip2"
	ctrl2=$(ctrl_of "$ip2")
	check "each tunnel has its own address ($ip1, $ip2)" test "$ip1" != "$ip2"
	check "both calls ride one control connection ($ctrl1, $ctrl2)" \
		test -n "$ctrl1" -a "$ctrl1" = "$ctrl2"
	status=$(status_line)
	check "status line: 1 connection, 2 calls active (${status#*status: })" \
		grep -q 'status: 1 connections, 2 calls active, 0 ending' <<<"$status"
	assert_tunnel_ping m1 10 "tunnel 1 ($ip1) passes 10 pings"
	assert_tunnel_ping m2 10 "tunnel 2 ($ip2) passes 10 pings"
	ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 15 "$(client_ifname m1)" >"$E2E_DIR/loss-m1" &
	p1=$!
	ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 15 "$(client_ifname m2)" >"$E2E_DIR/loss-m2" &
	p2=$!
	wait "$p1" "$p2"
	l1=$(<"$E2E_DIR/loss-m1") l2=$(<"$E2E_DIR/loss-m2")
	check "both tunnels at once: 15 pings each, loss $l1 % and $l2 %" test "$l1" = 0 -a "$l2" = 0
	client_down m2
	wait_server_children 1 || true
	assert_tunnel_ping m1 5 "tunnel 1 still passes traffic after tunnel 2 hung up"
	assert_log_lacks "$E2E_SERVER_LOG" "ctrl ${ctrl1//./\\.}: closed" \
		"hanging up tunnel 2 leaves the control connection open"
else
	tap_not_ok "second tunnel from the same host, through the same pptp call manager"
	grep -E 'refused' "$E2E_SERVER_LOG" | tail -n 2 | sed 's/^/#   server: /'
fi

# ---- churn: dial and hang up beside the running tunnel
wait_server_children 1 || true
# Both processes under privsep (the default): the worker holds the
# connections and ptys, the monitor what each call's pppd needs of root.
fds0=$(fd_count "$(server_worker)") mfds0=$(fd_count "$(server_pid)")
status0=$(status_line)
diag "before $CYCLES cycles: $fds0 fds; ${status0#*status: }"
up=0 pinged=0 shared=0
for i in $(seq "$CYCLES"); do
	if ipc=$(dial "cy$i" carol m1 2>>"$E2E_DIR/cycles.err"); then
		up=$((up + 1))
		[ "$(ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "$(client_ifname "cy$i")")" = 0 ] &&
			pinged=$((pinged + 1))
		[ "$(ctrl_of "$ipc")" = "$ctrl1" ] && shared=$((shared + 1))
	fi
	client_down "cy$i"
done
[ "$up" = "$CYCLES" ] || head -n 12 "$E2E_DIR/cycles.err" | sed 's/^/# /'
wait_server_children 1 || true
fds1=$(fd_count "$(server_worker)") mfds1=$(fd_count "$(server_pid)")
status1=$(status_line)
diag "after $CYCLES cycles: $fds1 fds; ${status1#*status: }"
check "$CYCLES dial/hang-up cycles beside tunnel 1: $up came up" test "$up" = "$CYCLES"
check "$CYCLES cycles: $pinged passed 3 pings without loss" test "$pinged" = "$CYCLES"
check "$CYCLES cycles: $shared rode tunnel 1's control connection" test "$shared" = "$CYCLES"
check "$CYCLES cycles: only tunnel 1's pppd left under pptpd ($(server_children))" \
	test "$(server_children)" -eq 1
check "$CYCLES cycles: only tunnel 1's pppd left on the client host ($(pppd_count "$NS_CLI"))" \
	test "$(pppd_count "$NS_CLI")" -eq 1
check "$CYCLES cycles: no zombie" test "$(test_zombie_count)" = 0
check "$CYCLES cycles: pptpd has the same $fds0 descriptors ($fds1)" test "$fds1" -eq "$fds0"
if [ "${E2E_PRIVSEP:-yes}" = yes ]; then
	check "$CYCLES cycles: its monitor has the same $mfds0 descriptors ($mfds1)" test "$mfds1" -eq "$mfds0"
fi
check "$CYCLES cycles: 1 call active, none ending, every other address back in the pool" \
	grep -q '1 connections, 1 calls active, 0 ending, pool 30 of 31 free' <<<"$status1"
assert_tunnel_ping m1 5 "tunnel 1 still passes traffic after the cycles"
client_down m1
wait_server_children 0 || true

# ---- bounds: calls-per-connection 2, calls-per-client 3
server_stop
write_server_conf "$PLUGIN" "calls-per-connection 2" "calls-per-client 3"
if server_start "$PPTPD"; then
	tap_ok "pptpd starts with calls-per-connection 2, calls-per-client 3"
	ipb1=$(dial b1 alice)
	if ipb2=$(dial b2 bob b1); then
		tap_ok "bound 2: second call on the connection comes up ($ipb1, $ipb2)"
	else
		tap_not_ok "bound 2: second call on the connection comes up"
	fi
	n0=$(refusals calls-per-connection)
	if dial b3 carol b1 >/dev/null 2>"$E2E_DIR/b3.err"; then
		tap_not_ok "bound 2: a third call on the connection is refused (it came up)"
	else
		n1=$(refusals calls-per-connection)
		check "bound 2: a third call on the connection is refused, by calls-per-connection ($n1 such refusals, were $n0)" \
			test "$n1" -gt "$n0"
	fi
	assert_tunnel_ping b1 5 "bound 2: tunnel 1 still passes traffic after the refusal"
	if [ -f "$E2E_DIR/clients/b2/ip" ]; then
		assert_tunnel_ping b2 5 "bound 2: tunnel 2 still passes traffic after the refusal"
	fi
	# Own call managers: new control connections from the same address.
	if ipb4=$(dial b4 dave); then
		ctrlb4=$(ctrl_of "$ipb4")
		check "bound 3 per client: a call on a new connection from the host is the third: $ipb4 on $ctrlb4" \
			test -n "$ctrlb4" -a "$ctrlb4" != "$(ctrl_of "$ipb1")"
	else
		tap_not_ok "bound 3 per client: a call on a new connection from the host is the third"
	fi
	n0=$(refusals calls-per-client)
	if dial b5 eve >/dev/null 2>"$E2E_DIR/b5.err"; then
		tap_not_ok "bound 3 per client: a fourth call from the host is refused (it came up)"
	else
		n1=$(refusals calls-per-client)
		check "bound 3 per client: a fourth call from the host is refused, by calls-per-client ($n1 such refusals, were $n0)" \
			test "$n1" -gt "$n0"
	fi
	if ipo=$(CLIENT_NS=$NS_CLI2 client_up o1 frank "$(user_pass frank)"); then
		tap_ok "another host still dials in: $ipo"
		assert_ping "$NS_CLI2" "$TUNNEL_LOCAL_IP" 5 "the other host passes traffic"
	else
		tap_not_ok "another host still dials in"
	fi
	grep -E 'refused' "$E2E_SERVER_LOG" | tail -n 2 | sed 's/^/# server: /'
else
	tap_not_ok "pptpd starts with calls-per-connection 2, calls-per-client 3"
	tail -n 3 "$E2E_SERVER_LOG" | sed 's/^/# server: /'
fi

e2e_done
