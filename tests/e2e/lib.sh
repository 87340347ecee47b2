# shellcheck shell=bash
# tests/e2e/lib.sh -- shared helpers for end-to-end tests: network
# namespaces, a real PPTP server (ours or Poptop) and real clients
# (pptp-linux + pppd), traffic checks, and a small TAP-like reporter.
#
# Needs a kernel with PPP: run tests through scripts/e2e-run, which picks the
# host or the qemu test bed (scripts/vm/run).
#
# Usage (see test_poptop_smoke.sh):
#
#   #!/bin/bash
#   set -euo pipefail
#   . "$(dirname "$0")/lib.sh"        # re-execs the script in a private
#   e2e_init                          # mount namespace; temp dir, /etc/ppp,
#   netns_up                          # syslog, cleanup trap
#   server_start "$POPTOP"            # default: $PPTPD or pptpd/pptpd
#   ip=$(client_up c1 alice alicepass)
#   assert_ping cli 198.19.0.1 20 "20 pings through the tunnel"
#   e2e_done                          # "N passed, M failed"; exit status
#
# Conventions
#   - Assertions (check, assert_*) report one "ok N - ..." / "not ok N - ..."
#     line and return 0 either way, so a failed check does not stop the
#     script under set -e; the final e2e_done exits non-zero if any failed.
#   - Setup helpers (netns_up, server_start, client_up, iperf_*) return
#     non-zero on failure: under set -e that aborts the test, and the exit
#     trap reports it as a failure, prints the logs and cleans up.
#   - Everything a test starts lives in the netns srv/cli/cli2 and is killed
#     on exit; /etc/ppp is replaced by a per-test copy in a private mount
#     namespace, so the host's files are never touched.
#
# Addresses (RFC 2544 benchmarking range):
#   198.18.0.1/24  server (bridge br0 in netns srv)
#   198.18.0.2/24  netns cli    198.18.0.3/24  netns cli2  (.4+: netns_add_client)
#   198.19.0.1     tunnel local IP of the server; clients get 198.19.0.10-40
#
# Environment
#   PPTPD           our daemon (default: <repo>/pptpd/pptpd)
#   POPTOP          Poptop's daemon (default /usr/sbin/pptpd)
#   E2E_KEEP=1      keep the work dir (always kept on failure outside the VM)
#   E2E_VERBOSE=1   print all logs at the end even on success
#   E2E_DIAL_TIMEOUT  seconds for a client to come up (default 60)
#   E2E_TRACE=1     trace the test with timestamps (set -x)
#   E2E_DATAPATH    engine|kernel|auto: write_server_conf sets `datapath`
#                   to it (pptpd.conf(5)); unset: the default (engine)

E2E_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_ROOT=$(cd "$E2E_LIB_DIR/../.." && pwd)
PPTPD=${PPTPD:-$E2E_ROOT/pptpd/pptpd}
POPTOP=${POPTOP:-/usr/sbin/pptpd}
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

# Network namespace names (E2E_NS_PREFIX lets two runs share a host).
NS_SRV=${E2E_NS_PREFIX:-}srv
NS_CLI=${E2E_NS_PREFIX:-}cli
NS_CLI2=${E2E_NS_PREFIX:-}cli2
SERVER_IP=198.18.0.1
TUNNEL_LOCAL_IP=198.19.0.1
TUNNEL_REMOTE_RANGE=198.19.0.10-40

# A private mount namespace for the whole test: /etc/ppp and /dev/log are
# bind-mounted over there only. Re-exec the sourcing script inside one.
if [ "${E2E_MNTNS:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "e2e: must run as root (network namespaces, pppd)" >&2
		exit 1
	fi
	export E2E_MNTNS=1
	exec unshare --mount --propagation private -- "$BASH" "$0" "$@"
fi

# E2E_TRACE=1: trace every command with a timestamp (where does time go?).
if [ "${E2E_TRACE:-0}" = 1 ]; then
	PS4='+ ${EPOCHREALTIME} '
	set -x
fi

# Under TCG every fork+exec costs 0.1-1 s, so helpers that poll use bash
# builtins only: e2e_sleep instead of sleep(1), read instead of cat, /proc
# instead of ss.
exec {E2E_SLEEP_FD}<> <(:)
e2e_sleep() { read -r -t "$1" -u "$E2E_SLEEP_FD" _ || true; }

# now_us: wall clock in microseconds; us_to_s US: "S.ss".
now_us() { local t=${EPOCHREALTIME/./}; echo "$((10#$t))"; }
us_to_s() { printf '%d.%02d' "$(($1 / 1000000))" "$(($1 % 1000000 / 10000))"; }

# ---------------------------------------------------------------- reporter
E2E_N=0
E2E_PASS=0
E2E_FAIL=0
E2E_SKIP=0
E2E_DONE=0

diag() { printf '# %s\n' "$*"; }

tap_ok() {
	E2E_N=$((E2E_N + 1))
	E2E_PASS=$((E2E_PASS + 1))
	printf 'ok %d - %s\n' "$E2E_N" "$*"
}

tap_not_ok() {
	E2E_N=$((E2E_N + 1))
	E2E_FAIL=$((E2E_FAIL + 1))
	printf 'not ok %d - %s\n' "$E2E_N" "$*"
}

tap_skip() {
	E2E_N=$((E2E_N + 1))
	E2E_SKIP=$((E2E_SKIP + 1))
	printf 'ok %d - %s # SKIP\n' "$E2E_N" "$*"
}

# check DESC CMD [ARGS...]: ok if CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then tap_ok "$desc"; else tap_not_ok "$desc"; fi
	return 0
}

