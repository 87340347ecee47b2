#!/bin/bash
# test_upgrade.sh -- `pptpctl upgrade` with the real stack
# (doc/design/privsep.md, "Upgrade"): the monitor re-executes the installed
# binary in its own process and the new one takes the sessions over.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_upgrade.sh
#   E2E_DATAPATH=kernel ... (test_upgrade_kernel.sh)
#
# What a user checks: two sessions up; an installed binary that speaks
# another hand-over, or none (a release from before it), is refused with
# a clear message and the running pptpd carries on; the installed binary
# replaced as a package replaces it (a new file renamed over the old) and
# `pptpctl upgrade` (another file put in place right after it changes
# nothing: the file checked is the one executed): the same pid (systemd's
# MAINPID, the pid file, pppd's parent), now running the new file, a new
# worker, both sessions' pppd and clients run on and pass traffic,
# `pptpctl status` says the installed binary's version; then a new
# session, and SIGTERM stops it all cleanly. (The binary installed is
# this tree's; from the previous release to HEAD, each built as make
# regress builds them, with 50 sessions: make bench-scale UPGRADE=1
# FROM=v0.8.0, doc/performance.md.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DATAPATH=${E2E_DATAPATH:-engine}
PPTPCTL=${PPTPCTL:-$E2E_ROOT/ctl/pptpctl}
export E2E_PRIVSEP=yes

# install_bin FILE: FILE becomes the installed pptpd as dpkg puts it there:
# a new file, renamed over the old (the running one's /proc/PID/exe then
# reads "... (deleted)").
install_bin() {
	cp "$1" "$BIN.new"
	chmod 755 "$BIN.new"
	mv -f "$BIN.new" "$BIN"
}

# install_script TEXT: a shell script as the installed pptpd.
install_script() {
	printf '#!/bin/sh\n%s\n' "$1" >"$BIN.new"
	chmod 755 "$BIN.new"
	mv -f "$BIN.new" "$BIN"
}

# both_pass MSG: alice's and bob's sessions each pass 5 pings, no loss.
both_pass() {
	local l1 l2
	l1=$(ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "$(client_ifname c1)")
	l2=$(ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "$(client_ifname c2)")
	check "$1 (loss: alice $l1%, bob $l2%)" test "$l1$l2" = 00
}

e2e_init
netns_up
BIN=$E2E_DIR/sbin/pptpd
mkdir -p "$E2E_DIR/sbin"
install_bin "$PPTPD"
write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"
server_start "$BIN"
mon=$(server_pid)
worker=$(server_worker)
client_up c1 alice "$(user_pass alice)" >/dev/null
client_up c2 bob "$(user_pass bob)" >/dev/null
c1=$(client_pid c1)
c2=$(client_pid c2)
kids=$(server_pppds | sort | tr '\n' ' ')
check "two sessions up, two pppd ($kids)" test "$(server_children)" = 2
both_pass "before: both sessions pass traffic"

# refused WHAT SCRIPT WHY: with SCRIPT as the installed pptpd, `pptpctl
# upgrade` exits 4 saying WHY (a regex), the monitor logs it, the same
# worker serves and both sessions pass traffic.
refused() {
	local rc
	install_script "$2"
	"$PPTPCTL" upgrade >"$E2E_DIR/ctl.out" 2>&1 && rc=0 || rc=$?
	check "$1: pptpctl upgrade exits 4 (got $rc)" test "$rc" = 4
	check "... and says why: $(head -c 200 "$E2E_DIR/ctl.out")" \
		grep -Eq "$3" "$E2E_DIR/ctl.out"
	assert_log_contains "$E2E_SERVER_LOG" "monitor: upgrade refused: .*$3" \
		"... and the monitor logs the refusal"
	check "... the same worker serves ($worker)" test "$(server_worker)" = "$worker"
	both_pass "... both sessions pass traffic"
}

refused "an installed binary of another hand-over" \
	'case " $* " in *" --handover-version "*) echo 999; exit 0;; esac; exit 1' \
	"speaks hand-over 999, running speaks 1"
refused "a release from before the hand-over (no --handover-version)" \
	'echo "pptpd: unrecognized option" >&2; exit 1' "cannot hand over"
# The installed binary reads the configuration as it would start with it:
# an edit not reloaded yet that it refuses stops the upgrade, not pptpd.
install_bin "$PPTPD"
cp "$E2E_DIR/pptpd.conf" "$E2E_DIR/pptpd.conf.good"
echo "no-such-key yes" >>"$E2E_DIR/pptpd.conf"
refused "a configuration the installed binary refuses" "$(printf 'exec %q "$@"' "$PPTPD")" \
	"refuses the configuration: pptpd: .*pptpd.conf:[0-9]+"
mv -f "$E2E_DIR/pptpd.conf.good" "$E2E_DIR/pptpd.conf"

