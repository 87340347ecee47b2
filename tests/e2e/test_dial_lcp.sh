#!/bin/bash
# test_dial_lcp.sh -- every LCP Configure-Request the client puts on the
# wire reaches the server's pppd (issue 9, item 4). The client sends its
# first one as soon as it has the Outgoing-Call-Reply, before the server's
# pppd runs; one lost costs the client its LCP restart timer (3 s by
# default, as Windows has it) on every dial-in. The engine holds it until
# pppd has taken the pty; on the kernel path pptpd binds and connects the
# call's PPTP socket before it answers, so the kernel queues the request on
# the channel for pppd.
#
# Counted on the wire (wire_log.py on the server's bridge) against the
# server pppd's log: the client's own pppd may have sent more before its
# call was up, which never reached the wire.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_dial_lcp.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init
netns_up
wire=$E2E_DIR/wire.log
ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/wire_log.py" br0 "$wire" \
	"$E2E_DIR/wire.ready" &
for ((i = 0; i < 300; i++)); do [ -e "$E2E_DIR/wire.ready" ] && break; e2e_sleep 0.1; done
[ -e "$E2E_DIR/wire.ready" ] || { echo "wire_log.py did not start" >&2; exit 1; }

for dp in engine kernel; do
	E2E_DATAPATH=$dp write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"
	: >"$E2E_SERVER_PPPD_LOG"
	server_start "$PPTPD"
	t0=$EPOCHREALTIME
	ip=$(client_up "d-$dp" alice "$(user_pass alice)" lcp-restart 3)
	t1=$EPOCHREALTIME
	tap_ok "$dp path: alice dialed in with a 3 s LCP restart timer: tunnel $ip after $(client_dial_time "d-$dp") s"
	on_wire=$(awk -v t0="$t0" -v t1="$t1" '$1 >= t0 && $1 <= t1 &&
		$2 == "198.18.0.2>198.18.0.1" && $7 == "LCP" && $8 == "ConfReq" &&
		$9 == "id=1"' "$wire" | wc -l)
	rcvd=$(grep -c 'rcvd \[LCP ConfReq id=0x1 ' "$E2E_SERVER_PPPD_LOG" || true)
	check "$dp path: each of the client's first LCP requests on the wire reached the server's pppd ($on_wire on the wire, $rcvd received)" \
		test "$on_wire" -ge 1 -a "$rcvd" = "$on_wire"
	if [ "$dp" = kernel ]; then
		assert_log_contains "$E2E_SERVER_PPPD_LOG" "pptpd-policy: kernel PPTP channel [0-9]+: call [0-9]+ at 198\.18\.0\.1 to call [0-9]+ at 198\.18\.0\.2 \(socket from pptpd\)" \
			"kernel path: pppd took the channel socket pptpd had connected"
	fi
	client_down "d-$dp"
	server_stop
done

e2e_done