# e2e_done: summary line and exit status (non-zero if anything failed).
e2e_done() {
	E2E_DONE=1
	if [ "$E2E_N" = 0 ]; then
		tap_not_ok "no checks ran"
	fi
	local line="$E2E_PASS passed, $E2E_FAIL failed"
	[ "$E2E_SKIP" -gt 0 ] && line+=", $E2E_SKIP skipped"
	E2E_SUMMARY=$line
	# Without e2e_init there is no exit trap to print it.
	[ -n "${E2E_DIR:-}" ] || echo "$line"
	[ "$E2E_FAIL" = 0 ] && exit 0
	exit 1
}

# ---------------------------------------------------------------- setup
# e2e_init: work dir, test /etc/ppp, syslog capture, exit trap.
e2e_init() {
	E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/e2e.XXXXXX")
	mkdir -p "$E2E_DIR/clients" "$E2E_DIR/etc-ppp"
	export E2E_DIR
	E2E_SYSLOG=$E2E_DIR/syslog
	E2E_SERVER_LOG=$E2E_DIR/server.log
	E2E_SERVER_PPPD_LOG=$E2E_DIR/server-pppd.log
	: >"$E2E_SYSLOG"
	: >"$E2E_SERVER_LOG"
	: >"$E2E_SERVER_PPPD_LOG"
	echo 5201 >"$E2E_DIR/.iperf-port"
	trap e2e_exit EXIT

	# /etc/ppp for every pppd of the test: no global options (Debian's
	# has "auth", "lock", "crtscts", "modem"), no ip-up.d scripts, our
	# secrets. Tests may add files to $E2E_DIR/etc-ppp.
	local d=$E2E_DIR/etc-ppp
	echo "# e2e: empty global options" >"$d/options"
	: >"$d/pap-secrets"
	chmod 600 "$d/pap-secrets"
	mkdir -p "$d/peers" "$d/ip-up.d" "$d/ip-down.d"
	mkdir -p /etc/ppp
	mount --bind "$d" /etc/ppp
	write_chap_secrets

	syslog_start
	# pptp-linux keeps its call-manager sockets in /var/run/pptp.
	mkdir -p /run/pptp
	return 0
}

# Test users: alice/alicepass, bob/bobpass, ... (password = user + "pass").
E2E_USERS=(alice bob carol dave eve frank)
user_pass() { printf '%spass' "$1"; }

# write_chap_secrets [USER:PASS[:IP]]...: server "pptpd" secrets for the
# default users plus the given ones.
write_chap_secrets() {
	local f=$E2E_DIR/etc-ppp/chap-secrets u spec user pass ip
	{
		echo "# client	server	secret	addresses"
		for u in "${E2E_USERS[@]}"; do
			printf '%s\tpptpd\t%s\t*\n' "$u" "$(user_pass "$u")"
		done
		for spec in "$@"; do
			IFS=: read -r user pass ip <<<"$spec"
			printf '%s\tpptpd\t%s\t%s\n' "$user" "$pass" "${ip:-*}"
		done
	} >"$f"
	chmod 600 "$f"
}

# Syslog: Poptop and pppd log via syslog(3). A small receiver on a socket
# in the work dir, bind-mounted over /dev/log (or linked there when the
# machine has none, as in the VM), writes every message to $E2E_SYSLOG.
syslog_start() {
	local sock=$E2E_DIR/log.sock
	python3 - "$sock" "$E2E_SYSLOG" <<'PY' &
import os, socket, sys, time
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
with open(out, "a", buffering=1) as f:
    while True:
        d = s.recv(65536).decode("utf-8", "replace").rstrip("\n\0")
        # "<PRI>Mon dd hh:mm:ss tag[pid]: msg" -> "hh:mm:ss.mmm tag[pid]: msg"
        if d.startswith("<") and ">" in d:
            d = d[d.index(">") + 1:]
            if len(d) > 16 and d[3] == " " and d[15] == " ":
                d = d[16:]
        f.write("%s %s\n" % (time.strftime("%H:%M:%S"), d))
PY
	E2E_SYSLOG_PID=$!
	local i
	for ((i = 0; i < 100; i++)); do [ -S "$sock" ] && break; e2e_sleep 0.1; done
	[ -S "$sock" ] || { echo "e2e: syslog receiver did not start" >&2; return 1; }
	if [ -S /dev/log ] || [ -e /dev/log ]; then
		mount --bind "$sock" /dev/log
	else
		ln -s "$sock" /dev/log
		E2E_DEVLOG_LINK=1
	fi
}

