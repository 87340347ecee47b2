#!/bin/bash
# test_mss.sh -- TCP MSS clamping (tcp-mss-adjust, issue 20, item 1) with
# real pppd, the plugin and pptp-linux.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_mss.sh
#
# A host on the server's LAN side (netns lan, 198.18.3.2, behind the server
# netns, which forwards) serves bulk TCP; its MTU is 1500, so its SYN-ACK
# offers MSS 1460. The server's pppd has `mtu 1400` (less MPPE's 4), the
# client's ppp interface keeps 1500: without clamping, the client's SYN
# offers more than the server's ppp interface carries, the LAN host sends
# full-size segments, the server answers each with ICMP "fragmentation
# needed", and the LAN host drops those (an nftables rule of the test in
# netns lan), so PMTU discovery cannot save the transfer: it stalls.
# With tcp-mss-adjust (yes, the default) the client sees a SYN-ACK MSS of
# at most the server's ppp MTU less 40, the LAN host sends at most that,
# and the transfer completes. pptpd's table, inet pptpd, holds one element
# for the session's interface, which goes with the session; the table goes
# with pptpd. A fixed `tcp-mss-adjust N`, and a reload that changes it, are
# checked on a live session. E2E_DATAPATH=kernel: the same on the kernel
# data path (test_mss_kernel.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

NS_LAN=${E2E_NS_PREFIX:-}lan
LAN_GW=198.18.3.1
LAN_HOST=198.18.3.2
PORT=5001
NBYTES=$((2 * 1024 * 1024))
# A clamped transfer takes a few seconds under TCG; a stalled one never
# ends, and is given this long.
FETCH_SECONDS=30
PROBE=$E2E_LIB_DIR/mss_probe.py

# lan_up: netns lan behind the server (its own link, forwarded by srv),
# dropping ICMP "fragmentation needed" addressed to it, with a counter.
lan_up() {
	ip netns del "$NS_LAN" 2>/dev/null || true
	ip netns add "$NS_LAN"
	echo "$NS_LAN" >>"$E2E_DIR/.netns"
	ip link add v-lan netns "$NS_SRV" type veth peer name eth0 netns "$NS_LAN"
	ip -n "$NS_SRV" -batch - <<-EOF
		addr add $LAN_GW/24 dev v-lan
		link set v-lan up
	EOF
	ip -n "$NS_LAN" -batch - <<-EOF
		link set lo up
		addr add $LAN_HOST/24 dev eth0
		link set eth0 up
		route add 198.19.0.0/16 via $LAN_GW
	EOF
	ip netns exec "$NS_SRV" sysctl -qw net.ipv4.ip_forward=1
	# No black-hole detection either: only the MSS can save the transfer.
	ip netns exec "$NS_LAN" sysctl -qw net.ipv4.tcp_mtu_probing=0
	ip netns exec "$NS_LAN" nft -f - <<-EOF
		table inet e2e {
			chain input {
				type filter hook input priority 0; policy accept;
				icmp type destination-unreachable icmp code frag-needed counter drop
			}
		}
	EOF
	: >"$E2E_DIR/lan.log"
	ip netns exec "$NS_LAN" python3 "$PROBE" serve "$LAN_HOST" "$PORT" \
		"$NBYTES" "$E2E_DIR/lan.log" >"$E2E_DIR/lan.out" 2>&1 &
	echo $! >"$E2E_DIR/lan.pid"
	for _ in $(seq 100); do
		pid_listening "$(cat "$E2E_DIR/lan.pid")" "$PORT" && return 0
		e2e_sleep 0.1
	done
	echo "e2e: the LAN host does not listen" >&2
	return 1
}

# frag_dropped: ICMP "fragmentation needed" the LAN host has dropped.
frag_dropped() {
	ip netns exec "$NS_LAN" nft list chain inet e2e input |
		sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'
}

