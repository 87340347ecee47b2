#!/bin/bash
# tests/systemd/test_unit.sh -- the shipped unit under a real systemd: pptpd
# installed with `make install` (PREFIX=/usr/local), started, reloaded,
# stopped and killed with systemctl, with real clients (pptp-linux + pppd in
# netns cli) and pppd's radius.so against a real FreeRADIUS (netns rad), on
# each data path: engine, kernel and auto.
#
# It rewrites /etc/pptpd.conf, /etc/ppp and /usr/local: it runs only in the
# test VM booted with systemd as PID 1, which throws all of it away:
#
#   tests/systemd/check                 (make check-systemd; Debian 13:
#   tests/systemd/check --debian 13      make check-systemd DEBIAN=13)
#
# Topology: pptpd runs where systemd starts it, in the VM's own network
# namespace, on bridge br0 198.18.0.1/24; the client netns cli (198.18.0.2)
# and FreeRADIUS's netns rad (198.18.0.250) hang off br0. The server's
# pppd options and RADIUS client files are examples/radius/'s, installed
# where they say (/etc/ppp/options.pptpd, /etc/pptpd/radius/), on top of
# Debian's own /etc/ppp/options and ip-up.d scripts.
#
# Per data path: the session comes up and passes traffic; `systemctl
# reload` keeps it (same pppd, same interface, ping); `systemctl status`
# shows the session count (sd_notify STATUS=); `systemctl stop` hangs up
# cleanly (the client logs the Call-Disconnect-Notify, FreeRADIUS gets the
# Accounting-Stop, pptpd exits 0 well within TimeoutStopSec, systemd kills
# nothing); pptpd SIGKILLed alone (`systemctl kill -s KILL --kill-who=main`,
# as a crash) leaves no pppd: each ends cleanly (its own log lines down to
# "Exit.", its Accounting-Stop; on the kernel path on systemd's SIGTERM),
# none is SIGKILLed, and the unit restarts and takes a new session. Once, on
# the first data path: `systemctl kill -s KILL` (every process of the unit,
# systemctl's default) leaves no pppd either, and the journal names each
# pppd it killed. First, a bad pptpd.conf: the start fails and is not
# retried. Kernel and auto start with the pptp module unloaded (when the
# launcher provides the VM kernel's pptp.ko): the unit must get it loaded.
#
#   UNIT_FROM=package  pptpd-ng is installed in the VM's root (tests/systemd/
#                  check --package): test it, its unit and its plugin, as
#                  they are, instead of `make install`'s
#   UNIT_IN=FILE   test this unit source instead of systemd/pptpd.service.in
#                  (e.g. an older one: `git show REV:systemd/pptpd.service.in`)
#   DATAPATHS="kernel auto engine"   which data paths, in this order
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ -z "${PPTPD_IN_VM:-}" ] || [ ! -d /run/systemd/system ]; then
	echo "test_unit.sh: needs the test VM with systemd as PID 1 (it rewrites /etc): run tests/systemd/check" >&2
	exit 2
fi

# ---------------------------------------------------------------- install
# Before lib.sh's private /etc/ppp (e2e_init): the server's files must be
# where systemd's pptpd and its pppd see them.
if [ "${E2E_MNTNS:-}" != 1 ]; then
	t0=$SECONDS
	if [ "${UNIT_FROM:-}" = package ]; then
		dpkg-query -W -f='# the package: ${Package} ${Version}\n' pptpd-ng
	else
		make -s -C "$root" install >/dev/null
	fi
	if [ -n "${UNIT_IN:-}" ]; then
		sed -e 's|@SBINDIR@|/usr/local/sbin|g' -e 's|@SYSCONFDIR@|/etc|g' "$UNIT_IN" \
			>/usr/local/lib/systemd/system/pptpd.service
	fi
	# The VM masks the distribution's pptpd.service (Poptop's); ours, in
	# /usr/local/lib/systemd/system, wins over Poptop's in /lib.
	rm -f /etc/systemd/system/pptpd.service
	systemctl daemon-reload
	install -m 0644 "$root/examples/radius/options.pptpd" /etc/ppp/options.pptpd
	mkdir -p /etc/pptpd/radius
	cp "$root"/examples/radius/{radiusclient.conf,servers,dictionary,port-id-map} /etc/pptpd/radius/
	chmod 600 /etc/pptpd/radius/servers
	# The VM kernel's pptp.ko (tests/systemd/check extracts it from the
	# kernel package): the module can then be unloaded and must be
	# loaded again from inside the unit.
	kver=$(uname -r)
	mods=$root/build/systemd-vm/lib/modules/$kver
	if [ -d "$mods" ] && [ ! -e "/lib/modules/$kver/modules.dep" ]; then
		mkdir -p "/lib/modules/$kver"
		cp -a "$mods/." "/lib/modules/$kver/"
		depmod "$kver"
	fi
	echo "# installed in $((SECONDS - t0)) s: $(systemctl show -p FragmentPath --value pptpd)"
