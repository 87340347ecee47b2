#!/bin/bash
# test_rate.sh -- per-user rate limits (issue 20, item 2) with real pppd,
# radius.so against FreeRADIUS, our plugin, pptp-linux and iperf3.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_rate.sh
#
# alice's rate comes from the peers file (`rate 512k/256k`), rita's from
# RADIUS (WISPr-Bandwidth-Max-Down/-Up, over a peers rule of hers that
# they must win over), bob has none. iperf3 offers 4x each limit over UDP:
# what crosses the tunnel must be within 10 % of the limit, each way
# (down: the ppp interface's egress tbf; up: its ingress policer). bob,
# unlimited, gets what is offered. The rates are low enough that the
# test bed (TCG, 2 vCPUs, on a busy host) carries 4x them: what is
# measured is the limiter, not the bed. A CoA-Request (FreeRADIUS' radclient,
# WISPr attributes) halves alice's rate in the middle of a stream: the
# rate after it is measured; a reload keeps the limits. pptpctl, the
# metrics and the session log show them. E2E_DATAPATH=kernel: the same on
# the kernel data path (test_rate_kernel.sh).
set -euo pipefail
here=$(dirname "$0")
. "$here/lib.sh"
command -v freeradius >/dev/null || { echo "e2e: freeradius not installed (scripts/packages.txt)" >&2; exit 1; }
command -v radclient >/dev/null || { echo "e2e: radclient not installed (freeradius-utils)" >&2; exit 1; }

METRICS=127.0.0.1:9919
DAE_SECRET=dae-rate-s3cret
# Each stream offers 4x the limit for this long (s); a CoA stream twice.
SECS=8
TOLERANCE=10   # percent either way

e2e_init
netns_up

cat >"$E2E_DIR/users" <<'EOF'
alice	Cleartext-Password := "alicepass"
bob	Cleartext-Password := "bobpass"
rita	Cleartext-Password := "ritapass"
	WISPr-Bandwidth-Max-Down := 800000,
	WISPr-Bandwidth-Max-Up := 400000
EOF
freeradius_conf "$E2E_DIR/users"
freeradius_start
printf '%s %s\n' "$RADIUS_IP" "$DAE_SECRET" >"$E2E_DIR/dae-clients"
chmod 600 "$E2E_DIR/dae-clients"
cat >"$E2E_DIR/pptpd-peers" <<'EOF'
user alice require-128 rate 512k/256k
user rita  require-128 rate 64k/64k
EOF
radius_client_conf "$E2E_DIR/radius" pptpd-1 "$SERVER_IP"
SERVER_PPPD_OPTS="plugin radius.so
radius-config-file $E2E_DIR/radius/radiusclient.conf
avpair NAS-IP-Address=$SERVER_IP"
write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so" \
	"peers $E2E_DIR/pptpd-peers" "metrics-listen $METRICS" \
	"radius-dae-listen $SERVER_IP" "radius-dae-clients $E2E_DIR/dae-clients"
server_start

up() { CLIENT_NS=$2 client_up "$1" "$3" "$(user_pass "$3")" >/dev/null; }

# json_field NAME KEY: client NAME's session in pptpctl sessions --json.
json_field() {
	"$E2E_ROOT/ctl/pptpctl" sessions --json | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    if s["tunnel"] == sys.argv[1]:
        print(s[sys.argv[2]])' "$(client_ip "$1")" "$2"
}

# srv_if NAME: the server's ppp interface of client NAME's session.
srv_if() { json_field "$1" ifname; }

# within MEASURED LIMIT (Mbit/s): |MEASURED - LIMIT| <= TOLERANCE % of LIMIT.
within() {
	python3 -c 'import sys; m, l, t = map(float, sys.argv[1:]); sys.exit(abs(m - l) > l * t / 100)' \
		"$1" "$2" "$TOLERANCE"
}

