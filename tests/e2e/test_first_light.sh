#!/bin/bash
# test_first_light.sh -- our pptpd end to end with the real stack: the
# pptp-linux client under pppd (MPPE-128 required) dials our daemon, which
# runs the real pppd (MS-CHAPv2 + MPPE-128 required) on a pty and carries
# the frames over our GRE engine.
#
#   scripts/e2e-run tests/e2e/test_first_light.sh
#   E2E_DATAPATH=kernel ... (test_first_light_kernel.sh): the same on the
#   kernel's PPTP channel (`datapath kernel`): pppd without a pty, the
#   plugin holding the channel, our engine sending nothing for the call
#
# What a user checks: the session is encrypted, traffic passes without loss,
# two clients get different addresses, deliberate reordering by the client
# does not lose packets, and dialling in and out 20 times leaves no pppd, no
# zombie, no leaked descriptor and every address back in the pool.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CYCLES=${FIRST_LIGHT_CYCLES:-20}
DATAPATH=${E2E_DATAPATH:-engine}
PPTPCTL=${PPTPCTL:-$E2E_ROOT/ctl/pptpctl}

# engine_gre FIELD: a number from pptpctl status's "gre:" line (what the
# engine received and sent over its raw socket).
engine_gre() {
	"$PPTPCTL" status | sed -n "s/^gre:.* $1 \([0-9]*\).*/\1/p"
}

e2e_init
netns_up
write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"
server_start "$PPTPD"
tap_ok "pptpd listens on 198.18.0.1:1723"

# ---- one client: encryption, pings, iperf3
ip=$(client_up c1 alice "$(user_pass alice)")
tap_ok "alice dialed in: tunnel $ip, dial time $(client_dial_time c1) s"
assert_log_contains "$(client_log c1)" "MPPE 128-bit (stateless|stateful) compression enabled" \
	"client log: MPPE 128-bit"
assert_log_contains "$E2E_SERVER_PPPD_LOG" "MPPE 128-bit (stateless|stateful) compression enabled" \
	"server pppd: MPPE 128-bit"
assert_log_contains "$E2E_SERVER_LOG" "session start: call [0-9]+/[0-9]+ user alice client 198\.18\.0\.2 tunnel $ip mppe 128" \
	"pptpd logs the session start with user, client, tunnel address and MPPE"
if [ "$DATAPATH" = kernel ]; then
	assert_log_contains "$E2E_SERVER_LOG" "data path: kernel PPTP channel with its GRE guard \(datapath kernel\)" \
		"pptpd logs its data path once at startup: the kernel's, with its GRE guard"
	kid=$(server_pppds | head -n 1)
	check "server pppd $kid has no pty, and pptpd-kernel on its command line" \
		pppd_on_kernel_path "$kid"
	assert_log_contains "$E2E_SERVER_PPPD_LOG" "pptpd-policy: kernel PPTP channel [0-9]+: call [0-9]+ at 198\.18\.0\.1 to call [0-9]+ at 198\.18\.0\.2 \(socket from pptpd\)" \
		"server pppd: the plugin took the kernel's channel, bound and connected by pptpd"
	assert_log_contains "$E2E_SERVER_LOG" "call [0-9]+/[0-9]+ 198\.18\.0\.2:[0-9]+: started pppd [0-9]+ for $ip \(kernel data path\)" \
		"pptpd logs the call as on the kernel data path"
else
	assert_log_contains "$E2E_SERVER_LOG" "data path: engine" \
		"pptpd logs its data path once at startup: the engine"
fi
tx0=$(engine_gre tx) unknown0=$(engine_gre unknown-call)
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 20 "20 pings through the tunnel, no loss"