# dial NAME: the client up, its route to the LAN through the tunnel.
dial() {
	client_up "$1" alice "$(user_pass alice)" >/dev/null || return 1
	ip -n "$NS_CLI" route add 198.18.3.0/24 dev "$(client_ifname "$1")"
}

# fetch NAME: "synack_mss=N bytes=N seconds=S" through client NAME.
fetch() {
	ip netns exec "$NS_CLI" python3 "$PROBE" fetch "$(client_ifname "$1")" \
		"$LAN_HOST" "$PORT" "$NBYTES" "$FETCH_SECONDS"
}
field() { sed -n "s/.*\\b$1=\\([0-9.]*\\).*/\\1/p" <<<"$2"; }

# srv_if: the server's ppp interface of the last session clamped (from
# pptpd's log line), srv_mtu IF: its MTU.
srv_if() {
	sed -n 's/.*TCP MSS clamped to [0-9]* on \([^ ]*\)$/\1/p' "$E2E_SERVER_LOG" |
		tail -n 1
}
srv_mtu() { ip -n "$NS_SRV" -o link show dev "$1" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }

# map_value IF: its element in table inet pptpd's map mss4 ("" if none).
map_value() {
	ip netns exec "$NS_SRV" nft list map inet pptpd mss4 2>/dev/null |
		sed -n "s/.*\"$1\" : \\([0-9]*\\).*/\\1/p"
}
table_there() { ip netns exec "$NS_SRV" nft list table inet pptpd >/dev/null 2>&1; }

e2e_init
netns_up
lan_up
PLUGIN="plugin $E2E_ROOT/plugin/pptpd-policy.so"
SERVER_PPPD_OPTS="mtu 1400"

# ---- tcp-mss-adjust yes (the default: not in pptpd.conf)
write_server_conf "$PLUGIN" "metrics-listen 127.0.0.1:9917"
server_start "$PPTPD"
assert_log_contains "$E2E_SERVER_LOG" 'TCP MSS clamping on: nftables table inet pptpd' \
	"pptpd logs that it clamps (tcp-mss-adjust yes by default)"
check "its table inet pptpd is in the server's netns" table_there
dial c1
if [ "${E2E_DATAPATH:-}" = kernel ]; then
	check "the session's pppd is on the kernel data path (no pty)" \
		pppd_on_kernel_path "$(server_pppds | head -n 1)"