# ---------------------------------------------------------------- netns
# netns_up: srv with bridge br0 198.18.0.1/24; cli .2 and cli2 .3 on it.
netns_up() {
	local ns
	for ns in "$NS_SRV" "$NS_CLI" "$NS_CLI2"; do
		ip netns del "$ns" 2>/dev/null || true # stale, from a killed run
		ip netns add "$ns"
	done
	# One ip -batch per namespace: every exec is expensive under TCG.
	ip -n "$NS_SRV" -batch - <<-EOF
		link set lo up
		link add br0 type bridge
		addr add $SERVER_IP/24 dev br0
		link set br0 up
	EOF
	E2E_NETNS_UP=1
	netns_add_client "$NS_CLI" 198.18.0.2
	netns_add_client "$NS_CLI2" 198.18.0.3
}

# netns_add_client NS ADDR: another client netns (created if needed) with
# eth0 = ADDR/24 on the server's bridge.
netns_add_client() {
	local ns=$1 addr=$2 port
	[ -e "/run/netns/$ns" ] || ip netns add "$ns"
	echo "$ns" >>"$E2E_DIR/.netns"
	port=v-$ns
	ip link add "$port" netns "$NS_SRV" type veth peer name eth0 netns "$ns"
	ip -n "$NS_SRV" link set "$port" master br0 up
	ip -n "$ns" -batch - <<-EOF
		link set lo up
		addr add $addr/24 dev eth0
		link set eth0 up
	EOF
}

# netns_pids NS...: processes living in these network namespaces (found
# through /proc/PID/ns/net, without forking "ip netns pids" per netns).
netns_pids() {
	local d ns
	for d in /proc/[0-9]*; do
		for ns in "$@"; do
			if [[ $d/ns/net -ef /run/netns/$ns ]]; then
				echo "${d#/proc/}"
				break
			fi
		done
	done
}

# netns_down: kill everything in our namespaces (TERM, then KILL after 3 s)
# and delete them.
netns_down() {
	local all=("$NS_SRV" "$NS_CLI" "$NS_CLI2") pids p i left
	[ -f "$E2E_DIR/.netns" ] && mapfile -t -O 3 all <"$E2E_DIR/.netns"
	mapfile -t pids < <(netns_pids "${all[@]}")
	if [ "${#pids[@]}" -gt 0 ]; then
		kill "${pids[@]}" 2>/dev/null
		for ((i = 0; i < 30; i++)); do
			left=0
			for p in "${pids[@]}"; do proc_alive "$p" && left=1 && break; done
			[ "$left" = 0 ] && break
			e2e_sleep 0.1
		done
		[ "$left" = 1 ] && kill -9 "${pids[@]}" 2>/dev/null
	fi
	printf 'netns del %s\n' "${all[@]}" | ip -force -batch - 2>/dev/null
	E2E_NETNS_UP=
	return 0
}

# ---------------------------------------------------------------- server
# write_server_conf [EXTRA_CONF_LINE...]: $E2E_DIR/pptpd.conf (Poptop
# format) and the pppd options file it names. Extra pppd options come from
# $SERVER_PPPD_OPTS (one per line), extra conf lines from the arguments.
write_server_conf() {
	local opts=$E2E_DIR/options.pptpd line
	cat >"$opts" <<-EOF
		name pptpd
		refuse-pap
		refuse-chap
		refuse-mschap
		require-mschap-v2
		require-mppe-128
		nodefaultroute
		nobsdcomp
		nodeflate
		novj
		novjccomp
		nologfd
		debug
		logfile $E2E_SERVER_PPPD_LOG
	EOF
	[ -n "${SERVER_PPPD_OPTS:-}" ] && printf '%s\n' "$SERVER_PPPD_OPTS" >>"$opts"
	{
		echo "option $opts"
		echo "localip $TUNNEL_LOCAL_IP"
		echo "remoteip $TUNNEL_REMOTE_RANGE"
		[ -n "${E2E_DATAPATH:-}" ] && echo "datapath $E2E_DATAPATH"
		for line in "$@"; do echo "$line"; done
		# last, so that the suites' own lines keep their numbers
		if [ -n "${E2E_PRIVSEP:-}" ]; then echo "privsep $E2E_PRIVSEP"; fi
	} >"$E2E_DIR/pptpd.conf"
}

# privsep_user: the worker's user (privsep yes is the default:
# scripts/privsep-user). Not under tests/e2e/without-privsep
# (E2E_PRIVSEP=no).
privsep_user() {
	[ "${E2E_PRIVSEP:-}" != no ] || return 0
	"$E2E_ROOT/scripts/privsep-user" ||
		{ echo "e2e: cannot make the pptpd user" >&2; return 1; }
}

# server_start [BINARY] [CONF]: run the server in netns srv in the
# foreground mode, log to $E2E_SERVER_LOG, wait until 1723 listens.
# SERVER_ARGS adds arguments (default: a pid file in the work dir).
server_start() {
	local bin=${1:-$PPTPD} conf=${2:-$E2E_DIR/pptpd.conf} pid
	[ -x "$bin" ] || { echo "e2e: server binary $bin not found" >&2; return 1; }
	[ -f "$conf" ] || write_server_conf
	privsep_user || return 1
	diag "server: $bin -f -c $conf"
	# shellcheck disable=SC2086 # SERVER_ARGS is a list of arguments
	ip netns exec "$NS_SRV" "$bin" -f -c "$conf" ${SERVER_ARGS--p $E2E_DIR/pptpd.pid} \
		>>"$E2E_SERVER_LOG" 2>&1 &
	pid=$!
	echo "$pid" >"$E2E_DIR/server.pid"
	E2E_SERVER_PID=$pid
	local i
	for ((i = 0; i < 150; i++)); do
		if ! proc_alive "$pid"; then
			echo "e2e: server exited at start; log:" >&2
			tail -n 20 "$E2E_SERVER_LOG" >&2
			return 1
		fi
		pid_listening "$pid" 1723 && { server_wait_worker "$bin" "$conf"; return 0; }
		e2e_sleep 0.2
	done
	echo "e2e: server not listening on 1723 after 30 s" >&2
	return 1
}

