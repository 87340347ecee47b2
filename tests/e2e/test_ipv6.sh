#!/bin/bash
# test_ipv6.sh -- IPv6 inside the tunnel (ipv6-prefix-pool, issue 20, item
# 4) with real pppd (+ipv6, IPV6CP), the plugin and pptp-linux.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_ipv6.sh
#
# A host on the server's LAN side (netns lan6, 2001:db8:ff::2, behind the
# server netns, which forwards IPv6) answers pings. Two clients dial at
# once, each asking IPV6CP as Windows does: each must get a /64 of its own
# from the pool, announced by pptpd's Router Advertisements, form an
# address in it (SLAAC) and a default route, and reach the LAN host
# through the tunnel (accel-ppp's "only the first client gets IPv6").
# pptpctl, the metrics and the log show it; the route goes with the
# session, the /64 back to the pool. Without ipv6-prefix-pool pppd is not
# given +ipv6: the client's IPV6CP is refused and the session is IPv4
# only. A reload that adds the pool serves the next session. E2E_DATAPATH=
# kernel: the same on the kernel data path (test_ipv6_kernel.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

NS_LAN=${E2E_NS_PREFIX:-}lan6
LAN_GW=2001:db8:ff::1
LAN_HOST=2001:db8:ff::2
POOL=2001:db8:100::/56
POOL_RE='^2001:db8:100:[0-9a-f]*:'
METRICS=127.0.0.1:9918
# A client forms its address from the first advertisement: at IPV6CP's
# up, then 4 s and 8 s after (nd.h), so well within this under TCG.
ADDR_SECONDS=40

lan_up() {
	ip netns del "$NS_LAN" 2>/dev/null || true
	ip netns add "$NS_LAN"
	echo "$NS_LAN" >>"$E2E_DIR/.netns"
	ip link add v-lan6 netns "$NS_SRV" type veth peer name eth0 netns "$NS_LAN"
	ip -n "$NS_SRV" -batch - <<-EOF
		addr add $LAN_GW/64 dev v-lan6 nodad
		link set v-lan6 up
	EOF
	ip -n "$NS_LAN" -batch - <<-EOF
		link set lo up
		addr add $LAN_HOST/64 dev eth0 nodad
		link set eth0 up
		route add $POOL via $LAN_GW
	EOF
	ip netns exec "$NS_SRV" sysctl -qw net.ipv6.conf.all.forwarding=1
}

# dial NAME NS USER: a client asking IPV6CP (+ipv6), its addresses left
# to the server's advertisements.
dial() {
	CLIENT_NS=$2 client_up "$1" "$3" "$(user_pass "$3")" +ipv6 >/dev/null
}

# addr6 NAME: the global IPv6 address the client formed on its ppp link
# ("" while it has none).
addr6() {
	ip -n "$(client_ns "$1")" -6 -o addr show dev "$(client_ifname "$1")" \
		scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }'
}

wait_addr6() {
	local end=$((SECONDS + ADDR_SECONDS))
	while [ "$SECONDS" -lt "$end" ]; do
		[ -n "$(addr6 "$1")" ] && return 0
		e2e_sleep 0.5
	done
	return 1
}

# json_field NAME KEY: the session of client NAME (by its IPv4 tunnel
# address) in pptpctl sessions --json.
json_field() {
	"$E2E_ROOT/ctl/pptpctl" sessions --json | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    if s["tunnel"] == sys.argv[1]:
        print(s[sys.argv[2]])' "$(client_ip "$1")" "$2"
}

routes() { ip -n "$NS_SRV" -6 route show proto 173; }

metrics_has() {
	ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/metrics_check.py" \
		"http://$METRICS/metrics" "$@" >"$E2E_DIR/metrics.out" 2>&1
}

e2e_init
netns_up
lan_up
PLUGIN="plugin $E2E_ROOT/plugin/pptpd-policy.so"

