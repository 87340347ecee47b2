#!/bin/bash
# test_poptop_smoke.sh -- proves the end-to-end bed with Poptop (Debian's
# /usr/sbin/pptpd, the server we replace): one pptp-linux client dials in
# with MS-CHAPv2 + MPPE-128, the tunnel carries 20 pings without loss, and
# iperf3 measures TCP (5 s) and UDP (1200-byte datagrams at 4 Mbit/s) through
# it. Throughput numbers are reported, not judged: under TCG they depend on
# the host (see REFERENCE.md section 1).
#
#   scripts/e2e-run tests/e2e/test_poptop_smoke.sh
#
# SMOKE_SERVER=path runs the same checks against another server binary
# (e.g. our pptpd/pptpd).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

server=${SMOKE_SERVER:-$POPTOP}

e2e_init
netns_up
check "client netns reaches the server over veth" \
	test "$(ping_loss "$NS_CLI" "$SERVER_IP" 3)" = 0

server_start "$server"
tap_ok "server $server listens on 198.18.0.1:1723"

ip=$(client_up c1 alice "$(user_pass alice)")
tap_ok "alice dialed in: tunnel $ip <-> $(client_peer c1) on $(client_ifname c1)"
diag "dial time $(client_dial_time c1) s"

log=$(client_log c1)
assert_log_contains "$log" "CHAP authentication succeeded" "client: MS-CHAPv2 authentication succeeded"
assert_log_contains "$log" "MPPE 128-bit (stateless|stateful) compression enabled" "client: MPPE 128-bit enabled"
assert_log_contains "$E2E_SERVER_PPPD_LOG" "MPPE 128-bit (stateless|stateful) compression enabled" \
	"server pppd: MPPE 128-bit enabled"
check "client got an address from remoteip 198.19.0.10-40" \
	grep -Eq '^198\.19\.0\.([1-3][0-9]|40)$' <<<"$ip"
check "peer address is the server's localip" test "$(client_peer c1)" = "$TUNNEL_LOCAL_IP"

assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 20 "20 pings through the tunnel, no loss"

if tcp=$(iperf_tcp "$NS_CLI" "$TUNNEL_LOCAL_IP" 5); then
	assert_cmp "$tcp" ">" 0 "iperf3 TCP 5 s through the tunnel: $tcp Mbit/s"
else
	tap_not_ok "iperf3 TCP 5 s through the tunnel"
fi

if udp=$(iperf_udp "$NS_CLI" "$TUNNEL_LOCAL_IP" 4M 1200 5); then
	read -r udp_rate udp_loss udp_sent <<<"$udp"
	assert_cmp "$udp_rate" ">" 0 \
		"iperf3 UDP 1200 B at 4 Mbit/s: $udp_sent Mbit/s sent, $udp_rate Mbit/s received, $udp_loss% loss"
else
	tap_not_ok "iperf3 UDP 1200 B at 4 Mbit/s"
fi

# Context for the numbers above: the same TCP test over the bare veth link
# (no tunnel) shows how fast this VM, on this host, is right now.
if veth=$(iperf_tcp "$NS_CLI" "$SERVER_IP" 2); then
	diag "for comparison, plain veth TCP 2 s: $veth Mbit/s"
fi

# The tunnel must still be up after the load, and hang up cleanly.
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "tunnel still up after iperf3"
pid=$(client_pid c1)
client_down c1
check "client pppd exited after hang-up" eval '! proc_alive '"$pid"
assert_log_contains "$E2E_SERVER_PPPD_LOG" "(Connection terminated|Modem hangup|LCP terminated|Terminating on signal|peer requested termination|Hangup)" \
	"server pppd saw the hang-up"
check "no zombies left by the server, pppd or pptp" test "$(test_zombie_count)" = 0

e2e_done