# server_wait_worker BINARY CONF: ours under privsep (the default) listens
# before it forks its worker; until the worker runs, server_worker would
# name the monitor. Not for Poptop or `privsep no`.
server_wait_worker() {
	local i
	[ "$1" != "${POPTOP:-/usr/sbin/pptpd}" ] || return 0
	! grep -qs '^privsep no' "$2" || return 0
	for ((i = 0; i < 50; i++)); do
		[ "$(server_worker)" != "$(server_pid)" ] && return 0
		e2e_sleep 0.1
	done
	diag "server: no pptpd-worker after 5 s (a build from before privsep?)"
}

server_stop() {
	local pid
	read -r pid 2>/dev/null <"$E2E_DIR/server.pid" || return 0
	proc_stop "$pid" 10
	rm -f "$E2E_DIR/server.pid"
}

server_pid() { local p; read -r p <"$E2E_DIR/server.pid" && echo "$p"; }

# status_line: our daemon's SIGUSR1 status line ("status: N connections,
# N calls active, N ending, pool N of N free, ...").
status_line() {
	local before
	before=$(grep -c 'status:' "$E2E_SERVER_LOG" || true)
	kill -USR1 "$(server_pid)"
	for _ in $(seq 50); do
		[ "$(grep -c 'status:' "$E2E_SERVER_LOG" || true)" -gt "$before" ] && break
		e2e_sleep 0.1
	done
	grep 'status:' "$E2E_SERVER_LOG" | tail -n 1
}