# rate NAME DIR OFFER: UDP from (up) or to (down) client NAME at OFFER
# Mbit/s for SECS s; prints what crossed the tunnel (Mbit/s, iperf3's
# receiver).
rate() {
	local json=$E2E_DIR/rate-$1-$2-$(iperf_port_peek).json
	local args=(-u -b "${3}M" -l 1200 -t "$SECS")
	[ "$2" = down ] && args+=(-R)
	iperf_run "$(client_ns "$1")" "$TUNNEL_LOCAL_IP" "$json" "${args[@]}" || return 1
	python3 - "$json" <<-'PY'
		import json, sys
		e = json.load(open(sys.argv[1]))["end"]
		print("%.3f" % (e.get("sum_received", e["sum"])["bits_per_second"] / 1e6))
	PY
}

# measured NAME DIR LIMIT: a stream at 4x LIMIT (Mbit/s) lands within
# TOLERANCE of LIMIT.
measured() {
	local got offer
	offer=$(python3 -c "print($3 * 4)")
	got=$(rate "$1" "$2" "$offer" || echo 0)
	diag "$1 $2: offered $offer Mbit/s, $got crossed (limit $3)"
	check "$1 $2: ${got} Mbit/s crossed, within $TOLERANCE % of the $3 Mbit/s limit (offered $offer)" \
		within "$got" "$3"
}

metrics_has() {
	ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/metrics_check.py" \
		"http://$METRICS/metrics" "$@" >"$E2E_DIR/metrics.out" 2>&1
}

# coa ATTRS...: a CoA-Request from the RADIUS netns; output in coa.out.
coa() {
	coa_rc=0
	printf '%s\n' "$@" | ip netns exec "$NS_RAD" radclient -x -r 1 -t 3 \
		"$SERVER_IP:3799" coa "$DAE_SECRET" >"$E2E_DIR/coa.out" 2>&1 || coa_rc=$?
	grep -e 'Received' -e 'Error-Cause' "$E2E_DIR/coa.out" | sed 's/^/#   coa: /' || true
}
coa_acked() { [ "$coa_rc" = 0 ] && grep -q 'Received CoA-ACK' "$E2E_DIR/coa.out"; }

up a "$NS_CLI" alice
up b "$NS_CLI2" bob
if [ "${E2E_DATAPATH:-}" = kernel ]; then
	check "the sessions' pppd are on the kernel data path (no pty)" \
		pppd_on_kernel_path "$(server_pppds | head -n 1)"
fi
ifa=$(srv_if a)
diag "alice's interface on the server: $ifa"

# ---- the peers file's rate
check "pptpctl sessions --json: alice's rate_down 512000" test "$(json_field a rate_down)" = 512000
check "pptpctl sessions --json: alice's rate_up 256000" test "$(json_field a rate_up)" = 256000
check "pptpctl sessions --json: alice's rate is set on her interface" test "$(json_field a rate_set)" = True
src=$(json_field a rate_source)
check "pptpctl sessions --json: alice's rate comes from her peers rule ($src)" \
	grep -Eq 'pptpd-peers:1$' <<<"$src"
check "bob has no rate (rate_down null)" test "$(json_field b rate_down)" = None
check "the server shapes alice's egress: tbf on $ifa" \
	bash -c "ip netns exec $NS_SRV tc qdisc show dev $ifa | grep -q '^qdisc tbf 5054: root .*rate 512Kbit'"
check "the server polices alice's ingress at 256 kbit/s" \
	bash -c "ip netns exec $NS_SRV tc filter show dev $ifa ingress | grep -q 'police.*rate 256Kbit'"
check "bob's interface has no qdisc of ours" \
	bash -c "! ip netns exec $NS_SRV tc qdisc show dev $(srv_if b) | grep -q -e 5054: -e ingress"
assert_log_contains "$E2E_SERVER_LOG" "session start: call .* user alice .* rate 512k/256k " \
	"the session start line names alice's rate"
out=$("$E2E_ROOT/ctl/pptpctl" show "$(json_field a id)" 2>&1 || true)
check "pptpctl show: rate 512k/256k down/up" grep -q 'rate:        512k/256k down/up (.*pptpd-peers:1)' <<<"$out"
measured a down 0.512
measured a up 0.256

# ---- no rate: what is offered
got=$(rate b down 2 || echo 0)
check "bob (no rate) down: ${got} Mbit/s of 2 offered, at least 90 %" \
	python3 -c "import sys; sys.exit(float('$got') < 1.8)"
