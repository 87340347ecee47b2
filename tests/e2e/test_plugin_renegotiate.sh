#!/bin/bash
# test_plugin_renegotiate.sh -- the per-peer MPPE policy holds through an
# LCP renegotiation (issue 24, item 1), on the real stack: our pptpd, the
# real pppd with the pptpd-policy plugin, and pptp-load as the client,
# which renegotiates LCP on the open link (RFC 1661: back to Establish,
# pppd authenticates again) as a second identity (pptp-load(1),
# --renegotiate).
#
#   scripts/e2e-run tests/e2e/test_plugin_renegotiate.sh
#   E2E_DATAPATH=kernel ...   on the kernel data path
#                              (test_plugin_renegotiate_kernel.sh)
#
# Policy file:   user alice require-128
#                user bob   allow
# pppd options:  require-mppe-128 (the default when no rule matches)
#
# 1. bob authenticates, and before any CCP of his renegotiates as alice
#    offering MPPE-128: up with MPPE-128 as alice, traffic passes (the
#    renegotiation itself works against pppd).
# 2. the same, but as alice the client refuses MPPE, once by refusing CCP
#    (LCP Protocol-Reject) and once inside CCP (an empty request, the
#    server's MPPE option Configure-Rejected): no IP may flow in
#    plaintext. The plugin refuses and names alice's rule; the client
#    never gets IPCP up; pptpd keeps no plaintext alice session (were one
#    reported up with mppe none, pptpd must have hung it up: its
#    backstop); pptpctl lists no session of alice's.
#    Before the plugin's fix the first identity's pending "allow" decision
#    survived the renegotiation and alice came up in plaintext.
# 3. bob refuses MPPE (allow: plaintext), and once IP is up renegotiates
#    LCP as himself, refusing MPPE again: IP comes up again and carries
#    traffic. Before the fix the plugin never started IP a second time.
# 4. (issue 24, item 4) bob's server pppd, IP up and the echo stream
#    through, is ended by SIGQUIT, which pppd handles with die(): the
#    session end pptpd logs carries the link's counters, not zeros.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

LOAD=$E2E_ROOT/client/pptp-load
ECHO=$E2E_ROOT/client/pptp-echo
PPTPCTL=${PPTPCTL:-$E2E_ROOT/ctl/pptpctl}
# A run of pptp-load: its deadline (s), and one echo stream of 20
# datagrams; the first datagram after IPCP opens may reach the server's
# ppp interface before its pppd has configured it (test_load_windows.sh),
# so one may be lost.
DEADLINE_S=40
ECHO_SENT_MIN=18
ECHO_LOSS_MAX=1

e2e_init
netns_up
cat >"$E2E_DIR/pptpd-peers" <<'EOF'
user alice require-128
user bob   allow
EOF
write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so" \
	"peers $E2E_DIR/pptpd-peers"
server_start "$PPTPD"
if [ "${E2E_DATAPATH:-}" = kernel ]; then
	assert_log_contains "$E2E_SERVER_LOG" "data path: kernel PPTP channel" \
		"the calls ride the kernel's PPTP channel (datapath kernel)"
fi
ip netns exec "$NS_SRV" "$ECHO" --port 9000 >"$E2E_DIR/echo.log" 2>&1 &

# load_start NAME ARGS...: pptp-load (linux profile) in the client
# namespace, with the echo stream, in the background.
load_start() {
	local name=$1
	shift
	rm -f "$E2E_DIR/$name.json"
	ip netns exec "$NS_CLI" "$LOAD" --server "$SERVER_IP" --profile linux \
		--deadline "$DEADLINE_S" --json "$E2E_DIR/$name.json" \
		--stream 200,10pps,2,echo --target "$TUNNEL_LOCAL_IP:9000" "$@" \
		>"$E2E_DIR/$name.out" 2>&1 &
	LOAD_PID=$!
}