tcp=$(iperf_tcp "$NS_CLI" "$TUNNEL_LOCAL_IP" 5)
assert_cmp "$tcp" ">" 0.5 "iperf3 TCP 5 s: $tcp Mbit/s"
# The sanitizer build checks memory safety, not speed: ASan makes the daemon
# several times slower, so it is offered half the rate.
udp_rate=4M
[ "${SANITIZE:-0}" = 1 ] && udp_rate=2M
# The sniffer (engine path only): on the kernel path its raw socket reads
# sequence numbers that do not match what the ppp units counted (1066
# packets seen, 23 distinct numbers, every one of 1739 delivered), and a
# python process reading every packet takes CPU from pptp-linux.
sniffer=
if [ "$DATAPATH" != kernel ]; then
	ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/gre_sniff.py" 10 >"$E2E_DIR/sniff-4m" &
	sniffer=$!
	sleep 2
fi
udp_drops() { ip netns exec "$NS_SRV" nstat -asz UdpRcvbufErrors | awk '/UdpRcvbufErrors/ { print $2 }'; }
# ppp_packets NS IFNAME rx|tx: packets through a ppp unit (/proc/net/dev).
ppp_packets() {
	ip netns exec "$1" awk -v dev="$2" -v dir="$3" '{ sub(/:/, " ") }
		$1 == dev { print (dir == "rx" ? $3 : $11) }' /proc/net/dev
}
# Datagrams the client's own ppp unit dropped before pptp-linux read them.
qdisc_drops() { tc -n "$NS_CLI" -s qdisc show dev "$1" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n 1; }
cif=$(client_ifname c1)
sif=$(ip -n "$NS_SRV" -o link show type ppp | awk -F': ' '{ print $2; exit }')
drops0=$(udp_drops) ctx0=$(ppp_packets "$NS_CLI" "$cif" tx) srx0=$(ppp_packets "$NS_SRV" "$sif" rx)
qd0=$(qdisc_drops "$cif")
read -r rate loss _ <<<"$(iperf_udp "$NS_CLI" "$TUNNEL_LOCAL_IP" "$udp_rate" 1200 5)"
if [ -n "$sniffer" ]; then
	wait "$sniffer"
	diag "UDP $udp_rate, GRE seen by the server: $(cat "$E2E_DIR/sniff-4m")"
fi
drops1=$(udp_drops) ctx1=$(ppp_packets "$NS_CLI" "$cif" tx) srx1=$(ppp_packets "$NS_SRV" "$sif" rx)
qd1=$(qdisc_drops "$cif")
diag "UDP $udp_rate: client ppp tx $ctx0 -> $ctx1, client qdisc drops $qd0 -> $qd1, server ppp rx $srx0 -> $srx1, server UdpRcvbufErrors $drops0 -> $drops1"
sent=$((ctx1 - ctx0))
through=$((sent - (srx1 - srx0)))
through_pct=$(awk -v l="$through" -v n="$sent" 'BEGIN { printf "%.2f", n ? l * 100 / n : 100 }')
# What the data path answers for: every packet the client's ppp unit handed
# to pptp-linux came out of the server's ppp unit.
assert_cmp "$through_pct" "<" 1 "UDP $udp_rate through the data path: $through of $sent packets the client's ppp unit sent never came out of the server's ($through_pct %, < 1 %; then $((drops1 - drops0)) found iperf3's socket buffer full)"
# End to end, iperf3 also counts what the client's own ppp queue (fq_codel,
# 5 ms target) dropped before pptp-linux, a userspace process on a pty
# sharing the VM's CPUs with everything else, read it, and what iperf3's
# server, starved of CPU, left to overflow its socket buffer. Seen in the
# VM on a loaded host, kernel path: 17.1 % end to end = exactly the client
# queue's 356 drops, 0 of 1739 lost on the data path; another run 15.4 % =
# 169 client queue drops + 22 socket buffer drops, 0 of 1085 lost on the
# data path; engine path (Debian 13, two other VMs on the host): 18.3 % =
# the client queue's 339 drops, 0 lost on the data path. They follow the
# host's load, not the server: the check is that nothing beyond them was
# lost (doc/kernel-path.md, "How to read the in-VM table").
read -r isent ilost < <(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]; r=e.get("sum_received", e["sum"]); print(e.get("sum_sent", e["sum"]).get("packets", r["packets"]), r["lost_packets"])' "$(cat "$E2E_DIR/iperf-last")")
beyond=$((ilost - (qd1 - qd0) - (drops1 - drops0)))
[ "$beyond" -lt 0 ] && beyond=0
beyond_pct=$(awk -v l="$beyond" -v n="$isent" 'BEGIN { printf "%.2f", n ? l * 100 / n : 100 }')
assert_cmp "$beyond_pct" "<" 1 "$DATAPATH path: iperf3 UDP 1200 B at ${udp_rate}bit/s: $rate Mbit/s, $loss % lost end to end, $beyond_pct % beyond the $((qd1 - qd0)) the client's own ppp queue dropped and the $((drops1 - drops0)) iperf3's full socket buffer did (< 1 %)"
tx1=$(engine_gre tx) unknown1=$(engine_gre unknown-call) rx1=$(engine_gre rx)
diag "engine's raw socket: rx $rx1, tx $tx0 -> $tx1, unknown-call $unknown0 -> $unknown1"
if [ "$DATAPATH" = kernel ]; then
	# The raw socket takes in nothing on the kernel path (a filter): the
	# engine neither answers the call's GRE nor counts it as a stranger's.
	check "kernel path: the engine sent no GRE for the call (tx $tx0 -> $tx1)" \
		test "$tx1" = "$tx0"
	check "kernel path: the engine took none of it for an unknown call ($unknown0 -> $unknown1)" \
		test "$unknown1" = "$unknown0"
	check "kernel path: no engine log line about the call's GRE" \
		eval '! grep -q "from 198.18.0.2 call" "$E2E_SERVER_LOG"'