# pppd_on_kernel_path PID: the server's pppd PID runs on the kernel's PPTP
# channel: no pty among its descriptors, a PPTP socket handed to it by
# name (pptpd-kernel in its command line).
pppd_on_kernel_path() {
	local f
	for f in /proc/"$1"/fd/*; do
		[[ $(readlink "$f") == /dev/pts/* ]] && return 1
	done
	grep -qa 'pptpd-kernel' "/proc/$1/cmdline"
}

# server_worker: the process that serves: under `privsep yes` the
# monitor's worker (its child named pptpd-worker), else the server itself.
server_worker() {
	local w
	w=$(worker_of "$(server_pid)")
	if [ -n "$w" ]; then echo "$w"; else server_pid; fi
}

# worker_of PID: PID's child named pptpd-worker (privsep yes), or nothing.
worker_of() {
	local c comm
	for c in $(children "$1"); do
		read -r comm 2>/dev/null <"/proc/$c/comm" || continue
		[ "$comm" = pptpd-worker ] && { echo "$c"; return 0; }
	done
	return 0
}

# server_pppds: the pids of the processes (pppd) the server has forked and
# not reaped, one a line (under privsep the monitor's: not its worker).
server_pppds() {
	local c comm
	for c in $(children "$(server_pid)"); do
		read -r comm 2>/dev/null <"/proc/$c/comm" || comm=
		[ "$comm" = pptpd-worker ] || echo "$c"
	done
}

# server_children: how many server_pppds.
server_children() { server_pppds | wc -l; }

# port_listening NS PORT: a TCP listener on PORT in NS.
port_listening() {
	# read whole first: grep -q ending the pipe early fails it under
	# the suites' pipefail
	[ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null)" ]
}

# pid_listening PID PORT: a TCP listener on PORT in the netns of process
# PID (read from /proc/PID/net/tcp: no fork, unlike port_listening).
pid_listening() {
	local hex sl local_addr rem st _
	printf -v hex ':%04X' "$2"
	while read -r sl local_addr rem st _; do
		[ "$st" = 0A ] && [ "${local_addr: -5}" = "$hex" ] && return 0
	done 2>/dev/null <"/proc/$1/net/tcp"
	return 1
}

# ---------------------------------------------------------------- clients
# client_up NAME USER PASS [PPPD_OPTS...]: dial in from netns $CLIENT_NS
# (default cli) with pptp-linux + pppd (MS-CHAPv2, MPPE-128 required),
# wait until its ppp interface has an address, print the tunnel IP.
# lcp-restart 1: pppd sends its first LCP request before pptp-linux has a
# call up; the default 3 s retry would add that much to every dial.
#   CLIENT_NS=cli2 ...          dial from another netns
#   PPTP_ARGS="--test-type 1 --test-rate 10"   extra pptp-linux arguments
#   CLIENT_SERVER=198.18.0.1    server address
#   CLIENT_CALLMGR_OF=c1        dial through client c1's pptp call manager
#                               (same netns): both calls then ride c1's
#                               control connection, as pptp-linux does for
#                               every tunnel from one host to one server
# State goes to $E2E_DIR/clients/NAME/ (pid, ifname, ip, peer, ns,
# dial_time, pppd.log), so it also works inside $(...).
client_up() {
	local name=$1 user=$2 pass=$3
	shift 3
	local ns=${CLIENT_NS:-$NS_CLI} server=${CLIENT_SERVER:-$SERVER_IP}
	local dir=$E2E_DIR/clients/$name
	local timeout=${E2E_DIAL_TIMEOUT:-60}
	local run=$dir/pptp-run
	[ -n "${CLIENT_CALLMGR_OF:-}" ] && run=$E2E_DIR/clients/$CLIENT_CALLMGR_OF/pptp-run
	rm -rf "$dir"
	mkdir -p "$dir" "$run"
	echo "$ns" >"$dir/ns"
	rm -f "/run/ppp-$name.pid"

	local t0
	t0=$(now_us)
	# pptp-linux names its call-manager socket after the server address
	# only, in /var/run/pptp: clients in different netns would share one
	# control connection. Each client gets its own /var/run/pptp, unless
	# CLIENT_CALLMGR_OF names the client whose call manager it shares.
	# shellcheck disable=SC2016 # $1 is for the inner sh
	ip netns exec "$ns" unshare --mount --propagation private -- \
		sh -c 'mount --bind "$1" /var/run/pptp && shift && exec "$@"' sh "$run" \
		pppd pty "pptp $server --nolaunchpppd ${PPTP_ARGS:-}" \
		name "$user" user "$user" password "$pass" remotename pptpd \
		require-mppe-128 nodefaultroute noauth nodetach lcp-restart 1 \
		logfile "$dir/pppd.log" debug ipparam "$name" linkname "$name" \
		"$@" \
		</dev/null >"$dir/pppd.out" 2>&1 &
	local pid=$!
	echo "$pid" >"$dir/pid"

	local end=$((SECONDS + timeout)) ifname= addr= lines line
	while [ "$SECONDS" -lt "$end" ]; do
		if ! proc_alive "$pid"; then
			echo "e2e: client $name: pppd exited; last log lines:" >&2
			tail -n 15 "$dir/pppd.log" "$dir/pppd.out" 2>/dev/null | sed 's/^/#   /' >&2
			return 1
		fi
		# pppd's link pid file: pid, then the interface name; pppd logs
		# "local  IP address" once the address is on the interface.
		if [ -z "$ifname" ] && [ -r "/run/ppp-$name.pid" ]; then
			mapfile -t lines <"/run/ppp-$name.pid"
			ifname=${lines[1]:-}
		fi
		if [ -n "$ifname" ] && [ -r "$dir/pppd.log" ]; then
			while IFS= read -r line; do
				[[ $line == "local  IP address"* ]] && break
			done <"$dir/pppd.log"
			if [[ $line == "local  IP address"* ]]; then
				addr=$(ip -n "$ns" -4 -o addr show dev "$ifname" 2>/dev/null |
					awk '$3 == "inet" { print $4, $6; exit }')
				[ -n "$addr" ] && break
			fi
		fi
		e2e_sleep 0.2
	done
	if [ -z "$addr" ]; then
		echo "e2e: client $name: no tunnel address after ${timeout}s; last log lines:" >&2
		tail -n 15 "$dir/pppd.log" 2>/dev/null | sed 's/^/#   /' >&2
		proc_stop "$pid" 5
		return 1
	fi
	local ip=${addr%% *} peer=${addr#* }
	echo "$ifname" >"$dir/ifname"
	echo "$ip" >"$dir/ip"
	echo "${peer%/*}" >"$dir/peer"
	us_to_s $(($(now_us) - t0)) >"$dir/dial_time"
	echo "$ip"
}

# client_down NAME: hang up (SIGTERM to pppd, SIGKILL after 15 s).
client_down() {
	local dir=$E2E_DIR/clients/$1 pid
	read -r pid 2>/dev/null <"$dir/pid" || return 0
	proc_stop "$pid" 15
	rm -f "$dir/pid"
}

# Readers of a client's state (builtins only).
client_get() { local v=; read -r v <"$E2E_DIR/clients/$1/$2" || [ -n "$v" ] && echo "$v"; }
client_ip() { client_get "$1" ip; }
client_peer() { client_get "$1" peer; }
client_ifname() { client_get "$1" ifname; }
client_ns() { client_get "$1" ns; }
client_pid() { client_get "$1" pid; }
client_dial_time() { client_get "$1" dial_time; }
client_log() { echo "$E2E_DIR/clients/$1/pppd.log"; }

# ---------------------------------------------------------------- processes
# proc_alive PID: running and not a zombie.
proc_alive() {
	_proc_stat "$1" || return 1
	[ "$E2E_PSTATE" != Z ] && [ "$E2E_PSTATE" != X ]
}

# proc_state PID: one-letter state from /proc/PID/stat.
proc_state() {
	_proc_stat "$1" || return 1
	echo "$E2E_PSTATE"
}

# _proc_stat PID: E2E_PSTATE and E2E_PPID from /proc/PID/stat, no fork.
# The command name may hold spaces and parentheses: cut at the last ")".
_proc_stat() {
	local s
	read -r s 2>/dev/null <"/proc/$1/stat" || return 1
	s=${s##*) }
	read -r E2E_PSTATE E2E_PPID _ <<<"$s"
}

# proc_ppid PID: PID's parent.
proc_ppid() { _proc_stat "$1" && echo "$E2E_PPID"; }

# proc_gone PID [TENTHS]: until PID is gone (10 s); 1 if it is not.
proc_gone() {
	local i
	for ((i = 0; i < ${2:-100}; i++)); do
		proc_alive "$1" || return 0
		e2e_sleep 0.1
	done
	return 1
}

# proc_stop PID [GRACE]: SIGTERM, wait up to GRACE seconds, then SIGKILL.
proc_stop() {
	local pid=$1 grace=${2:-10} i
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < grace * 10; i++)); do
		proc_alive "$pid" || break
		e2e_sleep 0.1
	done
	proc_alive "$pid" && kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	return 0
}

# fd_count PID: open file descriptors of PID.
fd_count() {
	local fds=(/proc/"$1"/fd/*)
	[ -e "${fds[0]}" ] || { echo 0; return; }
	echo "${#fds[@]}"
}

# zombie_count [PPID]: zombies (children of PPID, or all).
zombie_count() {
	local want=${1:-} n=0 d
	for d in /proc/[0-9]*; do
		_proc_stat "${d#/proc/}" || continue
		[ "$E2E_PSTATE" = Z ] || continue
		[ -z "$want" ] || [ "$E2E_PPID" = "$want" ] || continue
		n=$((n + 1))
	done
	echo "$n"
}

# test_zombie_count: zombies whose parent is one of ours: this shell or a
# process in our network namespaces (a zombie itself no longer shows its
# netns). Unlike zombie_count, blind to unrelated zombies on a real host.
test_zombie_count() {
	local all=("$NS_SRV" "$NS_CLI" "$NS_CLI2") ours d n=0
	[ -f "$E2E_DIR/.netns" ] && mapfile -t -O 3 all <"$E2E_DIR/.netns"
	declare -A ours=([$$]=1)
	while read -r d; do ours[$d]=1; done < <(netns_pids "${all[@]}")
	for d in /proc/[0-9]*; do
		_proc_stat "${d#/proc/}" || continue
		[ "$E2E_PSTATE" = Z ] && [ -n "${ours[$E2E_PPID]:-}" ] && n=$((n + 1))
	done
	echo "$n"
}

# children PID: direct children of PID (pids, one a line).
children() {
	local f c kids
	for f in /proc/"$1"/task/*/children; do
		read -r -a kids 2>/dev/null <"$f" || true
		for c in ${kids[@]+"${kids[@]}"}; do echo "$c"; done
	done
}