fi

. "$root/tests/e2e/lib.sh"
DATAPATHS=${DATAPATHS:-kernel auto engine}
UNIT=pptpd.service

e2e_init
# pptpd in the VM's own netns: br0 there, cli and rad on it (not netns_up:
# lib.sh's netns srv would be this namespace, which netns_down empties).
ip link del br0 2>/dev/null || true
ip -batch - <<EOF
link add br0 type bridge
addr add $SERVER_IP/24 dev br0
link set br0 up
EOF
for spec in "$NS_CLI:198.18.0.2" "$NS_RAD:$RADIUS_IP"; do
	ns=${spec%%:*}
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns"
	echo "$ns" >>"$E2E_DIR/.netns"
	ip link add "v-$ns" type veth peer name eth0 netns "$ns"
	ip link set "v-$ns" master br0 up
	ip -n "$ns" -batch - <<-EOF
		link set lo up
		addr add ${spec#*:}/24 dev eth0
		link set eth0 up
	EOF
done

freeradius_conf "$root/examples/radius/freeradius/users"
freeradius_start
tap_ok "FreeRADIUS ready in netns $NS_RAD ($RADIUS_IP)"

# ---------------------------------------------------------------- helpers
# The journal of the unit (pptpd's stderr, pppd's syslog, systemd's lines
# about the unit) since the phase began, in $E2E_SERVER_LOG.
JCURSOR=
jmark() { JCURSOR=$(journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p'); }
jsync() {
	journalctl -u "$UNIT" --no-pager -o short-precise ${JCURSOR:+--after-cursor="$JCURSOR"} \
		>"$E2E_SERVER_LOG" 2>&1 || true
}
jhas() { jsync; grep -Eq -- "$1" "$E2E_SERVER_LOG"; }
# jcount REGEX: the journal's lines since jmark that match
jcount() { jsync; grep -Ec -- "$1" "$E2E_SERVER_LOG" || true; }
# jwait REGEX [SECONDS]
jwait() {
	local end=$((SECONDS + ${2:-20}))
	while [ "$SECONDS" -lt "$end" ]; do
		jhas "$1" && return 0
		e2e_sleep 0.5
	done
	return 1
}
prop() { systemctl show -p "$1" --value "$UNIT"; }
main_pid() { prop MainPID; }
# pppd processes in this (the server's) network namespace: the unit's, or
# orphans; the clients' live in netns cli.
server_pppds() {
	local d c
	for d in /proc/[0-9]*; do
		read -r c 2>/dev/null <"$d/comm" || continue
		[ "$c" = pppd ] && [[ $d/ns/net -ef /proc/1/ns/net ]] && echo "${d#/proc/}"
	done
	return 0
}
unit_procs() {
	local cg
	cg=$(prop ControlGroup)
	[ -n "$cg" ] && cat "/sys/fs/cgroup$cg/cgroup.procs" 2>/dev/null || true
}
server_ppp_if() { ip -o link show type ppp | awk -F': ' '{ print $2; exit }'; }
cdn_count() { grep -c 'Call disconnect notification received' "$E2E_SYSLOG" || true; }
# acct N STATUS SID: FreeRADIUS's detail files hold a record of STATUS for
# the session (waits up to N seconds).
acct() {
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		radius_detail | awk -v RS= -v sid="$3" -v st="$2" '
			index($0, "Acct-Session-Id = \"" sid "\"") && $0 ~ ("Acct-Status-Type = " st) { f = 1 }
			END { exit !f }' && return 0
		e2e_sleep 0.2
	done
	return 1
}
# The session's Acct-Session-Id, from pptpd's session start line.
session_id() {
	jwait 'session start: .* user alice ' 20 || true
	sed -n 's/.*session start: .* user alice .* acct-session-id \([^ ]*\).*/\1/p' "$E2E_SERVER_LOG" | tail -n 1
}
# gone PID SECONDS: the process has ended.
gone() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do proc_alive "$1" || return 0; e2e_sleep 0.2; done
	return 1
}
# The pptp module unloaded, when it can come back from /lib/modules.
unload_pptp() {
	if [ ! -e "/lib/modules/$(uname -r)/modules.dep" ]; then
		diag "no /lib/modules/$(uname -r) in the VM: the pptp module stays loaded (run tests/systemd/check)"
		return 0
	fi
	if [ -d /sys/module/pptp ]; then
		rmmod pptp || { diag "rmmod pptp failed: $(cat /sys/module/pptp/refcnt)"; return 0; }
	fi
	check "pptp module unloaded before pptpd starts" test ! -d /sys/module/pptp
}
write_conf() {
	cat >/etc/pptpd.conf <<-EOF
		# tests/systemd/test_unit.sh
		option /etc/ppp/options.pptpd
		localip $TUNNEL_LOCAL_IP
		remoteip $TUNNEL_REMOTE_RANGE
		datapath $1
	EOF
}
# main_pppd: the first pppd child of the unit's main pid (privsep yes, as
# shipped: its children are its worker and the pppd it started).
main_pppd() {
	local c comm
	for c in $(children "$(main_pid)"); do
		read -r comm 2>/dev/null <"/proc/$c/comm" || continue
		[ "$comm" = pppd ] && { echo "$c"; return 0; }
	done
	return 0
}
# worker_pid: pptpd's worker (the main pid's pptpd-worker), or nothing.
worker_pid() { worker_of "$(main_pid)"; }
# next_worker PID: the worker once it is another than PID (10 s), or the
# last one seen.
next_worker() {
	local w i
	for ((i = 0; i < 100; i++)); do
		w=$(worker_pid)
		[ -n "$w" ] && [ "$w" != "$1" ] && break
		e2e_sleep 0.1
	done
	echo "$w"
}
# worker_facts: "USER CapEff Seccomp" of pptpd's worker, or nothing.
worker_facts() {
	local c uid
	for c in $(worker_pid); do
		uid=$(awk '/^Uid:/ {print $2}' "/proc/$c/status")
		echo "$(getent passwd "$uid" | cut -d: -f1)" \
			"$(awk '/^CapEff:/ {print $2}' "/proc/$c/status")" \
			"$(awk '/^Seccomp:/ {print $2}' "/proc/$c/status")"
	done
}
# dial NAME: alice dials in; the server's pppd in SPPPD, the session in SID.
dial() {
	local ip i
	ip=$(client_up "$1" alice alicepass)
	tap_ok "$DP: alice dialed in: tunnel $ip ($(client_dial_time "$1") s)"
	SPPPD=
	for ((i = 0; i < 25; i++)); do
		SPPPD=$(main_pppd)
		[ -n "$SPPPD" ] && break
		e2e_sleep 0.2
	done
	SID=$(session_id)
}
# restarted OLDPID NRESTARTS: the unit is active again with another pptpd.
restarted() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(prop ActiveState)" = active ] && [ "$(prop NRestarts)" -gt "$2" ] &&
			[ "$(main_pid)" != 0 ] && [ "$(main_pid)" != "$1" ] && return 0
		e2e_sleep 0.2
	done
	return 1
}

my_exit() {
	local rc=$?
	set +e
	jsync
	systemctl stop "$UNIT" >/dev/null 2>&1
	freeradius_stop
	(exit "$rc")
	e2e_exit
}
trap my_exit EXIT

# ---------------------------------------------------------------- per path
# unit_afresh DP WHAT: a new journal mark, the unit stopped and its
# failures forgotten, the configuration for data path DP.
unit_afresh() {
	DP=$1
	diag "==== $2, datapath $DP"
	jmark
	systemctl stop "$UNIT" 2>/dev/null || true
	systemctl reset-failed "$UNIT" 2>/dev/null || true
	write_conf "$DP"
}

phase() {
	unit_afresh "$1" "the unit"
	[ "$DP" != engine ] && unload_pptp
	local t0=$SECONDS
	if ! systemctl start "$UNIT"; then
		tap_not_ok "$DP: systemctl start pptpd"
		jsync
		tail -n 15 "$E2E_SERVER_LOG" | sed 's/^/#   /'
		return 0
	fi
	tap_ok "$DP: systemctl start pptpd: active, main pid $(main_pid) ($((SECONDS - t0)) s)"
	case $DP in
	engine) want='data path: engine \(datapath engine\)' ;;
	# With its GRE guard: the unit lets pptpd load the eBPF program
	# (CAP_BPF, CAP_NET_ADMIN, AF_NETLINK for tc); `auto` takes the
	# kernel path only so.
	*) want="data path: kernel PPTP channel with its GRE guard \(datapath $DP\)" ;;
	esac
	check "$DP: pptpd logs its data path: /${want//\\/}/" jwait "$want" 5
	local wf
	wf=$(worker_facts)
	check "$DP: its worker runs as pptpd, CapEff 0, seccomp on (privsep yes, as shipped): '$wf'" \
		grep -Eq '^pptpd 0+ 2$' <<<"$wf"
	[ "$DP" != engine ] && check "$DP: the pptp module is loaded" test -d /sys/module/pptp

	# ---- the session
	dial "c-$DP"
	check "$DP: session start logged with an Acct-Session-Id (${SID:-none})" test -n "$SID"
	if [ "$DP" = engine ]; then
		check "$DP: server pppd $SPPPD on a pty" eval '! pppd_on_kernel_path "$SPPPD"'
	else
		check "$DP: server pppd $SPPPD on the kernel's PPTP channel (no pty)" pppd_on_kernel_path "$SPPPD"
	fi
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 10 "$DP: 10 pings through the tunnel"
	check "$DP: FreeRADIUS got the Accounting-Start" acct 10 Start "$SID"

	# ---- systemctl status: the session count
	local st i
	for ((i = 0; i < 25; i++)); do
		st=$(systemctl status "$UNIT" --no-pager 2>&1 || true)
		grep -q 'Status: "1 session active, 1 control connection"' <<<"$st" && break
		e2e_sleep 0.2
	done
	check "$DP: systemctl status shows 'Status: \"1 session active, 1 control connection\"'" \
		grep -q 'Status: "1 session active, 1 control connection"' <<<"$st"

	# ---- reload keeps the session
	local ifname pid0
	ifname=$(server_ppp_if) pid0=$(main_pid)
	check "$DP: systemctl reload pptpd succeeds" systemctl reload "$UNIT"
	check "$DP: pptpd logged the reload" jwait 'SIGHUP: reloading' 10
	check "$DP: after reload: the same pptpd ($pid0), active" \
		test "$(main_pid)/$(prop ActiveState)" = "$pid0/active"
	check "$DP: after reload: the same server pppd $SPPPD and interface $ifname" \
		test "$(main_pppd)/$(server_ppp_if)" = "$SPPPD/$ifname"
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 5 "$DP: pings still pass after the reload"

	# ---- stop hangs up cleanly
	local cdn0 cpid t1 dt sniffer wire
	cdn0=$(cdn_count) cpid=$(client_pid "c-$DP")
	# What reaches the client on its control connection (a raw socket in
	# its netns): pptp-linux logs the CDN only if its call manager still
	# has the call when it comes, and its pppd may already have hung up
	# on the LCP Terminate-Request the server's pppd sent first.
	rm -f "$E2E_DIR/ctrl-ready"
	ip netns exec "$NS_CLI" python3 "$E2E_LIB_DIR/ctrl_sniff.py" 30 \
		"$E2E_DIR/ctrl-ready" >"$E2E_DIR/ctrl-wire-$DP" &
	sniffer=$!
	for ((i = 0; i < 150; i++)); do [ -e "$E2E_DIR/ctrl-ready" ] && break; e2e_sleep 0.1; done
	t1=$(now_us)
	systemctl stop "$UNIT" || true
	dt=$(us_to_s $(($(now_us) - t1)))
	check "$DP: systemctl stop returned in $dt s (TimeoutStopSec $(prop TimeoutStopUSec))" \
		assert_lt "$dt" 15
	check "$DP: stopped: pptpd exited 0 (Result $(prop Result), code $(prop ExecMainCode), status $(prop ExecMainStatus))" \
		test "$(prop Result)/$(prop ExecMainStatus)" = "success/0"
	check "$DP: systemd killed nothing (no 'Killing process' in the journal)" eval '! jhas "Killing process"'
	check "$DP: server pppd $SPPPD ended on pptpd's hang-up: '$(jhas "pppd\[$SPPPD\]: (Connection terminated|Modem hangup|Terminating)" && grep -Eo "pppd\[$SPPPD\]: (Connection terminated|Modem hangup|Terminating on signal [0-9]+)" "$E2E_SERVER_LOG" | head -n 1)'" \
		jhas "pppd\[$SPPPD\]: (Connection terminated|Modem hangup|Terminating on signal)"
	wait_for_log "$E2E_SYSLOG" "Call disconnect notification received" 10 || true
	wait "$sniffer" || true
	wire=$(tr '\n' ' ' <"$E2E_DIR/ctrl-wire-$DP")
	check "$DP: the client got the Call-Disconnect-Notify (on the wire: $wire; pptp-linux logged it: $([ "$(cdn_count)" -gt "$cdn0" ] && echo yes || echo no))" \
		eval '[[ " $wire " == *" CDN "* ]] || [ "$(cdn_count)" -gt "$cdn0" ]'
	check "$DP: FreeRADIUS got the Accounting-Stop for $SID" acct 15 Stop "$SID"
	check "$DP: the client's pppd ended" gone "$cpid" 15
	check "$DP: no pppd left on the server ($(server_pppds | xargs))" test -z "$(server_pppds)"

	# ---- pptpd alone SIGKILLed (a crash): its pppd must not live on
	kill_main
}