# load_wait NAME: its end, and its report, read from the JSON: UP (1 when
# the session came up, after the renegotiation), MPPE (bits), REASON,
# STEPS (the setup steps done, space-separated), ECHO_SENT and ECHO_BACK.
load_wait() {
	local name=$1 j=$E2E_DIR/$1.json
	wait "$LOAD_PID" || true
	sed 's/^/# /' "$E2E_DIR/$name.out"
	read -r UP MPPE REASON ECHO_SENT ECHO_BACK STEPS < <(python3 - "$j" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    j = {}
s = (j.get("session") or [{}])[0]
e = [x for x in j.get("streams", []) if x.get("direction") == "echo"]
e = e[0] if e else {}
# one word each for read: the reason may quote the server's message
print(j.get("up", 0), s.get("mppe_bits", "-"),
      s.get("reason", "no-report").replace(" ", "_"),
      e.get("sent", 0), e.get("received", 0),
      " ".join(s.get("steps_ms", {})) or "-")
PY
)
	diag "$name: up $UP mppe $MPPE reason $REASON echo $ECHO_BACK/$ECHO_SENT steps $STEPS"
}

# load NAME ARGS...: load_start, then load_wait.
load() {
	load_start "$@"
	load_wait "$1"
}

has_step() { [[ " $STEPS " == *" $1 "* ]]; }
echo_ok() {
	[ "$ECHO_SENT" -ge "$ECHO_SENT_MIN" ] &&
		[ "$ECHO_BACK" -ge $((ECHO_SENT - ECHO_LOSS_MAX)) ]
}

# pptpctl sessions: the lines of USER's sessions in $E2E_DIR/ctl.out.
ctl_sessions_of() {
	"$PPTPCTL" sessions >"$E2E_DIR/ctl.out" 2>&1 || true
	grep -E "^[0-9]+/[0-9]+ user $1 " "$E2E_DIR/ctl.out" || true
}

# count_log FILE REGEX: matching lines.
count_log() { grep -Ec -- "$2" "$1" || true; }

# ---- 1. bob, then alice with MPPE-128
load renego-128 --user bob --password "$(user_pass bob)" \
	--renegotiate auth --renegotiate-user alice \
	--renegotiate-password "$(user_pass alice)" --renegotiate-mppe 128
check "bob then alice (MPPE-128): LCP renegotiated and alice authenticated" \
	eval 'has_step renegotiate && has_step reauth'
check "bob then alice (MPPE-128): up with MPPE-128" \
	test "$UP:$MPPE" = 1:128
check "bob then alice (MPPE-128): echo traffic passes ($ECHO_BACK of $ECHO_SENT)" echo_ok
assert_log_contains "$E2E_SERVER_LOG" \
	'user alice authenticated, MPPE policy require-128 \([^)]*pptpd-peers:1\)' \
	"pptpd: alice's second authentication takes her rule"
assert_log_contains "$E2E_SERVER_LOG" \
	'session start: .* user alice .* mppe 128 .*policy require-128' \
	"pptpd: alice's session starts with MPPE-128"

# ---- 2. bob, then alice refusing MPPE: no plaintext IP
# alice_refused HOW DESC PLUGIN_LINE: bob renegotiates as alice with
# --renegotiate-mppe HOW (none: CCP Protocol-Rejected; refuse: CCP without
# MPPE, the server's MPPE option Configure-Rejected); the plugin's refusal
# is PLUGIN_LINE (a regex).
alice_refused() {
	local how=$1 desc="bob then alice ($2)" line=$3 plain0 hangups0 plain hangups
	cp "$E2E_SERVER_PPPD_LOG" "$E2E_DIR/server-pppd.before-$how.log"
	: >"$E2E_SERVER_PPPD_LOG"
	plain0=$(count_log "$E2E_SERVER_LOG" 'session start: .* user alice .* mppe none')
	hangups0=$(count_log "$E2E_SERVER_LOG" 'user alice is up without MPPE')
	load "renego-$how" --user bob --password "$(user_pass bob)" \
		--renegotiate auth --renegotiate-user alice \
		--renegotiate-password "$(user_pass alice)" --renegotiate-mppe "$how"
	check "$desc: LCP renegotiated and alice authenticated" \
		eval 'has_step renegotiate && has_step reauth'
	check "$desc: the client never got IP (reason $REASON)" test "$UP" = 0
	check "$desc: no datagram came back in plaintext" test "$ECHO_BACK" = 0
	assert_log_contains "$E2E_SERVER_PPPD_LOG" "$line" \
		"$desc: plugin refuses alice's plaintext, naming her rule"
	assert_log_lacks "$E2E_SERVER_PPPD_LOG" \
		'pptpd-policy: alice: .*continuing without MPPE' \
		"$desc: plugin does not fall back to plaintext for alice"
	# pptpd's backstop: an up report of alice's without MPPE is hung up
	# ("is up without MPPE") before it is logged as a session start.
	plain=$(($(count_log "$E2E_SERVER_LOG" 'session start: .* user alice .* mppe none') - plain0))
	hangups=$(($(count_log "$E2E_SERVER_LOG" 'user alice is up without MPPE') - hangups0))
	check "$desc: pptpd started no plaintext session of alice's (backstop hang-ups: $hangups)" \
		test "$plain" = 0
	check "$desc: pptpctl sessions lists no session of alice's" \
		test -z "$(ctl_sessions_of alice)"
}
alice_refused none "CCP refused" \
	'pptpd-policy: client does not do CCP, MPPE required by [^ ]*pptpd-peers:1 \(policy require-128\): disconnecting'