# ---- two sessions, a /64 each
write_server_conf "$PLUGIN" "ipv6-prefix-pool $POOL" "metrics-listen $METRICS"
server_start "$PPTPD"
assert_log_lacks "$E2E_SERVER_LOG" 'IPv6 in the tunnel off' \
	"pptpd serves IPv6 in the tunnel (no 'IPv6 in the tunnel off')"
dial c1 "$NS_CLI" alice
dial c2 "$NS_CLI2" bob
if [ "${E2E_DATAPATH:-}" = kernel ]; then
	check "the sessions' pppd are on the kernel data path (no pty)" \
		pppd_on_kernel_path "$(server_pppds | head -n 1)"
fi
check "the server's pppd were given +ipv6" \
	bash -c "tr '\\0' ' ' </proc/$(server_pppds | head -n 1)/cmdline | grep -q -- '+ipv6'"
check "client 1 forms a global IPv6 address from the advertisement" wait_addr6 c1
check "client 2 forms one too" wait_addr6 c2
a1=$(addr6 c1) a2=$(addr6 c2)
p1=$(json_field c1 ipv6_prefix || true) p2=$(json_field c2 ipv6_prefix || true)
diag "client 1: $a1 in $p1; client 2: $a2 in $p2"
check "client 1's address ($a1) is in the pool $POOL" grep -Eq "$POOL_RE" <<<"$a1"
check "client 2's address ($a2) is in the pool" grep -Eq "$POOL_RE" <<<"$a2"
check "each session has a /64 of its own ($p1, $p2)" \
	bash -c "[ -n '$p1' ] && [ -n '$p2' ] && [ '$p1' != '$p2' ]"
check "client 1's address is in its session's /64" \
	python3 -c "import ipaddress, sys; sys.exit(ipaddress.ip_address('$a1') not in ipaddress.ip_network('$p1'))"
check "client 2's address is in its session's /64" \
	python3 -c "import ipaddress, sys; sys.exit(ipaddress.ip_address('$a2') not in ipaddress.ip_network('$p2'))"
u1=$(json_field c1 ipv6_up || true) u2=$(json_field c2 ipv6_up || true)
check "pptpctl sessions --json: ipv6_up true for both ($u1, $u2)" \
	test "$u1 $u2" = "True True"
check "the server routes both /64s to their ppp interfaces (proto 173)" \
	bash -c "[ \"\$(ip -n $NS_SRV -6 route show proto 173 | wc -l)\" = 2 ]"
check "client 1 has a default route from the advertisement" \
	bash -c "ip -n $NS_CLI -6 route show default | grep -q 'dev $(client_ifname c1)'"
for c in c1 c2; do
	if ip netns exec "$(client_ns $c)" ping -6 -c 3 -i 0.3 -W 5 "$LAN_HOST" \
		>"$E2E_DIR/ping-$c.out" 2>&1; then
		tap_ok "client $c reaches the LAN host $LAN_HOST over IPv6 through the tunnel"
	else
		tap_not_ok "client $c reaches the LAN host $LAN_HOST over IPv6 through the tunnel"
		sed 's/^/#   /' "$E2E_DIR/ping-$c.out"
	fi
done
assert_log_contains "$E2E_SERVER_LOG" "user alice: IPv6 up on ppp[0-9]*: $p1 routed and advertised" \
	"pptpd logs alice's IPv6: $p1"
assert_log_contains "$E2E_SERVER_LOG" "session start: call .* user alice .* ipv6 $p1 " \
	"the session start line names alice's /64"
out=$("$E2E_ROOT/ctl/pptpctl" show "$(json_field c1 id)" 2>&1 || true)
check "pptpctl show: ipv6 $p1 (routed and advertised)" \
	grep -q "^ipv6: *$p1 (routed and advertised)" <<<"$out"
check "pptpctl status: the IPv6 pool (254 of 256 /64s free)" \
	bash -c "'$E2E_ROOT/ctl/pptpctl' status | grep -q '^ipv6 pool: *254 of 256 /64s free'"