fi
sif=$(srv_if)
mtu=$(srv_mtu "${sif:-none}")
cif=$(client_ifname c1)
cmtu=$(ip -n "$NS_CLI" -o link show dev "$cif" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
diag "server's $sif MTU $mtu, client's $cif MTU $cmtu"
want=$((${mtu:-0} - 40))
assert_cmp "${cmtu:-0}" ">" "${mtu:-0}" \
	"the client's ppp MTU ($cmtu) is above the server's ($mtu): without clamping its SYN offers too much"
assert_log_contains "$E2E_SERVER_LOG" "user alice: TCP MSS clamped to $want on $sif\$" \
	"pptpd logs the session's clamp: $want on $sif (its MTU $mtu less 40)"
assert_cmp "$(map_value "$sif")" "==" "$want" "table inet pptpd, map mss4: \"$sif\" : $want"
jm=$("$E2E_ROOT/ctl/pptpctl" sessions --json | python3 -c \
	'import json, sys; s = json.load(sys.stdin)[0]; print(s["ifname"], s["tcp_mss"])') || true
check "pptpctl sessions --json shows it: ifname $sif, tcp_mss $want (got: $jm)" test "$jm" = "$sif $want"
if ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/metrics_check.py" \
	http://127.0.0.1:9917/metrics pptpd_sessions_tcp_mss_clamped=1 \
	>"$E2E_DIR/metrics.out" 2>&1; then
	tap_ok "metrics: pptpd_sessions_tcp_mss_clamped 1"
else
	tap_not_ok "metrics: pptpd_sessions_tcp_mss_clamped 1"
	sed 's/^/#   /' "$E2E_DIR/metrics.out"
fi
out=$(fetch c1)
diag "fetch: $out; LAN host: $(tail -n 1 "$E2E_DIR/lan.log")"
smss=$(field synack_mss "$out")
assert_cmp "${smss:-0}" ">" 0 "the client sees the LAN host's SYN-ACK with an MSS option"
assert_cmp "${smss:-0}" "<=" "$want" \
	"the SYN-ACK's MSS, 1460 at the LAN host, reaches the client as $smss: at most $want"
pmss=$(sed -n 's/peer_mss=//p' "$E2E_DIR/lan.log" | tail -n 1)
assert_cmp "${pmss:-99999}" "<=" "$want" \
	"the LAN host sends segments of at most $want ($pmss): the client's SYN was clamped on its way in"
assert_cmp "$(field bytes "$out")" "==" "$NBYTES" \
	"bulk TCP from the LAN host to the client: all $NBYTES bytes in $(field seconds "$out") s, ICMP frag-needed dropped on the path"
client_down c1
for _ in $(seq 50); do [ -z "$(map_value "$sif")" ] && break; e2e_sleep 0.2; done
check "the session's end removes \"$sif\" from the map" test -z "$(map_value "$sif")"
server_stop
check "pptpd's exit deletes table inet pptpd" bash -c "! ip netns exec $NS_SRV nft list table inet pptpd >/dev/null 2>&1"

# ---- tcp-mss-adjust no: the same transfer stalls
write_server_conf "$PLUGIN" "tcp-mss-adjust no"
server_start "$PPTPD"
check "with tcp-mss-adjust no there is no table inet pptpd" bash -c "! ip netns exec $NS_SRV nft list table inet pptpd >/dev/null 2>&1"
dial n1
before=$(frag_dropped)
out=$(fetch n1)
after=$(frag_dropped)
diag "fetch: $out; LAN host: $(tail -n 1 "$E2E_DIR/lan.log"); frag-needed dropped: $before -> $after"
assert_cmp "$(field synack_mss "$out")" "==" 1460 \
	"without clamping the client sees the LAN host's MSS as it is: 1460"
assert_cmp "$(field bytes "$out")" "<" "$NBYTES" \
	"without clamping the bulk transfer stalls (got $(field bytes "$out") of $NBYTES bytes in $FETCH_SECONDS s)"
assert_cmp "${after:-0}" ">" "${before:-0}" \
	"the server's ICMP fragmentation-needed reached the LAN side and was dropped there"
client_down n1
server_stop

# ---- tcp-mss-adjust 1300, then a reload to yes on the live session
write_server_conf "$PLUGIN" "tcp-mss-adjust 1300"
server_start "$PPTPD"
dial f1
sif=$(srv_if)
mtu=$(srv_mtu "${sif:-none}")
assert_cmp "$(map_value "$sif")" "==" 1300 "tcp-mss-adjust 1300: \"$sif\" : 1300"
out=$(fetch f1)
assert_cmp "$(field synack_mss "$out")" "==" 1300 "the client sees MSS 1300"
assert_cmp "$(field bytes "$out")" "==" "$NBYTES" "and gets all $NBYTES bytes"
write_server_conf "$PLUGIN"
kill -HUP "$(server_pid)"
if wait_for_log "$E2E_SERVER_LOG" 'reload: tcp-mss-adjust 1300 -> yes' 20; then
	tap_ok "a reload to tcp-mss-adjust yes is logged"
else
	tap_not_ok "a reload to tcp-mss-adjust yes is logged"
fi
for _ in $(seq 50); do [ "$(map_value "$sif")" = $((mtu - 40)) ] && break; e2e_sleep 0.2; done
assert_cmp "$(map_value "$sif")" "==" $((mtu - 40)) \
	"the live session is clamped anew after the reload: \"$sif\" : $((mtu - 40))"
client_down f1
server_stop

e2e_done