alice_refused refuse "CCP without MPPE" \
	'pptpd-policy: client refused MPPE, which [^ ]*pptpd-peers:1 requires \(policy require-128\): disconnecting'

# ---- 3. bob in plaintext renegotiates: IP again
cp "$E2E_SERVER_PPPD_LOG" "$E2E_DIR/server-pppd.2.log"
: >"$E2E_SERVER_PPPD_LOG"
load renego-allow --user bob --password "$(user_pass bob)" --mppe none \
	--renegotiate up
check "bob (allow, plaintext) renegotiates: LCP renegotiated and bob authenticated again" \
	eval 'has_step renegotiate && has_step reauth'
check "bob (allow, plaintext) renegotiates: up again without MPPE" \
	test "$UP:$MPPE" = 1:0
check "bob (allow, plaintext) renegotiates: echo traffic passes ($ECHO_BACK of $ECHO_SENT)" echo_ok
check "plugin fell back to plaintext for bob at each authentication" \
	test "$(count_log "$E2E_SERVER_PPPD_LOG" 'pptpd-policy: bob: .*policy allow .*continuing without MPPE')" -ge 2

# ---- 4. a pppd that dies through die() with IPCP up (issue 24, item 4):
# pppd's SIGQUIT handler calls die(), whose cleanup closes the ppp unit
# before the exit notifiers run; the counters must still reach pptpd.
cp "$E2E_SERVER_PPPD_LOG" "$E2E_DIR/server-pppd.3.log"
: >"$E2E_SERVER_PPPD_LOG"
starts0=$(count_log "$E2E_SERVER_LOG" 'session start: .* user bob ')
ends0=$(count_log "$E2E_SERVER_LOG" 'session end: .* user bob ')
load_start die --user bob --password "$(user_pass bob)" --mppe none --hold 30
for ((i = 0; i < DEADLINE_S * 5; i++)); do
	[ "$(count_log "$E2E_SERVER_LOG" 'session start: .* user bob ')" -gt "$starts0" ] && break
	e2e_sleep 0.2
done
e2e_sleep 4    # the echo stream's 2 s through the tunnel, and its answers
pppd_pid=
for c in $(children "$(server_pid)"); do
	read -r comm <"/proc/$c/comm" 2>/dev/null && [ "$comm" = pppd ] && pppd_pid=$c
done
diag "server pppd: ${pppd_pid:-none found}"
[ -n "$pppd_pid" ] && kill -QUIT "$pppd_pid"
load_wait die
for ((i = 0; i < 100; i++)); do
	[ "$(count_log "$E2E_SERVER_LOG" 'session end: .* user bob ')" -gt "$ends0" ] && break
	e2e_sleep 0.2
done
assert_log_contains "$E2E_SERVER_PPPD_LOG" 'Fatal signal 3' \
	"bob's pppd died through die() (SIGQUIT) with IPCP up"
end_line=$(grep -E 'session end: .* user bob ' "$E2E_SERVER_LOG" | tail -n 1)
diag "${end_line:-no session end}"
counted() {
	[[ $end_line =~ rx\ ([0-9]+)\ bytes\ ([0-9]+)\ packets\ tx\ ([0-9]+)\ bytes\ ([0-9]+)\ packets ]] &&
		[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -ge "$ECHO_SENT_MIN" ] &&
		[ "${BASH_REMATCH[3]}" -gt 0 ] && [ "${BASH_REMATCH[4]}" -ge "$ECHO_SENT_MIN" ]
}
check "pptpd logs the dead pppd's session end with its counters (the echo stream's datagrams)" counted

e2e_done
