#!/bin/bash
# test_privsep.sh -- `privsep yes` with the real stack (doc/design/privsep.md,
# the step built so far): pptpd stays the monitor, the process systemd and
# the pid file know, and the parent of every pppd; its worker,
# pptpd-worker, serves the clients and asks the monitor to start, signal
# and reap pppd.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_privsep.sh
#   E2E_DATAPATH=kernel ... (test_privsep_kernel.sh): the kernel's channel,
#   which the monitor opens for each call, and its GRE guard, which the
#   monitor holds (attached while it runs, detached when it exits)
#
# What a user checks: a session comes up with MPPE-128 and passes traffic;
# pppd is the monitor's child, not the worker's; pptpctl and a reload work
# through the worker; a kill ends the session and leaves no pppd or zombie;
# SIGTERM stops both cleanly (exit 0, the pid file gone); when the worker
# is killed mid-stream the monitor starts a new worker that takes the
# session over (an iperf3 TCP stream across the kill is not reset; the
# ping's longest gap, the time to recover, is printed) and new sessions.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DATAPATH=${E2E_DATAPATH:-engine}
PPTPCTL=${PPTPCTL:-$E2E_ROOT/ctl/pptpctl}
export E2E_PRIVSEP=yes

# holds_listener PID: PID has the socket that listens on 1723 among its
# descriptors (the namespace's /proc/net/tcp names the socket's inode;
# every process of the namespace sees the same table).
holds_listener() {
	local ino
	ino=$(awk '$2 ~ /:06BB$/ && $4 == "0A" { print $10; exit }' "/proc/$1/net/tcp")
	[ -n "$ino" ] && holds_fd "$1" "socket:[$ino]"
}

# holds_fd PID LINK: a descriptor of PID's reads as LINK.
holds_fd() {
	local f
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}

# holds_bpf PID: PID has an eBPF map among its descriptors (the guard's).
holds_bpf() { holds_fd "$1" anon_inode:bpf-map; }

# guard_state: "attached" when the guard's eBPF filter is at the server's
# br0 ingress, "detached" when not, "unknown" when tc cannot say (read
# whole first: grep -q would end the pipe early, and pipefail fail it).
guard_state() {
	local out
	out=$(tc -n "$NS_SRV" filter show dev br0 ingress 2>&1) || { echo unknown; return; }
	case "$out" in
	*kguard*) echo attached ;;
	*) echo detached ;;
	esac
}

# status_field PID FIELD: the value of FIELD in /proc/PID/status.
status_field() { awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ +/, ""); print; exit }' "/proc/$1/status"; }

e2e_init
netns_up
# The DAE clients' secrets: root's, 0600, which the worker, no longer
# root, could not open by name; a reload reads them all the same.
printf '198.18.0.254 s3cret\n' >"$E2E_DIR/dae-clients"
chmod 600 "$E2E_DIR/dae-clients"
write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so" \
	"radius-dae-listen 127.0.0.1:3799" "radius-dae-clients $E2E_DIR/dae-clients"
server_start "$PPTPD"
mon=$(server_pid)
worker=$(server_worker)
check "the monitor (pid $mon) runs a worker named pptpd-worker (pid $worker)" \
	test "$worker" != "$mon"
uid=$(id -u pptpd)
check "the worker runs as the pptpd user (uid $uid), real, effective, saved and fs: $(status_field "$worker" Uid)" \
	test "$(status_field "$worker" Uid | tr -s ' \t' ' ')" = "$uid $uid $uid $uid"
check "the worker has no supplementary group: '$(status_field "$worker" Groups)'" \
	test -z "$(status_field "$worker" Groups)"
check "the worker has no capability (CapEff, CapPrm 0)" \
	test "$(status_field "$worker" CapEff)$(status_field "$worker" CapPrm)" = 00000000000000000000000000000000
check "the worker cannot gain any (NoNewPrivs 1)" test "$(status_field "$worker" NoNewPrivs)" = 1
check "the worker runs under a seccomp filter (Seccomp 2)" test "$(status_field "$worker" Seccomp)" = 2
check "the monitor does not (Seccomp 0)" test "$(status_field "$mon" Seccomp)" = 0
check "the monitor stays root" test "$(status_field "$mon" Uid | cut -d' ' -f1)" = 0
check "the worker's user cannot open the DAE secrets by name" \
	eval '! setpriv --reuid pptpd --regid pptpd --clear-groups cat "$E2E_DIR/dae-clients" >/dev/null 2>&1' 
assert_log_contains "$E2E_SERVER_LOG" "monitor: the worker is pid $worker" \
	"the monitor logs its worker's pid"
check "the pid file names the monitor" test "$(cat "$E2E_DIR/pptpd.pid")" = "$mon"
check "the worker holds the listener" holds_listener "$worker"
check "the monitor does not (it closed what the server opened)" \
	eval '! holds_listener '"$mon"