# ---- the real one
install_bin "$PPTPD"
check "the running binary reads as deleted, replaced on disk" \
	eval '[[ $(readlink "/proc/$mon/exe") == *"(deleted)" ]]'
t0=$(now_us)
"$PPTPCTL" upgrade >"$E2E_DIR/ctl.out" 2>&1 && rc=0 || rc=$?
check "pptpctl upgrade: exit 0 (got $rc: $(head -c 200 "$E2E_DIR/ctl.out"))" test "$rc" = 0
check "... it says the installed pptpd takes over" grep -q "upgrading" "$E2E_DIR/ctl.out"
# Another file put in place after the check (the monitor executes about
# 0.3 s after the answer), one that cannot take over: what is executed is
# the file that was checked.
install_script 'exit 1'
check "the new monitor takes the sessions over" \
	wait_for_log "$E2E_SERVER_LOG" "monitor: 2 sessions taken over from the monitor before the upgrade" 20
check "the new worker takes both over (2 of 2)" \
	wait_for_log "$E2E_SERVER_LOG" "2 of 2 sessions taken over" 20
t1=$(now_us)
w2=$(server_worker)
check "the same pid runs on ($mon): systemd's main pid, the pid file" \
	eval 'proc_alive "$mon" && test "$(cat "$E2E_DIR/pptpd.pid")" = "$mon"'
check "... named as before, pptpd (ps -C, pidof; got $(cat "/proc/$mon/comm"))" \
	test "$(cat "/proc/$mon/comm")" = pptpd
check "... now the file that was checked, not the one installed after it" \
	eval 'test "$(readlink "/proc/$mon/exe")" = "$(readlink -f "$BIN") (deleted)"'
install_bin "$PPTPD"
check "a new worker ($w2, was $worker)" test -n "$w2" -a "$w2" != "$worker" -a "$w2" != "$mon"
check "the new worker runs under seccomp as the pptpd user" \
	eval 'test "$(awk "/^Seccomp:/ { print \$2 }" "/proc/$w2/status")" = 2'
check "both pppd run on, the monitor's children ($kids)" \
	eval '(for k in $kids; do proc_alive "$k" && test "$(proc_ppid "$k")" = "$mon" || exit 1; done)'
check "both clients run on" eval 'proc_alive "$c1" && proc_alive "$c2"'
both_pass "after: both sessions pass traffic"
diag "pptpctl upgrade until the new worker had both sessions: $(( (t1 - t0) / 1000 )) ms"
"$PPTPCTL" status >"$E2E_DIR/ctl.out" 2>&1 || true
want=$("$BIN" -v)
check "pptpctl status says the installed binary's version ($want)" \
	grep -q "^version: *$want\$" "$E2E_DIR/ctl.out"
check "pptpctl status counts both calls up" grep -Eq "^calls: +2 .*up 2" "$E2E_DIR/ctl.out"
if [ "$DATAPATH" = kernel ]; then
	check "the kernel path's pppd still have no pty" \
		eval '(for k in $kids; do pppd_on_kernel_path "$k" || exit 1; done)'
fi

# ---- again, as the package does: --wait returns once the installed
# binary's worker answers, and says so
install_bin "$PPTPD"
"$PPTPCTL" upgrade --wait >"$E2E_DIR/ctl.out" 2>&1 && rc=0 || rc=$?
check "pptpctl upgrade --wait: exit 0 (got $rc: $(tail -n 1 "$E2E_DIR/ctl.out" | head -c 200))" test "$rc" = 0
check "... it says the installed pptpd took over ($want, $BIN, pid $mon)" \
	grep -qxF "taken over: $want ($BIN), pid $mon" "$E2E_DIR/ctl.out"
check "... the file installed now runs" eval '[ "/proc/$mon/exe" -ef "$BIN" ]'
"$PPTPCTL" sessions >"$E2E_DIR/ctl.out" 2>&1 || true
check "... and its worker has both sessions already, no wait" \
	test "$(grep -c ' state up ' "$E2E_DIR/ctl.out")" = 2
both_pass "after the second upgrade: both sessions pass traffic"

# ---- the new one serves, and stops cleanly
client_up c3 carol "$(user_pass carol)" >/dev/null
l3=$(ping_loss "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "$(client_ifname c3)")
check "a new session after the upgrade passes traffic ($l3% loss)" test "$l3" = 0
kill -TERM "$mon"
check "SIGTERM: the monitor exits" proc_gone "$mon" 150
wait "$mon" 2>/dev/null && rc=0 || rc=$?
check "SIGTERM: exit status 0 (got $rc)" test "$rc" = 0
check "SIGTERM: every client hung up" \
	eval 'proc_gone "$c1" 150 && proc_gone "$c2" 150'
rm -f "$E2E_DIR/server.pid"

e2e_done
