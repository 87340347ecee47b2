#!/bin/bash
# test_radius_dae.sh -- RFC 5176 Disconnect-Requests end to end: pptpd
# with pppd's radius.so against a real FreeRADIUS 3.2 (lib.sh
# freeradius_start), real clients (pptp-linux + pppd), and FreeRADIUS's
# own radclient sending `disconnect` from the RADIUS server's netns to
# pptpd's UDP 3799 (radius-dae-listen, radius-dae-clients).
#
#   scripts/e2e-run tests/e2e/test_radius_dae.sh    (or run it directly)
#
# alice is hung up by User-Name, by Framed-IP-Address, and by
# Acct-Session-Id + User-Name; bob's session lives through all of it, a
# wrong secret and a flood of bad datagrams, and is hung up last.
# Then pptp-load's Windows profile logs in as alice: MS-CHAPv2 checked by
# FreeRADIUS, MPPE-128 keys from RADIUS.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
plugin=$root/plugin/pptpd-policy.so

if [ -z "${PPTPD_IN_VM:-}" ] && [ -z "${E2E_MNTNS:-}" ] && [ -z "${E2E_RADIUS_RUN:-}" ]; then
	make -s -C "$root/plugin" >/dev/null
	export E2E_RADIUS_RUN=1
	exec "$root/scripts/e2e-run" "$here/$(basename "$0")" "$@"
fi

. "$here/lib.sh"
command -v freeradius >/dev/null || { echo "e2e: freeradius not installed (scripts/packages.txt)" >&2; exit 1; }
command -v radclient >/dev/null || { echo "e2e: radclient not installed (freeradius-utils)" >&2; exit 1; }

e2e_init
netns_up

cat >"$E2E_DIR/users" <<'EOF'
alice	Cleartext-Password := "alicepass"
bob	Cleartext-Password := "bobpass"
EOF
freeradius_conf "$E2E_DIR/users"
freeradius_start

DAE_SECRET=dae-s3cret
printf '%s %s\n' "$RADIUS_IP" "$DAE_SECRET" >"$E2E_DIR/dae-clients"
chmod 600 "$E2E_DIR/dae-clients"
radius_client_conf "$E2E_DIR/radius" pptpd-1 "$SERVER_IP"
SERVER_PPPD_OPTS="plugin radius.so
radius-config-file $E2E_DIR/radius/radiusclient.conf
avpair NAS-IP-Address=$SERVER_IP"
write_server_conf "plugin $plugin" "radius-dae-listen $SERVER_IP" \
	"radius-dae-clients $E2E_DIR/dae-clients"
server_start

count() { grep -c -E -- "$1" "$E2E_SERVER_LOG" || true; }

# dm SECRET ATTRS...: radclient disconnect from the RADIUS netns (one
# try, 2 s); its output in $E2E_DIR/dm.out, exit status in dm_rc.
dm() {
	local secret=$1
	shift
	dm_rc=0
	printf '%s\n' "$@" | ip netns exec "$NS_RAD" radclient -x -r 1 -t 2 \
		"$SERVER_IP:3799" disconnect "$secret" >"$E2E_DIR/dm.out" 2>&1 || dm_rc=$?
	sed 's/^/#   dm: /' "$E2E_DIR/dm.out" | grep -v -e '^#   dm: *$' -e 'Expected Disconnect-ACK' || true
}
acked() { [ "$dm_rc" = 0 ] && grep -q 'Received Disconnect-ACK' "$E2E_DIR/dm.out"; }
naked() { grep -q 'Received Disconnect-NAK' "$E2E_DIR/dm.out" && grep -Eq "Error-Cause = $1" "$E2E_DIR/dm.out"; }

# up NAME NS USER: a client up (lib.sh client_up); its tunnel address.
up() { CLIENT_NS=$2 client_up "$1" "$3" "$(user_pass "$3")"; }

# gone_cleanly NAME DESC: NAME's pppd exits after an LCP Terminate-Request
# from the server that says "Administrative hang-up", and its pptp got the CDN for the call pptpd hung up
# (the call id from pptpd's dae line).
gone_cleanly() {
	local name=$1 desc=$2 pid i id
	pid=$(client_pid "$name")
	for ((i = 0; i < 75; i++)); do proc_alive "$pid" || break; e2e_sleep 0.2; done
	check "$desc: its pppd exits" eval '! proc_alive "$pid"'
	assert_log_contains "$(client_log "$name")" 'rcvd \[LCP TermReq' \
		"$desc: its pppd got an LCP Terminate-Request (the server's pppd ended LCP)"
	assert_log_contains "$(client_log "$name")" 'LCP terminated by peer \(Administrative hang-up\)' \
		"$desc: its pppd was told why (Administrative hang-up, not MPPE disabled)"
	id=$(sed -n 's/.*dae: Disconnect-Request id [0-9]* from .*: call \([0-9]*\)\/[0-9]* .* hung up$/\1/p' \
		"$E2E_SERVER_LOG" | tail -n 1)
	wait_for_log "$E2E_SYSLOG" "Call disconnect notification received \(call id ${id:-x}\)" 10 || true
	assert_log_contains "$E2E_SYSLOG" "Call disconnect notification received \(call id ${id:-x}\)" \
		"$desc: its pptp got the Call-Disconnect-Notify for call ${id:-?}"
	client_down "$name"
}