if [ "$DATAPATH" = kernel ]; then
	for _ in $(seq 50); do [ "$(guard_state)" = attached ] && break; e2e_sleep 0.1; done
	check "the GRE guard is attached at br0's ingress (by the monitor, at its start)" \
		test "$(guard_state)" = attached
	check "the monitor holds the guard's eBPF map" holds_bpf "$mon"
	check "the worker does not (it closed what it loaded at startup)" \
		eval 'proc_alive '"$worker"' && ! holds_bpf '"$worker"
fi

# ---- a session through the worker, pppd the monitor's
ip=$(client_up c1 alice "$(user_pass alice)")
tap_ok "alice dialed in: tunnel $ip"
assert_log_contains "$E2E_SERVER_LOG" "session start: call [0-9]+/[0-9]+ user alice client 198\.18\.0\.2 tunnel $ip mppe 128" \
	"the worker logs the session start with MPPE-128 (the plugin's reports reach it)"
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 10 "10 pings through the tunnel, no loss"
kid=$(server_pppds | head -n 1)
check "pppd (pid $kid) is the monitor's child" test "$(proc_ppid "$kid")" = "$mon"
# tcp-mss-adjust yes (the default): the worker names the interface, the
# monitor, which checks it is a ppp interface of a call it started, clamps
wait_for_log "$E2E_SERVER_LOG" "user alice: TCP MSS clamped to [0-9]+ on ppp[0-9]+" 10 || true
sif=$(sed -n 's/.*user alice: TCP MSS clamped to [0-9]* on \(ppp[0-9]*\)$/\1/p' "$E2E_SERVER_LOG" | tail -n 1)
check "the worker logs alice's interface ($sif) clamped, the MSS the monitor's answer" \
	test -n "$sif"
# (the map read whole first: grep -q ending the pipe early would fail it
# under pipefail)
check "the monitor's table inet pptpd has $sif in its map" \
	eval 'grep -q "\"$sif\" :" <<<"$(ip netns exec "$NS_SRV" nft list map inet pptpd mss4)"'
check "the worker has no child of its own" test -z "$(children "$worker")"
if [ "$DATAPATH" = kernel ]; then
	check "server pppd $kid has no pty, and pptpd-kernel on its command line" \
		pppd_on_kernel_path "$kid"
fi
"$PPTPCTL" sessions >"$E2E_DIR/ctl.out" 2>&1 || true
check "pptpctl sessions (answered by the worker) lists alice up" \
	grep -Eq "user alice .*state up" "$E2E_DIR/ctl.out"

# ---- a reload: systemd's ExecReload is a SIGHUP to the main pid
kill -HUP "$mon"
check "SIGHUP to the monitor reloads (the worker's reload, the monitor's with it; the 0600 secrets opened by the monitor)" \
	wait_for_log "$E2E_SERVER_LOG" "reloaded .*pptpd.conf" 10
check "no reload was refused" eval '! grep -q "reload refused" "$E2E_SERVER_LOG"' 
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "alice still passes traffic after the reload"

# ---- pptpctl kill: the worker asks, the monitor signals, pppd ends LCP
cpid=$(client_pid c1)
"$PPTPCTL" kill user alice >/dev/null 2>&1 && rc=0 || rc=$?
check "pptpctl kill user alice: exit 0 (got $rc)" test "$rc" = 0
check "alice's pppd exits after the hang-up" proc_gone "$cpid" 150
assert_log_contains "$(client_log c1)" 'LCP terminated by peer \(Administrative hang-up\)' \
	"alice's pppd was told why: Administrative hang-up"
check "the server's pppd is reaped by the monitor" proc_gone "$kid" 100
for _ in $(seq 50); do [ "$(server_children)" -eq 0 ] && break; e2e_sleep 0.2; done
check "no pppd left under the monitor" test "$(server_children)" -eq 0
check "no zombie" test "$(test_zombie_count)" = 0
assert_log_contains "$E2E_SERVER_LOG" "session end: call [0-9]+/[0-9]+ user alice .* duration [0-9]+ s rx [1-9][0-9]* bytes" \
	"the worker logs the session end with its counters (read after the monitor reaped pppd)"

# ---- SIGTERM to the monitor: both stop cleanly, the peer is told
ip=$(client_up c2 alice "$(user_pass alice)")
cpid=$(client_pid c2)
kill -TERM "$mon"
check "SIGTERM: the monitor exits" proc_gone "$mon" 150
wait "$mon" 2>/dev/null && rc=0 || rc=$?
check "SIGTERM: exit status 0 (got $rc)" test "$rc" = 0
check "SIGTERM: the worker is gone too" eval '! proc_alive '"$worker"
check "SIGTERM: the pid file is removed" test ! -e "$E2E_DIR/pptpd.pid"
check "SIGTERM: alice's client was hung up" proc_gone "$cpid" 150
if [ "$DATAPATH" = kernel ]; then
	check "SIGTERM: the monitor detached the GRE guard" test "$(guard_state)" = detached
fi