if metrics_has pptpd_ipv6_prefixes=256 pptpd_ipv6_prefixes_in_use=2 \
	pptpd_ipv6_sessions_up=2 pptpd_ipv6_router_advertisements_total\>1; then
	tap_ok "metrics: 256 prefixes, 2 in use, 2 sessions up, advertisements sent"
else
	tap_not_ok "metrics: 256 prefixes, 2 in use, 2 sessions up, advertisements sent"
	sed 's/^/#   /' "$E2E_DIR/metrics.out"
fi
client_down c1
for _ in $(seq 50); do [ "$(routes | wc -l)" = 1 ] && break; e2e_sleep 0.2; done
assert_log_contains "$E2E_SERVER_LOG" "session end: call .* user alice .* ipv6 $p1 " \
	"the session end line names alice's /64"
check "client 1's hang-up takes its route away, client 2's stays" \
	bash -c "[ \"\$(ip -n $NS_SRV -6 route show proto 173 | wc -l)\" = 1 ]"
if ip netns exec "$NS_CLI2" ping -6 -c 2 -i 0.3 -W 5 "$LAN_HOST" >/dev/null 2>&1; then
	tap_ok "client 2 still reaches the LAN host"
else
	tap_not_ok "client 2 still reaches the LAN host"
fi
for _ in $(seq 50); do metrics_has pptpd_ipv6_prefixes_in_use=1 && break; e2e_sleep 0.2; done
if metrics_has pptpd_ipv6_prefixes_in_use=1 pptpd_ipv6_sessions_up=1; then
	tap_ok "metrics: client 1's /64 back in the pool once its pppd is reaped"
else
	tap_not_ok "metrics: client 1's /64 back in the pool once its pppd is reaped"
	sed 's/^/#   /' "$E2E_DIR/metrics.out"
fi
client_down c2
server_stop
check "no route of ours left after pptpd stopped" test -z "$(routes)"

# ---- an admin's route to a /64 of the pool is not pptpd's to replace:
# the session that gets that /64 is not routed, the admin's route stays
ip -n "$NS_SRV" -6 route add 2001:db8:100::/64 dev lo
write_server_conf "$PLUGIN" "ipv6-prefix-pool $POOL"
server_start "$PPTPD"
dial r1 "$NS_CLI" alice
check "the session whose /64 has an admin's route is not routed: pptpd says why" \
	wait_for_log "$E2E_SERVER_LOG" "user alice: IPv6 not routed: route to ppp[0-9]*: a route to that /64 exists already" 20
check "the admin's route to 2001:db8:100::/64 is still there" \
	bash -c "ip -n $NS_SRV -6 route show 2001:db8:100::/64 | grep -q 'dev lo'"
client_down r1
server_stop
check "and still there after pptpd stopped" \
	bash -c "ip -n $NS_SRV -6 route show 2001:db8:100::/64 | grep -q 'dev lo'"
ip -n "$NS_SRV" -6 route del 2001:db8:100::/64 dev lo

# ---- no ipv6-prefix-pool: IPv4 only, then a reload adds the pool
write_server_conf "$PLUGIN"
server_start "$PPTPD"
dial n1 "$NS_CLI" alice
check "without a pool pppd is not given +ipv6" \
	bash -c "! tr '\\0' ' ' </proc/$(server_pppds | head -n 1)/cmdline | grep -q -- '+ipv6'"
e2e_sleep 3
check "and the client has no global IPv6 address" test -z "$(addr6 n1)"
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "the IPv4-only session passes traffic"
write_server_conf "$PLUGIN" "ipv6-prefix-pool $POOL"
kill -HUP "$(server_pid)"
if wait_for_log "$E2E_SERVER_LOG" "reload: ipv6-prefix-pool" 20; then
	tap_ok "a reload that adds ipv6-prefix-pool is logged"
else
	tap_not_ok "a reload that adds ipv6-prefix-pool is logged"
fi
dial n2 "$NS_CLI2" bob
check "the next session after the reload gets IPv6" wait_addr6 n2
client_down n1
client_down n2
server_stop

e2e_done