# started_dialed NAME LABEL: the unit started and alice dialed in as NAME;
# KCPID her pppd, PID0 and NR0 the unit's main pid and NRestarts then. 1
# (reported) when the unit does not start.
started_dialed() {
	if ! systemctl start "$UNIT"; then
		tap_not_ok "$2: systemctl start pptpd"
		return 1
	fi
	dial "$1"
	KCPID=$(client_pid "$1") PID0=$(main_pid) NR0=$(prop NRestarts)
}

# killed NAME LABEL [OPTION...]: the unit started, alice dialed
# in as NAME, then `systemctl kill -s KILL [OPTION...] pptpd`; the unit must restart and
# the server's pppd ($SPPPD) end. KCPID: the client's pppd.
killed() {
	local name=$1 label=$2
	shift 2
	started_dialed "$name" "$label" || return 1
	systemctl kill -s KILL "$@" "$UNIT"
	check "$label: the unit restarted (pid $PID0 -> $(restarted "$PID0" "$NR0"; main_pid))" \
		test "$(prop ActiveState)" = active -a "$(main_pid)" != "$PID0"
	check "$label: pppd $SPPPD is gone" gone "$SPPPD" 30
	jsync
	diag "$label: systemd: $(grep -E 'systemd\[1\]' "$E2E_SERVER_LOG" | sed 's/.*systemd\[1\]: //' | paste -sd '|')"
}