# ---------------------------------------------------------------- traffic
# ping_loss NS DEST [COUNT] [IFACE]: packet loss in percent (integer).
# IFACE sends through that interface (ping -I): several tunnels in one netns
# all lead to the same server tunnel address.
ping_loss() {
	local ns=$1 dest=$2 count=${3:-10} out via=()
	[ -n "${4:-}" ] && via=(-I "$4")
	out=$(ip netns exec "$ns" ping -n -q -c "$count" -i 0.2 -W 2 "${via[@]}" "$dest" 2>&1) || true
	if [[ $out =~ \ ([0-9]+)(\.[0-9]+)?%\ packet\ loss ]]; then
		echo "${BASH_REMATCH[1]}"
	else
		echo 100
	fi
}

# iperf_port: a fresh port per test run, so no TIME_WAIT clash.
iperf_port() {
	local p
	read -r p <"$E2E_DIR/.iperf-port"
	echo $((p + 1)) >"$E2E_DIR/.iperf-port"
	echo "$p"
}

# iperf_run CLIENT_NS SERVER_IP OUT.json [IPERF3 CLIENT ARGS...]: iperf3
# server in netns srv bound to SERVER_IP (the tunnel's local IP), client in
# CLIENT_NS; JSON result in OUT.json.
iperf_run() {
	local ns=$1 ip=$2 json=$3
	shift 3
	local port spid i rc=0
	port=$(iperf_port)
	ip netns exec "$NS_SRV" iperf3 -s -1 -B "$ip" -p "$port" \
		>"$json.server" 2>&1 &
	spid=$!
	for ((i = 0; i < 150; i++)); do
		pid_listening "$spid" "$port" && break
		e2e_sleep 0.1
	done
	ip netns exec "$ns" iperf3 -c "$ip" -p "$port" --json "$@" >"$json" 2>&1 || rc=$?
	echo "$json" >"$E2E_DIR/iperf-last"
	proc_stop "$spid" 5
	if [ "$rc" != 0 ]; then
		echo "e2e: iperf3 $* failed ($rc):" >&2
		head -c 2000 "$json" >&2
		return 1
	fi
}

# iperf_tcp CLIENT_NS SERVER_IP [SECONDS]: prints "MBIT_PER_S".
iperf_tcp() {
	local json
	json=$E2E_DIR/iperf-tcp-$(iperf_port_peek).json
	iperf_run "$1" "$2" "$json" -t "${3:-5}" || return 1
	python3 - "$json" <<-'PY'
		import json, sys
		r = json.load(open(sys.argv[1]))
		print("%.2f" % (r["end"]["sum_received"]["bits_per_second"] / 1e6))
	PY
}

