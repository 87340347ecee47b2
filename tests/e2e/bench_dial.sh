#!/bin/bash
# bench_dial.sh -- dial-in time of our server against Poptop, side by side in
# one VM run: one client, then N clients at once (default 4), each server in
# turn per round (A B A B ...). Prints seconds until the client (or the last
# of the N) has its tunnel address, the median per server, and for one
# client of each server the wire time line (wire_log.py on the server's
# bridge): when the OCRP went out, and each LCP packet either way.
#
#   scripts/e2e-run tests/e2e/bench_dial.sh
#
#   BENCH_ROUNDS=3          rounds (default 3; in the VM pass it as
#                           E2E_BENCH_ROUNDS, VM_ENV carries E2E_* only)
#   BENCH_CLIENTS=4         clients dialling at once (default 4)
#   BENCH_SERVERS="poptop ours"   which servers (paths allowed); ours-kernel
#                           is ours on the kernel data path (datapath kernel)
#   BENCH_LCP_RESTART=3     the clients' LCP restart timer: pppd's default,
#                           as Windows and the regress client have it (the
#                           other e2e tests dial with 1 s)
#
# A benchmark, not a test: it reports, it does not judge. It fails only when
# a tunnel does not come up.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rounds=${E2E_BENCH_ROUNDS:-${BENCH_ROUNDS:-3}}
nclients=${E2E_BENCH_CLIENTS:-${BENCH_CLIENTS:-4}}
servers=${E2E_BENCH_SERVERS:-${BENCH_SERVERS:-poptop ours}}
lcp_restart=${E2E_BENCH_LCP_RESTART:-${BENCH_LCP_RESTART:-3}}

e2e_init
netns_up
for ((i = 3; i <= nclients; i++)); do
	netns_add_client "cli$i" "198.18.0.$((i + 1))"
done
# Poptop ignores the plugin line; ours gives it to every pppd, as installed.
E2E_DATAPATH=kernel write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"
mv "$E2E_DIR/pptpd.conf" "$E2E_DIR/pptpd-kernel.conf"
write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"

wire=$E2E_DIR/wire.log
: >"$E2E_DIR/results"
ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/wire_log.py" br0 "$wire" \
	"$E2E_DIR/wire.ready" &
wire_pid=$!
for ((i = 0; i < 300; i++)); do [ -e "$E2E_DIR/wire.ready" ] && break; e2e_sleep 0.1; done
[ -e "$E2E_DIR/wire.ready" ] || { echo "wire_log.py did not start" >&2; exit 1; }

client_ns_of() { case $1 in 1) echo "$NS_CLI" ;; 2) echo "$NS_CLI2" ;; *) echo "cli$1" ;; esac; }
bin_of() { case $1 in poptop) echo "$POPTOP" ;; ours|ours-kernel) echo "$PPTPD" ;; *) echo "$1" ;; esac; }
conf_of() { case $1 in ours-kernel) echo "$E2E_DIR/pptpd-kernel.conf" ;; *) echo "$E2E_DIR/pptpd.conf" ;; esac; }

# kill_all: everything in the client namespaces and the server's, but the
# wire logger; wait until gone.
kill_all() {
	local all=("$NS_SRV" "$NS_CLI" "$NS_CLI2") p pids=() i
	for ((i = 3; i <= nclients; i++)); do all+=("cli$i"); done
	for p in $(netns_pids "${all[@]}"); do
		[ "$p" = "$wire_pid" ] || pids+=("$p")
	done
	[ "${#pids[@]}" -gt 0 ] || return 0
	kill -9 "${pids[@]}" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		local left=0
		for p in "${pids[@]}"; do proc_alive "$p" && left=1 && break; done
		[ "$left" = 0 ] && break
		e2e_sleep 0.1
	done
	rm -f /run/ppp-*.pid "$E2E_DIR/server.pid"
	rm -rf /run/pptp/*
}

# timeline T0 T1: the wire log between two EPOCHREALTIME stamps, relative.
timeline() {
	awk -v t0="$1" -v t1="$2" '$1 >= t0 && $1 <= t1 {
		$1 = sprintf("%7.3f", $1 - t0); print "#   " $0 }' "$wire"
}

# resent T0 T1: LCP Configure-Requests sent again (same call, same id)
# between two stamps, "server N client M": each is a lost request and a
# restart timer waited out.
resent() {
	awk -v t0="$1" -v t1="$2" -v srv="$SERVER_IP" '
		$1 >= t0 && $1 <= t1 && $7 == "LCP" && $8 == "ConfReq" {
			split($2, ends, ">")
			if (seen[$2 " " $4 " " $9]++)
				n[ends[1] == srv ? "server" : "client"]++
		}
		END { printf "server %d client %d", n["server"], n["client"] }' "$wire"
}

# dial SERVER N ROUND: start the server, N clients at once, print seconds
# until all are up.
dial() {
	local srv=$1 n=$2 rnd=$3 i t0 t1 pids=() fail=0
	: >"$E2E_SERVER_PPPD_LOG"
	server_start "$(bin_of "$srv")" "$(conf_of "$srv")" >/dev/null
	disown "$E2E_SERVER_PID"   # kill_all ends it: no "Killed" from bash
	t0=$EPOCHREALTIME
	for ((i = 1; i <= n; i++)); do
		CLIENT_NS=$(client_ns_of "$i") client_up "c$i" "${E2E_USERS[i - 1]}" \
			"$(user_pass "${E2E_USERS[i - 1]}")" lcp-restart "$lcp_restart" \
			>/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || fail=1; done
	t1=$EPOCHREALTIME
	local secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	if [ "$fail" = 1 ]; then
		tap_not_ok "$srv: $n client(s) at once, round $rnd: a tunnel did not come up"
		kill_all
		return 1
	fi
	local each=()
	for ((i = 1; i <= n; i++)); do each+=("$(client_dial_time "c$i")"); done
	tap_ok "$srv: $n client(s) at once, round $rnd: all up after $secs s (each: ${each[*]}; LCP requests resent: $(resent "$t0" "$t1"))"
	echo "$srv $n $secs" >>"$E2E_DIR/results"
	if [ "$n" = 1 ] && [ "$rnd" = 1 ]; then
		diag "$srv: wire time line of that dial-in (s since the client started):"
		timeline "$t0" "$t1"
	fi
	kill_all
}

for ((r = 1; r <= rounds; r++)); do
	for n in 1 "$nclients"; do
		for srv in $servers; do
			dial "$srv" "$n" "$r" || true
		done
	done
done

diag "median seconds until all clients are up ($rounds rounds, client lcp-restart $lcp_restart):"
for n in 1 "$nclients"; do
	line="  $n client(s):"
	for srv in $servers; do
		med=$(awk -v s="$srv" -v n="$n" '$1 == s && $2 == n { print $3 }' \
			"$E2E_DIR/results" | sort -n | awk '{ v[NR] = $1 }
			END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
			      else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		line+=" $srv $med s"
	done
	diag "$line"
done
kill "$wire_pid" 2>/dev/null || true
e2e_done