bob_fine() {
	check "$1: bob's pppd still runs" proc_alive "$(client_pid b)"
	assert_ping "$NS_CLI2" "$TUNNEL_LOCAL_IP" 5 "$1: bob's tunnel still passes traffic"
}

ipb=$(up b "$NS_CLI2" bob)
ipa=$(up a1 "$NS_CLI" alice)
wait_for_log "$E2E_SERVER_LOG" 'session start: .* user alice ' 10 || true
assert_log_contains "$E2E_SERVER_LOG" "dae: serving RFC 5176 Disconnect-Requests on ${SERVER_IP//./\\.}:3799" \
	"pptpd serves Disconnect-Requests on $SERVER_IP:3799"

# ---- by User-Name
dm "$DAE_SECRET" 'User-Name = alice'
check "radclient: Disconnect-Request User-Name = alice gets a Disconnect-ACK" acked
assert_log_contains "$E2E_SERVER_LOG" "dae: Disconnect-Request id [0-9]+ from ${RADIUS_IP//./\\.}:[0-9]+: call [0-9]+/[0-9]+ 198\.18\.0\.2:[0-9]+ user alice hung up" \
	"pptpd logs which call the request hung up"
gone_cleanly a1 "alice (by User-Name)"
wait_for_log "$E2E_SERVER_LOG" 'ended after .*RADIUS Disconnect-Request from' 10 || true
assert_log_contains "$E2E_SERVER_LOG" "ended after [0-9]+ s: .*RADIUS Disconnect-Request from ${RADIUS_IP//./\\.}" \
	"pptpd's session-end line names the Disconnect-Request"
bob_fine "after alice's disconnect"

# ---- no such session: NAK 503
dm "$DAE_SECRET" 'User-Name = nobody'
check "User-Name = nobody: Disconnect-NAK with Error-Cause 503 (Session-Context-Not-Found)" \
	naked 'Session-Context-Not-Found|503'
# The repeat carries an Event-Timestamp the first request lacked: a
# byte-identical request (radclient may pick the same Identifier, 1 in 256)
# has the same Request Authenticator, and pptpd answers it as the replay
# it could be, with the first answer (test_dae covers that).
dm "$DAE_SECRET" 'User-Name = alice' "Event-Timestamp = $(date +%s)"
check "alice again, now gone: Disconnect-NAK 503" naked 'Session-Context-Not-Found|503'

# ---- a wrong secret: no answer, a log line
drops0=$(count 'dae: .* dropped: bad authenticator')
dm wrong-secret 'User-Name = bob'
check "a wrong secret: radclient gets no answer (exit $dm_rc)" \
	eval '[ "$dm_rc" != 0 ] && grep -q "No reply from server" "$E2E_DIR/dm.out"'