# iperf_udp CLIENT_NS SERVER_IP [RATE] [LEN] [SECONDS]: prints
# "MBIT_PER_S_RECEIVED LOSS_PERCENT MBIT_PER_S_SENT" (defaults 4M, 1200
# bytes, 5 s). The JSON of the last run is named in $E2E_DIR/iperf-last.
iperf_udp() {
	local json
	json=$E2E_DIR/iperf-udp-$(iperf_port_peek).json
	iperf_run "$1" "$2" "$json" -u -b "${3:-4M}" -l "${4:-1200}" -t "${5:-5}" || return 1
	python3 - "$json" <<-'PY'
		import json, sys
		r = json.load(open(sys.argv[1]))
		e = r["end"]
		# The receiver's view (the server's report) is what crossed the
		# tunnel; iperf3 < 3.9 only has end.sum.
		recv = e.get("sum_received", e["sum"])
		sent = e.get("sum_sent", e["sum"])
		print("%.2f %.2f %.2f" % (recv["bits_per_second"] / 1e6,
		                          recv.get("lost_percent", e["sum"]["lost_percent"]),
		                          sent["bits_per_second"] / 1e6))
	PY
}

iperf_port_peek() { local p; read -r p <"$E2E_DIR/.iperf-port" && echo "$p"; }

# ---------------------------------------------------------------- asserts
# assert_log_contains FILE REGEX MSG (extended regex).
assert_log_contains() {
	if grep -Eq -- "$2" "$1" 2>/dev/null; then
		tap_ok "$3"
	else
		tap_not_ok "$3"
		diag "no line matching /$2/ in $1; last lines:"
		tail -n 10 "$1" 2>/dev/null | sed 's/^/#   /'
	fi
	return 0
}

assert_log_lacks() {
	if grep -Eq -- "$2" "$1" 2>/dev/null; then
		tap_not_ok "$3"
		grep -E -- "$2" "$1" | head -n 5 | sed 's/^/#   /'
	else
		tap_ok "$3"
	fi
	return 0
}

# wait_for_log FILE REGEX [SECONDS]: until a line matches (returns 1 if not).
wait_for_log() {
	local end=$((SECONDS + ${3:-30}))
	while [ "$SECONDS" -lt "$end" ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		e2e_sleep 0.5
	done
	return 1
}

# assert_ping NS DEST COUNT MSG: no loss.
assert_ping() {
	local loss
	loss=$(ping_loss "$1" "$2" "$3")
	if [ "$loss" = 0 ]; then
		tap_ok "$4"
	else
		tap_not_ok "$4 ($loss% loss)"
	fi
	return 0
}

# assert_cmp A OP B MSG: numeric comparison (floats), OP one of < <= > >= == !=.
assert_cmp() {
	if awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
		r = (op == "<" && a < b) || (op == "<=" && a <= b) || (op == ">" && a > b) ||
		    (op == ">=" && a >= b) || (op == "==" && a == b) || (op == "!=" && a != b)
		exit !r }'; then
		tap_ok "$4"
	else
		tap_not_ok "$4 (got $1, want $2 $3)"
	fi
	return 0
}

# assert_no_zombies [PPID] MSG
assert_no_zombies() {
	local n
	n=$(zombie_count "${2:+$1}")
	if [ "$n" = 0 ]; then tap_ok "${2:-$1}"; else tap_not_ok "${2:-$1} ($n zombies)"; fi
	return 0
}

# ---------------------------------------------------------------- teardown
e2e_dump_logs() {
	local f
	for f in "$E2E_SERVER_LOG" "$E2E_SYSLOG" "$E2E_SERVER_PPPD_LOG" \
		"$E2E_DIR"/clients/*/pppd.log "$E2E_DIR"/clients/*/pppd.out; do
		[ -s "$f" ] || continue
		diag "---- ${f#"$E2E_DIR"/} (last 40 lines)"
		tail -n 40 "$f" | sed 's/^/#   /'
	done
}