check "metrics: pptpd_rate_limited_sessions 1" metrics_has pptpd_rate_limited_sessions=1

# ---- a CoA-Request halves alice's rate in the middle of a stream
# 24 s of 2 Mbit/s down; the CoA goes SECS s after iperf3 is started.
# Where it fell on iperf3's clock comes from iperf3's start time (whole
# seconds, cut: the CoA may be up to a second later than it looks) and
# the clock before and after radclient: the seconds before it (from the
# 2nd, ending 0.5-1.5 s before it) and after it (from 1.5 s on, but the
# last) are measured.
json=$E2E_DIR/coa-stream.json
iperf_run "$NS_CLI" "$TUNNEL_LOCAL_IP" "$json" -u -b 2M -l 1200 -t $((3 * SECS)) -R -i 1 &
ipid=$!
e2e_sleep "$SECS"
c0=$EPOCHREALTIME
coa 'User-Name = alice' 'WISPr-Bandwidth-Max-Down = 256000' 'WISPr-Bandwidth-Max-Up = 128000'
c1=$EPOCHREALTIME
wait "$ipid" || true
check "radclient: the CoA-Request for alice gets a CoA-ACK" coa_acked
read -r before after series < <(python3 - "$json" "$c0" "$c1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["start"]["timestamp"]["timesecs"]
c0, c1 = float(sys.argv[2]) - t, float(sys.argv[3]) - t
last = r["end"]["sum"]["end"]
iv = [(i["sum"]["start"], i["sum"]["end"], i["sum"]["bits_per_second"] / 1e6)
      for i in r["intervals"]]
mean = lambda x: sum(x) / len(x) if x else 0
b = [v for s, e, v in iv if s >= 0.9 and e <= c0 - 1.5]
a = [v for s, e, v in iv if s >= c1 + 1.5 and e <= last - 0.9]
print("%.3f %.3f %s;CoA-at-%.1f-%.1f-s" % (mean(b), mean(a),
      ",".join("%.2f" % v for _, _, v in iv), c0, c1 + 1))
PY
)
diag "alice down, one stream, Mbit/s per second: $series"
diag "mean before the CoA: $before, after: $after"
check "before the CoA: ${before} Mbit/s, within $TOLERANCE % of 0.512" within "$before" 0.512
check "after the CoA: ${after} Mbit/s, within $TOLERANCE % of the halved 0.256" within "$after" 0.256
check "pptpctl: alice's rate_down is 256000 from the CoA" test "$(json_field a rate_down)" = 256000
check "pptpctl: alice's rate_source is coa" test "$(json_field a rate_source)" = coa
assert_log_contains "$E2E_SERVER_LOG" "dae: CoA-Request id [0-9]+ from .*: call [0-9]+/[0-9]+ .* user alice: rate 256k/128k" \
	"pptpd logs the CoA and alice's new rate"
measured a up 0.128

# ---- a CoA for nobody, or with a rate pptpd does not set
coa 'User-Name = nobody' 'WISPr-Bandwidth-Max-Down = 500000'
check "a CoA for nobody: CoA-NAK, Session-Context-Not-Found" \
	bash -c "grep -q 'Received CoA-NAK' $E2E_DIR/coa.out && grep -Eq 'Error-Cause = (Session-Context-Not-Found|503)' $E2E_DIR/coa.out"
coa 'User-Name = alice' 'WISPr-Bandwidth-Max-Down = 100'
check "a CoA with 100 bit/s: CoA-NAK, Invalid-Attribute-Value" \
	bash -c "grep -q 'Received CoA-NAK' $E2E_DIR/coa.out && grep -Eq 'Error-Cause = (Invalid-Attribute-Value|407)' $E2E_DIR/coa.out"
check "alice's rate unchanged by it (256000)" test "$(json_field a rate_down)" = 256000

# ---- a reload keeps the limits (a refused one would keep them too: it
# must be taken)
check "pptpctl reload is taken (exit 0)" "$E2E_ROOT/ctl/pptpctl" reload
check "the server logs the reload" wait_for_log "$E2E_SERVER_LOG" "reloaded .*pptpd.conf" 10
check "after a reload alice's limit is still set (pptpctl)" test "$(json_field a rate_set)" = True
check "after a reload alice's tbf is still there at 256 kbit/s" \
	bash -c "ip netns exec $NS_SRV tc qdisc show dev $ifa | grep -q '^qdisc tbf 5054: root .*rate 256Kbit'"