# kill_main: pptpd SIGKILLed alone, as a crash or the OOM killer would.
kill_main() {
	jmark
	[ "$DP" != engine ] && unload_pptp
	killed "k-$DP" "$DP: SIGKILL to pptpd alone" --kill-who=main || return 0
	diag "pppd $SPPPD's last words: $(grep -E "pppd\[$SPPPD\]" "$E2E_SERVER_LOG" | grep -Ev ': (rcvd|sent) \[' | tail -n 8 | sed 's/.*pppd\[[0-9]*\]: //' | paste -sd '|')"
	check "$DP: systemd sent pppd $SPPPD no SIGKILL" eval '! jhas "Killing process $SPPPD \(pppd\) with signal SIGKILL"'
	check "$DP: pppd $SPPPD ended cleanly: it logged its Exit" jhas "pppd\[$SPPPD\]: Exit\."
	# What ended it: on the engine path the pty, which died with pptpd
	# (pppd's "Modem hangup"), or systemd's SIGTERM; on the kernel path
	# nothing of pptpd's is left in pppd's hands but the report channel,
	# so only systemd's SIGTERM (KillMode=control-group) ends it.
	if [ "$DP" = engine ]; then
		check "$DP: pppd $SPPPD ended on its pty's hangup or systemd's SIGTERM" \
			jhas "pppd\[$SPPPD\]: (Modem hangup|Terminating on signal 15)"
	else
		check "$DP: pppd $SPPPD ended on systemd's SIGTERM ('Terminating on signal 15')" \
			jhas "pppd\[$SPPPD\]: Terminating on signal 15"
	fi
	check "$DP: FreeRADIUS got its Accounting-Stop ($SID)" acct 15 Stop "$SID"
	check "$DP: no pppd left over on the server ($(server_pppds | xargs))" test -z "$(server_pppds)"
	check "$DP: the client's pppd ended" gone "$KCPID" 30
	dial "k2-$DP"
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "$DP: the restarted pptpd takes a new session"
	client_down "k2-$DP"
}