check "pptpd logs the dropped request (bad authenticator)" \
	test "$(count "dae: Disconnect-Request from ${RADIUS_IP//./\\.}:[0-9]+ dropped: bad authenticator")" -gt "$drops0"
bob_fine "after the wrong secret"

# ---- by Framed-IP-Address
ipa=$(up a2 "$NS_CLI" alice)
wait_for_log "$E2E_SERVER_LOG" "session start: .* user alice .*tunnel ${ipa//./\\.} " 10 || true
dm "$DAE_SECRET" "Framed-IP-Address = $ipa"
check "Framed-IP-Address = $ipa (alice's tunnel): Disconnect-ACK" acked
gone_cleanly a2 "alice (by Framed-IP-Address)"
bob_fine "after the Framed-IP-Address disconnect"

# ---- by Acct-Session-Id (+ User-Name)
n0=$(count 'session start: .* user alice ')
ipa=$(up a3 "$NS_CLI" alice)
for ((i = 0; i < 50; i++)); do [ "$(count 'session start: .* user alice ')" -gt "$n0" ] && break; e2e_sleep 0.2; done
sid=$(sed -n 's/.*session start: .* user alice .* acct-session-id \([^ ]*\).*/\1/p' "$E2E_SERVER_LOG" | tail -n 1)
sidb=$(sed -n 's/.*session start: .* user bob .* acct-session-id \([^ ]*\).*/\1/p' "$E2E_SERVER_LOG" | tail -n 1)
diag "Acct-Session-Id: alice ${sid:-none}, bob ${sidb:-none}"
check "pptpd knows alice's Acct-Session-Id (${sid:-none}), not bob's (${sidb:-none})" \
	test -n "$sid" -a "$sid" != "$sidb"
dm "$DAE_SECRET" "Acct-Session-Id = \"$sid\"" 'User-Name = bob'
check "alice's Acct-Session-Id with User-Name = bob: NAK 503 (every fact must match)" \
	naked 'Session-Context-Not-Found|503'
check "and alice is still up" proc_alive "$(client_pid a3)"
dm "$DAE_SECRET" "Acct-Session-Id = \"$sid\"" 'User-Name = alice'
check "Acct-Session-Id = $sid, User-Name = alice: Disconnect-ACK" acked
gone_cleanly a3 "alice (by Acct-Session-Id)"
bob_fine "after the Acct-Session-Id disconnect"

# ---- a flood: 300 bad datagrams (wrong secret, garbage, truncated,
# another code) in a burst; then one more a second later, which carries
# the count of the lines held back.
lines0=$(count 'dae: .*dropped')
wpid=$(server_worker)   # under privsep the worker parses them
ip netns exec "$NS_RAD" python3 - "$SERVER_IP" <<'PY'
import os, socket, struct, sys, hashlib
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = (sys.argv[1], 3799)
def pkt(code, ident, attrs, secret):
    body = b"".join(struct.pack("!BB", t, len(v) + 2) + v for t, v in attrs)
    hdr = struct.pack("!BBH", code, ident, 20 + len(body))
    auth = hashlib.md5(hdr + bytes(16) + body + secret).digest()
    return hdr + auth + body
for i in range(300):
    k = i % 4
    if k == 0:   # a Disconnect-Request signed with the wrong secret
        d = pkt(40, i & 255, [(1, b"bob")], b"wrong")
    elif k == 1: # garbage
        d = os.urandom(20 + i % 60)
    elif k == 2: # Length beyond the datagram
        d = pkt(40, i & 255, [(1, b"bob")], b"dae-s3cret")[:22]
    else:        # an Access-Request, not ours to answer
        d = pkt(1, i & 255, [(1, b"bob")], b"dae-s3cret")
    s.sendto(d, dst)
PY
e2e_sleep 1.2
dm wrong-secret 'User-Name = bob'
lines=$(($(count 'dae: .*dropped') - lines0))
check "301 bad datagrams: at most ~2 s worth of drop lines logged ($lines)" test "$lines" -le 30 -a "$lines" -ge 2
assert_log_contains "$E2E_SERVER_LOG" '\([0-9]+ similar lines suppressed\)' \
	"the rate limiter says how many lines it held back"
# (the worker too: a dead worker leaves the monitor a few seconds of
# ending the sessions)
check "pptpd (pid $(server_pid), worker $wpid) still runs after the flood" \
	eval 'proc_alive "$(server_pid)" && proc_alive "$wpid"'

bob_fine "after the flood"

# ---- bob last: the daemon still answers properly
dm "$DAE_SECRET" 'User-Name = bob'
check "after the flood, Disconnect-Request User-Name = bob: Disconnect-ACK" acked
gone_cleanly b "bob (by User-Name, after the flood)"
check "pptpd still runs, its worker the same ($wpid)" \
	eval 'proc_alive "$(server_pid)" && [ "$(server_worker)" = "$wpid" ]'

# ---- pptp-load's Windows profile against pptpd + RADIUS: MS-CHAPv2
# checked by FreeRADIUS, MPPE-128 keyed from its MS-MPPE-*-Key, UDP echo
# through the tunnel, torn down by the client
pol='pptpd-policy: alice from .*: MPPE require-128 128-bit \(RADIUS MS-MPPE-Encryption-Policy 2 Types 0x4\)'
pol0=$(grep -c -E "$pol" "$E2E_SERVER_PPPD_LOG" || true)
ip netns exec "$NS_SRV" "$E2E_ROOT/client/pptp-echo" --port 9000 >"$E2E_DIR/echo.log" 2>&1 &
J=$E2E_DIR/win.json
ip netns exec "$NS_CLI" "$E2E_ROOT/client/pptp-load" --server "$SERVER_IP" --user alice \
	--password alicepass --profile windows --mppe 128 \
	--stream 100,20pps,2,echo --target "$TUNNEL_LOCAL_IP:9000" \
	--deadline 60 --json "$J" >"$E2E_DIR/win.out" 2>&1 || true
sed 's/^/# load: /' "$E2E_DIR/win.out"
jget() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$J" "$1" 2>/dev/null || echo none; }
check "pptp-load (Windows profile) as alice: up with MPPE-128" \
	test "$(jget 'j["up"]')/$(jget 'j["session"][0]["mppe_bits"]')" = 1/128
sent=$(jget 'j["streams"][0]["sent"]') recv=$(jget 'j["streams"][0]["received"]')
check "pptp-load: UDP echo through the RADIUS-keyed tunnel: $recv of $sent back" \
	eval '[ "$sent" -ge 20 ] && [ "$recv" -ge $((sent * 9 / 10)) ]'
check "pptp-load: clean teardown (reason $(jget 'j["session"][0]["reason"]'))" \
	test "$(jget 'j["session"][0]["reason"]')" = ok
check "the plugin took the load client's MPPE policy from RADIUS (required, 128-bit)" \
	test "$(grep -c -E "$pol" "$E2E_SERVER_PPPD_LOG" || true)" -gt "$pol0"
e2e_done
