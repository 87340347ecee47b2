#!/bin/bash
# test_load_windows.sh -- pptp-load (our userspace client) against our
# pptpd with the real pppd behind it: the Windows profile through every
# step (SCCRP, OCRP, LCP, MS-CHAPv2, MPPE-128, IPCP with DNS, UDP echo both
# ways through the tunnel, teardown with Call-Disconnect-Notify and
# StopCCRP), then several sessions from a source range, the linux profile,
# and a refused password with its reason.
#
#   scripts/e2e-run tests/e2e/test_load_windows.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

LOAD=$E2E_ROOT/client/pptp-load
ECHO=$E2E_ROOT/client/pptp-echo
DNS1=198.18.99.53

e2e_init
netns_up
SERVER_PPPD_OPTS="ms-dns $DNS1" write_server_conf \
	"plugin $E2E_ROOT/plugin/pptpd-policy.so"
server_start "$PPTPD"
ip netns exec "$NS_SRV" "$ECHO" --port 9000 >"$E2E_DIR/echo.log" 2>&1 &

# jget FILE EXPR: a value from pptp-load's JSON (python3 expression on j)
jget() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- one Windows session: every step, echo both ways, clean teardown
J=$E2E_DIR/win.json
ip netns exec "$NS_CLI" "$LOAD" --server "$SERVER_IP" --user alice \
	--password "$(user_pass alice)" --profile windows --mppe 128 \
	--stream 200,20pps,3,echo --target "$TUNNEL_LOCAL_IP:9000" \
	--deadline 60 --json "$J" >"$E2E_DIR/win.out" 2>&1 || true
sed 's/^/# /' "$E2E_DIR/win.out"
check "windows: the session came up" [ "$(jget "$J" 'j["up"]')" = 1 ]
for step in lcp auth ccp ipcp; do
	check "windows: step $step done" \
		[ "$(jget "$J" "'$step' in j['session'][0]['steps_ms']")" = True ]
done
check "windows: MPPE 128-bit" [ "$(jget "$J" 'j["session"][0]["mppe_bits"]')" = 128 ]
check "windows: IPCP gave DNS $DNS1" \
	[ "$(jget "$J" 'j["session"][0].get("dns")')" = "$DNS1" ]
sent=$(jget "$J" 'j["streams"][0]["sent"]')
recv=$(jget "$J" 'j["streams"][0]["received"]')
check "windows: UDP echo through the tunnel: $recv of $sent back" \
	[ "$sent" -ge 50 ] && [ "$recv" -ge $((sent * 9 / 10)) ]
check "windows: RTT measured ($(jget "$J" 'j["streams"][0]["rtt"]["p50_ms"]') ms p50)" \
	[ "$(jget "$J" 'j["streams"][0]["rtt"]["count"] > 0')" = True ]
check "windows: teardown answered (CDN, then StopCCRP): reason ok" \
	[ "$(jget "$J" 'j["session"][0]["reason"]')" = ok ]
assert_log_contains "$E2E_SERVER_PPPD_LOG" "MPPE 128-bit stateless compression enabled" \
	"server pppd: MPPE 128-bit stateless"

# ---- three sessions from a source range
ip -n "$NS_CLI" addr add 198.18.0.20/24 dev eth0
ip -n "$NS_CLI" addr add 198.18.0.21/24 dev eth0
ip -n "$NS_CLI" addr add 198.18.0.22/24 dev eth0
J=$E2E_DIR/multi.json
ip netns exec "$NS_CLI" "$LOAD" --server "$SERVER_IP" --user bob \
	--password "$(user_pass bob)" --sessions 3 --rate 5 \
	--source 198.18.0.20-198.18.0.22 \
	--stream 100,10pps,2,echo --target "$TUNNEL_LOCAL_IP:9000" \
	--deadline 60 --json "$J" >"$E2E_DIR/multi.out" 2>&1 || true
sed 's/^/# /' "$E2E_DIR/multi.out"
check "3 sessions up from 198.18.0.20-22" [ "$(jget "$J" 'j["up"]')" = 3 ]
check "3 distinct tunnel addresses" \
	[ "$(jget "$J" 'len(set(s.get("address") for s in j["session"]))')" = 3 ]
check "3 distinct source addresses" \
	[ "$(jget "$J" 'len(set(s["source"] for s in j["session"]))')" = 3 ]

# ---- 20 idle sessions: all up; setup times and memory per idle session
# (a figure for the report, not a timed test; the pool holds 31 addresses)
J=$E2E_DIR/idle.json
ip netns exec "$NS_CLI" "$LOAD" --server "$SERVER_IP" --user eve \
	--password "$(user_pass eve)" --sessions 20 --rate 10 --hold 2 \
	--source 198.18.0.20-198.18.0.22 --deadline 90 --json "$J" \
	>"$E2E_DIR/idle.out" 2>&1 || true
sed 's/^/# /' "$E2E_DIR/idle.out"
check "20 sessions up, all torn down cleanly" \
	[ "$(jget "$J" 'j["up"] == 20 and all(s["reason"] == "ok" for s in j["session"])')" = True ]

# ---- the linux profile
J=$E2E_DIR/linux.json
ip netns exec "$NS_CLI" "$LOAD" --server "$SERVER_IP" --user carol \
	--password "$(user_pass carol)" --profile linux \
	--stream 100,10pps,2,echo --target "$TUNNEL_LOCAL_IP:9000" \
	--deadline 60 --json "$J" >"$E2E_DIR/linux.out" 2>&1 || true
sed 's/^/# /' "$E2E_DIR/linux.out"
check "linux profile: up, echo answered, clean teardown" \
	[ "$(jget "$J" 'j["up"] == 1 and j["streams"][0]["received"] > 0 and j["session"][0]["reason"] == "ok"')" = True ]

# ---- a wrong password: a reason, no hang
J=$E2E_DIR/badpw.json
ip netns exec "$NS_CLI" "$LOAD" --server "$SERVER_IP" --user dave \
	--password wrong --deadline 40 --json "$J" >"$E2E_DIR/badpw.out" 2>&1 || true
sed 's/^/# /' "$E2E_DIR/badpw.out"
check "wrong password: failed with reason ppp-auth-failed" \
	[ "$(jget "$J" 'j["failed_by_reason"].get("ppp-auth-failed", 0)')" = 1 ]

e2e_done