# kill_all: `systemctl kill -s KILL pptpd`, which signals every process of
# the unit (--kill-who=all, systemctl's default): pppd too, at once.
kill_all() {
	unit_afresh "$1" "systemctl kill -s KILL (all the unit's processes)"
	killed "a-$DP" "kill all" || return 0
	check "kill all: no pppd left over on the server ($(server_pppds | xargs))" test -z "$(server_pppds)"
	check "kill all: the journal says pptpd was killed" jhas "Main process exited, code=killed, status=9/KILL"
	# The trace pppd cannot leave itself: systemd 252 names each process it
	# signals, 257 kills the cgroup at once (cgroup.kill) and says so.
	check "kill all: the journal says systemd SIGKILLed pppd $SPPPD, or the unit's whole cgroup, on request" \
		jhas "Sending signal SIGKILL to process $SPPPD \(pppd\) on client request|Killed unit cgroup with SIGKILL on client request"
	# Nothing can send it: pppd had no chance to run radius.so's ip-down.
	if acct 5 Stop "$SID"; then diag "kill all: Accounting-Stop for $SID"; else diag "kill all: no Accounting-Stop for $SID (as expected: pppd was SIGKILLed)"; fi
	check "kill all: the client's pppd ended" gone "$KCPID" 30
}

# kill_worker DP: pptpd's worker SIGKILLed (a crash of the process that
# parses what the network sends; privsep, as shipped): the monitor starts
# a new worker, which takes the session over (its pppd and client run on,
# it passes traffic, no Accounting-Stop); the unit does not restart (its
# main pid, the monitor, lives on) and the new worker takes a new session.
kill_worker() {
	local w2 wf
	unit_afresh "$1" "pptpd-worker SIGKILLed"
	started_dialed "w-$DP" "worker killed" || return 0
	KWORKER=$(worker_pid)
	check "worker killed: pptpd's worker found (${KWORKER:-none})" test -n "$KWORKER"
	[ -n "$KWORKER" ] || return 0
	kill -KILL "$KWORKER"
	w2=$(next_worker "$KWORKER")
	check "worker killed: a new worker runs (${w2:-none}, was $KWORKER)" \
		test -n "$w2" -a "$w2" != "$KWORKER"
	check "worker killed: the unit did not restart (main pid $PID0, NRestarts $NR0)" \
		test "$(prop ActiveState)" = active -a "$(main_pid)" = "$PID0" -a "$(prop NRestarts)" = "$NR0"
	wf=$(worker_facts)
	check "worker killed: the new worker runs as pptpd, CapEff 0, seccomp on: '$wf'" \
		grep -Eq '^pptpd 0+ 2$' <<<"$wf"
	jsync
	check "worker killed: the monitor said so" \
		jhas "monitor: the worker \(pid $KWORKER\) was killed by signal 9: a new worker takes over 1 sessions"
	check "worker killed: the new worker took the session over" jhas "1 of 1 sessions taken over"
	check "worker killed: pppd $SPPPD runs on" proc_alive "$SPPPD"
	check "worker killed: the client's pppd runs on" proc_alive "$KCPID"
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "worker killed: the session passes traffic through the new worker"
	check "worker killed: FreeRADIUS got no Accounting-Stop ($SID)" eval '! acct 2 Stop "$SID"'
	client_down "w-$DP"
	check "worker killed: then hung up, pppd $SPPPD ends cleanly: it logged its Exit" \
		eval 'gone "$SPPPD" 30 && jsync && jhas "pppd\[$SPPPD\]: Exit\."'
	check "worker killed: then FreeRADIUS gets its Accounting-Stop ($SID)" acct 15 Stop "$SID"
	dial "w2-$DP"
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "worker killed: the new worker takes a new session"
	client_down "w2-$DP"
}