e2e_exit() {
	local rc=$?
	trap - EXIT
	set +e
	if [ "$E2E_DONE" != 1 ]; then
		tap_not_ok "test script aborted (exit status $rc) before e2e_done"
		E2E_SUMMARY="$E2E_PASS passed, $E2E_FAIL failed"
		rc=1
	fi
	if [ "$E2E_FAIL" != 0 ] || [ "${E2E_VERBOSE:-0}" = 1 ]; then
		e2e_dump_logs
	fi
	# Clients first, so pppd hangs up cleanly; then everything else.
	local p
	for p in "$E2E_DIR"/clients/*/pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	[ -f "$E2E_DIR/server.pid" ] && kill "$(cat "$E2E_DIR/server.pid")" 2>/dev/null
	netns_down >/dev/null 2>&1
	[ -n "${E2E_SYSLOG_PID:-}" ] && kill "$E2E_SYSLOG_PID" 2>/dev/null
	[ "${E2E_DEVLOG_LINK:-}" = 1 ] && rm -f /dev/log
	umount /dev/log 2>/dev/null
	umount /etc/ppp 2>/dev/null
	if [ "${E2E_KEEP:-0}" = 1 ] || { [ "$rc" != 0 ] && [ -z "${PPTPD_IN_VM:-}" ]; }; then
		diag "work dir kept: $E2E_DIR"
	else
		rm -rf "$E2E_DIR"
	fi
	# The summary is the very last line.
	echo "${E2E_SUMMARY:-$E2E_PASS passed, $E2E_FAIL failed}"
	exit "$rc"
}

# ---------------------------------------------------------------- RADIUS
# A real FreeRADIUS 3.2 in its own netns (rad, 198.18.0.250 on the
# server's bridge) with its own configuration tree: a copy of
# /etc/freeradius/3.0 (never edited) with the modules the pptpd site needs
# and examples/radius/freeradius/ (site, mschap, clients.conf).
RADIUS_IP=198.18.0.250
RADIUS_SECRET=pptpd-radius-secret
NS_RAD=${E2E_NS_PREFIX:-}rad

# freeradius_conf USERS_FILE [DIR]: the configuration tree in DIR (default
# $E2E_DIR/raddb) with USERS_FILE as mods-config/files/authorize; logs and
# the detail files (accounting) under DIR/log, DIR/log/radacct/NAS-ADDR/.
freeradius_conf() {
	local users=$1 d=${2:-$E2E_DIR/raddb} ex=$E2E_ROOT/examples/radius/freeradius m
	rm -rf "$d"
	cp -a /etc/freeradius/3.0 "$d"
	rm -f "$d"/sites-enabled/*
	for m in "$d"/mods-enabled/*; do
		case ${m##*/} in always | detail | files | expr) ;; *) rm -f "$m" ;; esac
	done
	cp "$ex/site-pptpd" "$d/sites-enabled/pptpd"
	cp "$ex/mschap" "$d/mods-enabled/mschap"
	cp "$ex/clients.conf" "$d/clients.conf"
	cp "$users" "$d/mods-config/files/authorize"
	mkdir -p "$d/log" "$d/run"
	# Our paths; root in the test (no freerad user switch).
	sed -i -e "s|^raddbdir = .*|raddbdir = $d|" -e "s|^logdir = .*|logdir = $d/log|" \
		-e "s|^run_dir = .*|run_dir = $d/run|" \
		-e '/^[[:space:]]*user = freerad/d' -e '/^[[:space:]]*group = freerad/d' \
		"$d/radiusd.conf"
}

# freeradius_start [DIR]: freeradius -X on DIR (default $E2E_DIR/raddb) in
# netns rad (created on the bridge if needed); waits until it is ready.
# Its debug output goes to DIR/freeradius.log.
freeradius_start() {
	local d=${1:-$E2E_DIR/raddb} pid i
	[ -e "/run/netns/$NS_RAD" ] || netns_add_client "$NS_RAD" "$RADIUS_IP"
	: >"$d/freeradius.log"
	ip netns exec "$NS_RAD" freeradius -X -d "$d" >>"$d/freeradius.log" 2>&1 &
	pid=$!
	echo "$pid" >"$d/freeradius.pid"
	for ((i = 0; i < 300; i++)); do
		grep -q 'Ready to process requests' "$d/freeradius.log" && return 0
		if ! proc_alive "$pid"; then
			echo "e2e: freeradius exited at start; log:" >&2
			tail -n 30 "$d/freeradius.log" >&2
			return 1
		fi
		e2e_sleep 0.2
	done
	echo "e2e: freeradius not ready after 60 s" >&2
	return 1
}

freeradius_stop() {
	local d=${1:-$E2E_DIR/raddb} pid
	read -r pid 2>/dev/null <"$d/freeradius.pid" || return 0
	proc_stop "$pid" 5
	rm -f "$d/freeradius.pid"
}

# radius_client_conf DIR NAS_ID NAS_ADDR: pppd radius.so's files in DIR
# (examples/radius/ with the test's paths): radiusclient.conf, servers,
# dictionary, port-id-map.
radius_client_conf() {
	local d=$1 nas=$2 addr=$3 ex=$E2E_ROOT/examples/radius
	mkdir -p "$d"
	cp "$ex/dictionary" "$ex/port-id-map" "$d/"
	printf '%s\t%s\n' "$RADIUS_IP" "$RADIUS_SECRET" >"$d/servers"
	chmod 600 "$d/servers"
	sed -e "s|/etc/pptpd/radius/|$d/|g" -e "s|/run/pptpd/radius.seq|$d/radius.seq|" \
		-e "s|^nas_identifier.*|nas_identifier	$nas|" -e "s|^bindaddr.*|bindaddr	$addr|" \
		-e "s|^authserver.*|authserver	$RADIUS_IP:1812|" -e "s|^acctserver.*|acctserver	$RADIUS_IP:1813|" \
		"$ex/radiusclient.conf" >"$d/radiusclient.conf"
}

# radius_detail DIR: every accounting record FreeRADIUS wrote under DIR's
# radacct, one record a paragraph (the detail file's own format).
radius_detail() { cat "${1:-$E2E_DIR/raddb}"/log/radacct/*/detail-* 2>/dev/null; }
