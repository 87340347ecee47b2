#!/bin/bash
# test_multihome.sh -- a multi-homed server (issue 9, item 5): the server
# has a second address on the clients' link, `listen` is unset, and a
# client dials the second one. Routing toward the client would pick the
# first as the source; each call's GRE must leave from the address the
# client dialled (its control connection's local address), or pptp-linux
# and Windows drop it. On both data paths: the engine (IP_PKTINFO per
# datagram) and the kernel's PPTP channel (bound to that address).
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_multihome.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SECOND_IP=198.18.0.101
SNIFF_S=6

e2e_init
netns_up
# Secondary on br0: toward 198.18.0.0/24 the kernel's source is .1.
ip -n "$NS_SRV" addr add "$SECOND_IP/24" dev br0

# gre_sources NS SECONDS: "SOURCE COUNT" per source address of the GRE
# (PPTP, protocol 0x880b) that reached netns NS in that time.
gre_sources() {
	ip netns exec "$1" python3 - "$2" <<'PY'
import collections, socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_GRE)
s.settimeout(0.5)
seen = collections.Counter()
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    try:
        p = s.recv(65535)
    except socket.timeout:
        continue
    ihl = (p[0] & 15) * 4
    if len(p) >= ihl + 4 and struct.unpack("!H", p[ihl + 2:ihl + 4])[0] == 0x880B:
        seen[socket.inet_ntoa(p[12:16])] += 1
for src, n in sorted(seen.items()):
    print(src, n)
PY
}

for dp in engine kernel; do
	E2E_DATAPATH=$dp write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"
	server_start "$PPTPD"
	ip=$(CLIENT_SERVER=$SECOND_IP client_up "m-$dp" alice "$(user_pass alice)")
	tap_ok "$dp path: alice dialed $SECOND_IP (the server's second address): tunnel $ip"
	gre_sources "$NS_CLI" "$SNIFF_S" >"$E2E_DIR/sources-$dp" &
	sniffer=$!
	e2e_sleep 1
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 10 "$dp path: 10 pings through the tunnel, no loss"
	tcp=$(iperf_tcp "$NS_CLI" "$TUNNEL_LOCAL_IP" 3)
	assert_cmp "$tcp" ">" 0.2 "$dp path: iperf3 TCP 3 s through the tunnel: $tcp Mbit/s"
	wait "$sniffer"
	diag "$dp path: GRE sources seen by the client: $(tr '\n' ' ' <"$E2E_DIR/sources-$dp")"
	check "$dp path: the client got GRE from $SECOND_IP" \
		grep -q "^${SECOND_IP//./\\.} [1-9]" "$E2E_DIR/sources-$dp"
	check "$dp path: and none from any other address" \
		test "$(grep -vc "^${SECOND_IP//./\\.} " "$E2E_DIR/sources-$dp")" = 0
	client_down "m-$dp"
	server_stop
done

e2e_done