# upgrade DP: `pptpctl upgrade` under systemd (privsep, as shipped): the
# monitor executes the installed binary in its own process; systemd sees
# no stop, no start and no restart (main pid, NRestarts, active), the
# session's pppd and client run on and pass traffic, no Accounting-Stop.
upgrade() {
	local w0 w2 i out
	unit_afresh "$1" "pptpctl upgrade"
	started_dialed "u-$DP" "upgrade" || return 0
	w0=$(worker_pid)
	out=$(pptpctl upgrade 2>&1) && i=0 || i=$?
	check "upgrade: pptpctl upgrade exits 0 ($i: $out)" test "$i" = 0
	w2=$(next_worker "$w0")
	check "upgrade: a new worker runs (${w2:-none}, was $w0)" \
		test -n "$w2" -a "$w2" != "$w0"
	check "upgrade: systemd saw no restart (main pid $PID0, NRestarts $NR0, active)" \
		test "$(prop ActiveState)" = active -a "$(main_pid)" = "$PID0" -a "$(prop NRestarts)" = "$NR0"
	jsync
	check "upgrade: the new worker took the session over" \
		eval '(for _ in $(seq 50); do jsync; jhas "1 of 1 sessions taken over" && exit 0; e2e_sleep 0.2; done; exit 1)'
	check "upgrade: pppd $SPPPD and the client run on" \
		eval 'proc_alive "$SPPPD" && proc_alive "$KCPID"'
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "upgrade: the session passes traffic after"
	# the unit's way: SIGUSR2 to the main process
	systemctl kill -s USR2 --kill-who=main "$UNIT"
	w0=$(next_worker "$w2")
	check "upgrade by systemctl kill -s USR2 --kill-who=main: a new worker (${w0:-none}, was $w2)" \
		test -n "$w0" -a "$w0" != "$w2"
	check "... systemd saw no restart (main pid $PID0, NRestarts $NR0, active)" \
		test "$(prop ActiveState)" = active -a "$(main_pid)" = "$PID0" -a "$(prop NRestarts)" = "$NR0"
	check "... the new worker took the session over" \
		eval '(for _ in $(seq 50); do [ "$(jcount "1 of 1 sessions taken over")" -ge 2 ] && exit 0; e2e_sleep 0.2; done; exit 1)'
	assert_ping "$NS_CLI" "$TUNNEL_LOCAL_IP" 3 "... the session passes traffic after"
	check "upgrade: FreeRADIUS got no Accounting-Stop ($SID)" eval '! acct 2 Stop "$SID"'
	client_down "u-$DP"
}

