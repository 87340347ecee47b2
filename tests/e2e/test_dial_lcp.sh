#!/bin/bash
# test_dial_lcp.sh -- the client's first LCP Configure-Request reaches the
# server's pppd (issue 9, item 4): the client sends it as soon as it has
# the Outgoing-Call-Reply, before the server's pppd runs. Lost, it costs
# the client its LCP restart timer (3 s by default, as Windows has it) on
# every dial-in. The engine holds it until pppd has taken the pty; on the
# kernel path pptpd binds and connects the call's PPTP socket before it
# answers, so the kernel queues the request on the channel for pppd.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_dial_lcp.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# sent_confreq LOG: how often the client sent its first LCP request.
sent_confreq() { grep -c 'sent \[LCP ConfReq id=0x1 ' "$1" || true; }

e2e_init
netns_up
for dp in engine kernel; do
	E2E_DATAPATH=$dp write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"
	: >"$E2E_SERVER_PPPD_LOG"
	server_start "$PPTPD"
	ip=$(client_up "d-$dp" alice "$(user_pass alice)" lcp-restart 3)
	tap_ok "$dp path: alice dialed in with a 3 s LCP restart timer: tunnel $ip after $(client_dial_time "d-$dp") s"
	n=$(sent_confreq "$(client_log "d-$dp")")
	check "$dp path: the client sent its first LCP request once, not again after 3 s (sent $n times)" \
		test "$n" = 1
	assert_log_contains "$E2E_SERVER_PPPD_LOG" 'rcvd \[LCP ConfReq id=0x1 ' \
		"$dp path: the server's pppd received that first request"
	if [ "$dp" = kernel ]; then
		assert_log_contains "$E2E_SERVER_PPPD_LOG" "pptpd-policy: kernel PPTP channel [0-9]+: call [0-9]+ at 198\.18\.0\.1 to call [0-9]+ at 198\.18\.0\.2 \(socket from pptpd\)" \
			"kernel path: pppd took the channel socket pptpd had connected"
	fi
	client_down "d-$dp"
	server_stop
done

e2e_done