else
	# Its acks for the stream: hundreds even when the client, starved of
	# CPU, sent a third of it; the kernel path's raw socket sends none.
	check "engine path: the engine carried the traffic (tx $tx0 -> $tx1)" \
		test "$tx1" -gt "$((tx0 + 200))"
fi

# ---- a second client at the same time
ip2=$(CLIENT_NS=$NS_CLI2 client_up c2 bob "$(user_pass bob)")
check "two clients get different addresses ($ip, $ip2)" test "$ip" != "$ip2"
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "client 1 passes traffic while client 2 is up"
assert_ping "$NS_CLI2" "$TUNNEL_LOCAL_IP" 5 "client 2 passes traffic"
read -r rate loss _ <<<"$(iperf_udp "$NS_CLI2" "$TUNNEL_LOCAL_IP" 2M 1200 3)"
assert_cmp "$loss" "<" 1 "client 2 UDP 2 Mbit/s: $loss % loss"
client_down c2
client_down c1

# ---- pptp-linux's deliberate reordering (test types 1, 2, 3)
# The kernel path drops a packet older than the last one it took (no
# reorder buffer): the call still carries traffic, with what came out of
# order lost (pptpd.conf(5), datapath).
reorder_kernel() {
	local t=$1 ipt rate loss
	ipt=$(PPTP_ARGS="--test-type $t --test-rate 50" client_up "t$t" alice "$(user_pass alice)")
	read -r rate loss _ <<<"$(iperf_udp "$NS_CLI" "$TUNNEL_LOCAL_IP" 1M 1200 3)"
	client_down "t$t"
	assert_cmp "$loss" "<" 30 "kernel path, pptp --test-type $t: UDP through $ipt, $rate Mbit/s, $loss % loss (reordered packets dropped)"
}