assert_lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

diag "unit: $(prop FragmentPath); KillMode $(prop KillMode), TimeoutStopSec $(prop TimeoutStopUSec)"

# An error in pptpd.conf: the start fails, and is not retried (the same
# file would fail again).
jmark
printf 'datapath sideways\n' >/etc/pptpd.conf
check "a bad pptpd.conf: systemctl start fails" eval '! systemctl start "$UNIT" 2>/dev/null'
e2e_sleep 2
check "a bad pptpd.conf: pptpd says why (exit status $(prop ExecMainStatus)), and the unit is not restarted (NRestarts $(prop NRestarts))" \
	test "$(prop ExecMainStatus)/$(prop NRestarts)/$(prop ActiveState)" = 2/0/failed
jhas 'pptpd.conf:1' || diag "no pptpd.conf:1 in the journal: $(tail -n 3 "$E2E_SERVER_LOG")"
for dp in $DATAPATHS; do
	phase "$dp"
done
kill_worker "${DATAPATHS%% *}"
upgrade "${DATAPATHS%% *}"
kill_all "${DATAPATHS%% *}"
jmark
systemctl stop "$UNIT"
check "finally: systemctl stop leaves the unit inactive, no process in it" \
	test "$(prop ActiveState)" = inactive -a -z "$(unit_procs)"
e2e_done
