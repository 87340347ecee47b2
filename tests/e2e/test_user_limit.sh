#!/bin/bash
# test_user_limit.sh -- sessions-per-user (issue 20, item 3): one user, two
# logins from two hosts, with real pppd, the plugin and pptp-linux.
#
#   scripts/e2e-run tests/e2e/test_user_limit.sh
#
# What a user checks: with `sessions-per-user 1` (deny, the default action)
# alice's second login is refused, her client is told "Session limit
# reached", and her first session goes on passing traffic; with
# `sessions-per-user-action replace` the second login comes up and the first
# is ended, its client told "Replaced by a newer session"; another user is
# never counted against her; without the setting both logins come up.
# (RADIUS' Port-Limit, the same limit per user: test_daemon and the plugin
# harness.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# A refused login fails within seconds; no need to wait the default minute.
E2E_DIAL_TIMEOUT=${E2E_DIAL_TIMEOUT:-20}

# dial NAME USER [NS]: the tunnel address, or return 1.
dial() {
	CLIENT_NS=${3:-$NS_CLI} client_up "$1" "$2" "$(user_pass "$2")"
}

# wait_gone NAME: until client NAME's pppd has exited (20 s); 1 if not.
wait_gone() {
	local pid
	read -r pid <"$E2E_DIR/clients/$1/pid" || return 0
	for _ in $(seq 100); do proc_alive "$pid" || return 0; e2e_sleep 0.2; done
	return 1
}

assert_tunnel_ping() {
	local loss
	loss=$(ping_loss "$(client_ns "$1")" "$TUNNEL_LOCAL_IP" "$2" "$(client_ifname "$1")")
	if [ "$loss" = 0 ]; then tap_ok "$3"; else tap_not_ok "$3 ($loss% loss)"; fi
	return 0
}

e2e_init
netns_up
PLUGIN="plugin $E2E_ROOT/plugin/pptpd-policy.so"

# ---- deny
write_server_conf "$PLUGIN" "sessions-per-user 1"
server_start "$PPTPD"
tap_ok "pptpd starts with sessions-per-user 1 (deny)"
if ip1=$(dial d1 alice); then
	tap_ok "alice's first login: $ip1"
else
	tap_not_ok "alice's first login"
fi
if dial d2 alice "$NS_CLI2" >/dev/null 2>"$E2E_DIR/d2.err"; then
	tap_not_ok "alice's second login, from another host, is refused (it came up)"
else
	tap_ok "alice's second login, from another host, is refused"
fi
wait_gone d2 || true
assert_log_contains "$E2E_SERVER_LOG" 'user alice already holds 1 session\(s\), the limit \(sessions-per-user\): hanging up the new one' \
	"the server logs why: the limit, sessions-per-user"
assert_log_contains "$(client_log d2)" 'LCP terminated by peer \(Session limit reached\)' \
	"the second client's pppd is told why: LCP terminated by peer (Session limit reached)"
assert_tunnel_ping d1 10 "alice's first session still passes 10 pings"
if ipb=$(dial d3 bob "$NS_CLI2"); then
	tap_ok "bob, from the second host, is not counted against alice: $ipb"
else
	tap_not_ok "bob, from the second host, is not counted against alice"
fi
client_down d3
client_down d1
server_stop

# ---- replace
write_server_conf "$PLUGIN" "sessions-per-user 1" "sessions-per-user-action replace"
server_start "$PPTPD"
tap_ok "pptpd starts with sessions-per-user 1, sessions-per-user-action replace"
r1=$(dial r1 alice) || true
if r2=$(dial r2 alice "$NS_CLI2"); then
	tap_ok "alice's second login comes up: $r2"
	assert_tunnel_ping r2 10 "the new session passes 10 pings"
else
	tap_not_ok "alice's second login comes up"
fi
if wait_gone r1; then
	tap_ok "alice's first session ($r1) is ended"
else
	tap_not_ok "alice's first session ($r1) is ended (its pppd still runs)"
fi
assert_log_contains "$E2E_SERVER_LOG" "user alice's session replaced by call " \
	"the server logs the replacement"
assert_log_contains "$(client_log r1)" 'LCP terminated by peer \(Replaced by a newer session\)' \
	"the first client's pppd is told why: LCP terminated by peer (Replaced by a newer session)"
client_down r2
server_stop

# ---- no limit: both logins come up
write_server_conf "$PLUGIN"
server_start "$PPTPD"
if n1=$(dial n1 alice) && n2=$(dial n2 alice "$NS_CLI2"); then
	tap_ok "without sessions-per-user alice holds two sessions: $n1, $n2"
	assert_tunnel_ping n1 5 "the first passes 5 pings"
	assert_tunnel_ping n2 5 "the second passes 5 pings"
else
	tap_not_ok "without sessions-per-user alice holds two sessions"
fi
client_down n1
client_down n2

e2e_done