# ---- the worker killed mid-stream: a new worker takes the session over
rm -f "$E2E_DIR/server.pid"
server_start "$PPTPD"
mon=$(server_pid)
worker=$(server_worker)
ip=$(client_up c3 alice "$(user_pass alice)")
kid=$(server_pppds | head -n 1)
cpid=$(client_pid c3)
# An iperf3 TCP stream through the tunnel across the kill (it must not
# reset), and a ping every 50 ms beside it: the longest gap between its
# replies is the time to recover, its loss what the kill cost.
ijson=$E2E_DIR/iperf-kill.json
iperf_run "$NS_CLI" "$TUNNEL_LOCAL_IP" "$ijson" -t 10 >"$E2E_DIR/iperf-kill.out" 2>&1 &
ipid=$!
ip netns exec "$NS_CLI" ping -n -D -i 0.05 -c 160 -W 1 "$TUNNEL_LOCAL_IP" \
	>"$E2E_DIR/ping-kill.out" 2>&1 &
ppid=$!
e2e_sleep 3
tkill=$EPOCHREALTIME
kill -KILL "$worker"
# new_worker: the monitor's worker is another process now
new_worker() { w2=$(server_worker); [ -n "$w2" ] && [ "$w2" != "$worker" ] && [ "$w2" != "$mon" ]; }
w2=
check "worker killed: the monitor starts a new worker" eval 'for _ in $(seq 100); do new_worker && break; e2e_sleep 0.1; done; new_worker'
check "worker killed: the monitor (pid $mon) runs on" proc_alive "$mon"
assert_log_contains "$E2E_SERVER_LOG" "monitor: the worker \(pid $worker\) was killed by signal 9: a new worker takes over 1 sessions" \
	"the monitor says the worker was killed and that a new one takes over the session"
assert_log_contains "$E2E_SERVER_LOG" "monitor: the worker is pid $w2 \(worker 2\)" \
	"the monitor logs its new worker's pid"
check "worker killed: the new worker takes the session over (1 of 1)" \
	wait_for_log "$E2E_SERVER_LOG" "1 of 1 sessions taken over" 10
check "worker killed: the new worker runs under seccomp as the pptpd user" \
	eval 'test "$(status_field "$w2" Seccomp)" = 2 && test "$(status_field "$w2" CapEff)" = 0000000000000000'
wait "$ipid" && rc=0 || rc=$?
check "worker killed: the iperf3 TCP stream across the kill completes, not reset (exit $rc)" test "$rc" = 0
wait "$ppid" || true
# the longest gap between replies, and the replies that came more than
# a second after the kill (none: the session was not taken over)
read -r got gap after <<<"$(python3 - "$E2E_DIR/ping-kill.out" "$tkill" <<'PY'
import re, sys
t = [float(m.group(1)) for m in re.finditer(r"^\[(\d+\.\d+)\].*bytes from", open(sys.argv[1]).read(), re.M)]
gaps = [b - a for a, b in zip(t, t[1:])]
after = sum(1 for x in t if x > float(sys.argv[2]) + 1.0)
print(len(t), "%.2f" % max(gaps) if gaps else "inf", after)
PY
)"
mbit=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f %d" % (r["end"]["sum_received"]["bits_per_second"]/1e6, r["end"]["sum_sent"].get("retransmits", -1)))' "$ijson" 2>/dev/null || echo "? ?")
diag "kill -9 of the worker mid-stream: ping every 50 ms, $got of 160 answered, longest gap ${gap} s; iperf3 TCP over 10 s: ${mbit% *} Mbit/s, ${mbit#* } retransmits"
check "worker killed: the ping is answered again after the kill ($after replies from 1 s after it on)" \
	test "$after" -gt 0
# The bound is loose: the gap is printed, and a loaded CI host (TCG) has
# shown 1.7 s where a quiet one shows 0.2.
check "worker killed: the ping recovers within 5 s (longest gap ${gap} s)" awk -v g="$gap" 'BEGIN { exit !(g < 5) }'
check "worker killed: the session's pppd ($kid) runs on" proc_alive "$kid"
check "worker killed: alice's client runs on" proc_alive "$cpid"
assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "worker killed: alice's session passes traffic through the new worker"
if [ "$DATAPATH" = kernel ]; then
	check "worker killed: the GRE guard stays attached (the monitor's)" test "$(guard_state)" = attached
fi
ip=$(client_up c4 bob "$(user_pass bob)")
loss=$(ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "$(client_ifname c4)")
check "the new worker takes a new session that passes traffic (bob, $loss% loss)" test "$loss" = 0
kill -TERM "$mon"
check "then SIGTERM: the monitor exits" proc_gone "$mon" 150
wait "$mon" 2>/dev/null && rc=0 || rc=$?
check "then SIGTERM: exit status 0 (got $rc)" test "$rc" = 0
check "then SIGTERM: the new worker is gone too" eval '! proc_alive '"$w2"
if [ "$DATAPATH" = kernel ]; then
	check "then SIGTERM: the monitor detached the GRE guard" test "$(guard_state)" = detached
fi
rm -f "$E2E_DIR/server.pid"

e2e_done
