#!/bin/bash
# test_reload.sh -- reload without dropping sessions (issue 10, part 3).
#
#   scripts/e2e-run tests/e2e/test_reload.sh
#
# What a user checks: alice's tunnel (from 198.18.0.2) pings the server
# while a SIGHUP changes the pool (198.19.0.10-40 to 198.19.0.50-60) and a
# limit (calls-per-client 32 to 4): not one ping is lost and her address
# stays; the log names both changes; bob (from 198.18.0.3) then gets an
# address from the new pool; a configuration with an error is refused with
# its file:line by SIGHUP and by `pptpctl reload` (exit 4), both sessions
# kept; `pptpctl reload` of a good one exits 0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PPTPCTL=${PPTPCTL:-$E2E_ROOT/ctl/pptpctl}
E2E_DIAL_TIMEOUT=${E2E_DIAL_TIMEOUT:-30}
NEW_RANGE=198.19.0.50-60
PLUGIN="plugin $E2E_ROOT/plugin/pptpd-policy.so"

ctl() {
	ctl_rc=0
	"$PPTPCTL" "$@" >"$E2E_DIR/ctl.out" 2>"$E2E_DIR/ctl.err" || ctl_rc=$?
}

# reload_wait N: until the server has logged N reload outcomes (10 s).
reload_outcomes() {
	grep -Ec 'reloaded |reload refused' "$E2E_SERVER_LOG" || true
}
reload_wait() {
	for _ in $(seq 50); do
		[ "$(reload_outcomes)" -ge "$1" ] && return 0
		e2e_sleep 0.2
	done
	return 1
}

e2e_init
netns_up
write_server_conf "$PLUGIN"
server_start "$PPTPD"
tap_ok "pptpd listens on 198.18.0.1:1723"

ipa=$(CLIENT_NS=$NS_CLI client_up a alice "$(user_pass alice)")
tap_ok "alice's tunnel up with $ipa"
pida=$(client_pid a)

# ---- a good reload while alice pings: the new pool and a new limit
ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 30 "$(client_ifname a)" >"$E2E_DIR/loss-a" &
pinger=$!
e2e_sleep 2
TUNNEL_REMOTE_RANGE=$NEW_RANGE write_server_conf "$PLUGIN" "calls-per-client 4"
kill -HUP "$(server_pid)"
check "the reload is done" reload_wait 1
wait "$pinger"
loss=$(cat "$E2E_DIR/loss-a")
check "30 pings across the reload: loss $loss %" test "$loss" = 0
assert_log_contains "$E2E_SERVER_LOG" \
	"reload: remoteip 198\.19\.0\.10-40 -> 198\.19\.0\.50-60" "the log names the pool change"
assert_log_contains "$E2E_SERVER_LOG" "reload: calls-per-client 32 -> 4" \
	"the log names the limit change"
assert_log_lacks "$E2E_SERVER_LOG" "reload refused" "the reload was not refused"
check "alice's pppd still runs" proc_alive "$pida"
ipa2=$(ip -n "$NS_CLI" -4 -o addr show dev "$(client_ifname a)" | awk '$3 == "inet" { print $4; exit }')
check "alice keeps her address ($ipa, now ${ipa2:-none})" test "$ipa2" = "$ipa"
assert_log_lacks "$E2E_SYSLOG" "Call disconnect notification received" \
	"no client got a Call-Disconnect-Notify"

ipb=$(CLIENT_NS=$NS_CLI2 client_up b bob "$(user_pass bob)")
check "bob gets an address from the new pool ($ipb)" test "$ipb" = 198.19.0.50
ctl status
check "status: calls-per-client 4, pool 10 of 11 free (alice's old address retired)" \
	sh -c "grep -q 'calls-per-client 4' '$E2E_DIR/ctl.out' && grep -Eq 'pool: +10 of 11 free' '$E2E_DIR/ctl.out'"

# ---- a broken configuration: refused, the running one stays
TUNNEL_REMOTE_RANGE=198.19.0.70-80 write_server_conf "$PLUGIN" "frobnicate 1"
kill -HUP "$(server_pid)"
check "the broken reload is answered" reload_wait 2
assert_log_contains "$E2E_SERVER_LOG" "pptpd\.conf:5: .*reload refused" \
	"SIGHUP: refused with pptpd.conf:5"
ctl reload
check "pptpctl reload of it: exit 4 (got $ctl_rc)" test "$ctl_rc" = 4
check "pptpctl prints the file:line" grep -q "pptpd.conf:5: " "$E2E_DIR/ctl.err"
assert_log_lacks "$E2E_SERVER_LOG" "reload: remoteip 198\.19\.0\.50-60 -> " \
	"the new pool was not taken"
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "alice's tunnel passes traffic"
assert_ping "$NS_CLI2" "$TUNNEL_LOCAL_IP" 5 "bob's tunnel passes traffic"
ctl sessions
check "both sessions kept" test "$(grep -c ' state up ' "$E2E_DIR/ctl.out")" = 2

TUNNEL_REMOTE_RANGE=$NEW_RANGE write_server_conf "$PLUGIN" "calls-per-client 4"
ctl reload
check "pptpctl reload of a good configuration: exit 0 (got $ctl_rc)" test "$ctl_rc" = 0
assert_log_contains "$E2E_SERVER_LOG" "reload: nothing changed" "nothing changed, and it says so"

client_down b
client_down a
e2e_done