# pptp(8): types 2 and 3 hold ten packets, so a test every 50 packets keeps
# the reorderings apart (below ten they are "undefined"). pptp-linux 1.10
# itself never sends one packet of each type-3 reordering (seen on the wire
# here, and the ones it still holds when the stream stops never go out), so
# the check is that every packet that reached the server went through: the
# server's "lost" equals what never arrived and nothing arrived too late.
for t in 1 2 3; do
	if [ "$DATAPATH" = kernel ]; then
		reorder_kernel "$t"
		continue
	fi
	ipt=$(PPTP_ARGS="--test-type $t --test-rate 50" client_up "t$t" alice "$(user_pass alice)")
	ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/gre_sniff.py" 9 >"$E2E_DIR/sniff-$t" &
	sniffer=$!
	sleep 2
	read -r rate loss _ <<<"$(iperf_udp "$NS_CLI" "$TUNNEL_LOCAL_IP" 1M 1200 3)"
	iperf_lost=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["end"]; print(e.get("sum_received", e["sum"]).get("lost_packets", e["sum"]["lost_packets"]))' "$(cat "$E2E_DIR/iperf-last")")
	wait "$sniffer"
	client_down "t$t"
	wait_for_log "$E2E_SERVER_LOG" "call .*ended after" 10 || true
	ended=$(grep 'ended after' "$E2E_SERVER_LOG" | tail -n 1)
	wire=$(awk '{ print $10 }' "$E2E_DIR/sniff-$t")
	lost=$(sed -n 's/.* lost \([0-9]*\) .*/\1/p' <<<"$ended")
	stale=$(sed -n 's/.* stale \([0-9]*\) .*/\1/p' <<<"$ended")
	diag "type $t: on the wire: $(cat "$E2E_DIR/sniff-$t")"
	diag "type $t: $ended"
	check "pptp --test-type $t: UDP through $ipt, $loss % loss; every packet that reached the server delivered (server lost $lost = never sent $wire, stale $stale; iperf3 lost $iperf_lost)" \
		test "$lost" = "$wire" -a "$stale" = 0
	if [ "$t" != 3 ]; then
		check "pptp --test-type $t: no packet missing on the wire, so no loss at all" \
			test "$wire" = 0 -a "$iperf_lost" = 0
	fi
done

# ---- dial / hang-up cycles leave nothing behind
# The baseline once the calls before are gone: an ending call still holds
# its report channel until its pppd is reaped.
for _ in $(seq 50); do [ "$(server_children)" -eq 0 ] && break; sleep 0.2; done
sleep 1
fds0=$(fd_count "$(server_worker)") mfds0=$(fd_count "$(server_pid)")
status0=$(status_line)
diag "before cycles: $fds0 fds; $status0"
for i in $(seq "$CYCLES"); do
	client_up "cy$i" alice "$(user_pass alice)" >/dev/null
	client_down "cy$i"
done
for _ in $(seq 50); do [ "$(server_children)" -eq 0 ] && break; sleep 0.2; done
fds1=$(fd_count "$(server_worker)") mfds1=$(fd_count "$(server_pid)")
status1=$(status_line)
diag "after $CYCLES cycles: $fds1 fds; $status1"
check "$CYCLES dial/hang-up cycles: no pppd left under pptpd" test "$(server_children)" -eq 0
check "$CYCLES cycles: no zombie" test "$(zombie_count)" = 0
check "$CYCLES cycles: pptpd has the same $fds0 descriptors ($fds1)" test "$fds1" -eq "$fds0"
if [ "${E2E_PRIVSEP:-yes}" = yes ]; then
	check "$CYCLES cycles: its monitor has the same $mfds0 descriptors ($mfds1)" test "$mfds1" -eq "$mfds0"
fi
check "$CYCLES cycles: every address back in the pool" \
	grep -Eq '0 calls active, 0 ending, pool 31 of 31 free' <<<"$status1"
assert_log_contains "$E2E_SERVER_LOG" "session end: call [0-9]+/[0-9]+ user alice client 198\.18\.0\.2 tunnel 198\.19\.0\.[0-9]+ mppe 128 duration [0-9]+ s rx [1-9][0-9]* bytes" \
	"pptpd logs the session end with duration and byte counts"

# ---- clean shutdown: every pppd stopped, exit status 0
pid=$(server_pid)
kill -TERM "$pid"
for _ in $(seq 50); do proc_alive "$pid" || break; sleep 0.2; done
check "pptpd exits on SIGTERM" eval '! proc_alive '"$pid"

e2e_done