# ---- an admin's qdiscs are never replaced or deleted
# bob's interface gets an admin's root qdisc (fq_codel): a CoA that would shape bob's
# down is refused (NAK, the reason logged) and theirs stays. Without it,
# under an admin's clsact with a filter of theirs, his up is policed by a
# filter of ours beside theirs; a CoA to 0/0 takes ours away, theirs stays.
ifb=$(srv_if b)
tcs() { ip netns exec "$NS_SRV" tc "$@"; }
tcs qdisc add dev "$ifb" root handle 1: fq_codel
coa 'User-Name = bob' 'WISPr-Bandwidth-Max-Down = 512000'
check "bob's interface has an admin's root qdisc: the CoA is refused (NAK)" \
	grep -q 'Received CoA-NAK' "$E2E_DIR/coa.out"
check "the admin's fq_codel is still bob's root qdisc" \
	bash -c "ip netns exec $NS_SRV tc qdisc show dev $ifb | grep -q '^qdisc fq_codel 1: root'"
assert_log_contains "$E2E_SERVER_LOG" "dae: CoA-Request .* NAK, Error-Cause 506 \(the root qdisc is another's" \
	"pptpd logs why: the root qdisc is another's"
check "bob still has no rate (pptpctl)" test "$(json_field b rate_set)" = False
tcs qdisc del dev "$ifb" root
tcs qdisc add dev "$ifb" clsact
tcs filter add dev "$ifb" ingress pref 100 matchall action pass
coa 'User-Name = bob' 'WISPr-Bandwidth-Max-Up = 256000'
check "under the admin's clsact: the CoA for bob's up rate is acked" coa_acked
measured b up 0.256
check "the admin's ingress filter is still there, beside ours" \
	bash -c "ip netns exec $NS_SRV tc filter show dev $ifb ingress | grep -q 'pref 100 matchall' &&
		ip netns exec $NS_SRV tc filter show dev $ifb ingress | grep -q 'police'"
pkts=$(tcs -s filter show dev "$ifb" ingress pref 100 | awk '/Sent/ { print $4; exit }')
check "what conformed went on to the admin's filter (it saw ${pkts:-0} packets)" \
	test "${pkts:-0}" -gt 100
coa 'User-Name = bob' 'WISPr-Bandwidth-Max-Up = 0'
check "a CoA to no limit is acked" coa_acked
check "our policing filter is gone, the admin's filter and clsact stay" \
	bash -c "! ip netns exec $NS_SRV tc filter show dev $ifb ingress | grep -q police &&
		ip netns exec $NS_SRV tc filter show dev $ifb ingress | grep -q 'pref 100 matchall' &&
		ip netns exec $NS_SRV tc qdisc show dev $ifb | grep -q clsact"
check "bob's rate is none again (pptpctl rate_set false)" test "$(json_field b rate_set)" = False

# ---- RADIUS' WISPr attributes win over the peers file's rule
client_down a
up r "$NS_CLI" rita
check "rita's rate_down is RADIUS' 800000, not her peers rule's 64k" test "$(json_field r rate_down)" = 800000
check "rita's rate_up is RADIUS' 400000" test "$(json_field r rate_up)" = 400000
check "rita's rate_source is radius" test "$(json_field r rate_source)" = radius
measured r down 0.8

client_down r
client_down b
e2e_sleep 1
check "metrics: no limited session left" metrics_has pptpd_rate_limited_sessions=0
set_n=$(ip netns exec "$NS_SRV" python3 -c '
import re, sys, urllib.request
b = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
m = re.search(r"^pptpd_rate_limit_changes_total\{result=\"set\"\} (\d+)$", b, re.M)
print(m.group(1) if m else -1)' "http://$METRICS/metrics")
check "metrics: the limits set were counted (alice, her CoA, rita: $set_n)" test "$set_n" -ge 3
server_stop
freeradius_stop
e2e_done
