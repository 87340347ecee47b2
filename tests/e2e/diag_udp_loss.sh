#!/bin/bash
# diag_udp_loss.sh -- where 1200-byte UDP is lost at a given rate, on each
# data path: every counter between the client's iperf3 and the server's
# (client qdisc and UDP send errors, pptp-linux's GRE statistics, what
# reached the server's wire, the server's ppp unit, the backlog, the
# server's UDP receive buffer). A diagnostic, not a check: it prints.
#
#   scripts/e2e-run tests/e2e/diag_udp_loss.sh [engine kernel ...]
#   DIAG_RATE=4M DIAG_SECONDS=5 DIAG_SNIFF=0|1
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RATE=${DIAG_RATE:-4M}
SECS=${DIAG_SECONDS:-5}
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(engine kernel)

counters() {
	local where=$1 cif=$2
	echo "--- $where"
	ip netns exec "$NS_CLI" nstat -asz 2>/dev/null |
		awk '/^(UdpOutDatagrams|UdpSndbufErrors|IpOutDiscards|IpOutRequests) / { printf "cli %s %s\n", $1, $2 }'
	tc -n "$NS_CLI" -s qdisc show dev "$cif" | tr -s ' \n' ' ' | sed 's/^/cli qdisc /'; echo
	ip -n "$NS_CLI" -s -o link show dev "$cif" | tr -s ' ' | sed 's/^/cli ppp /'
	ip netns exec "$NS_SRV" nstat -asz 2>/dev/null |
		awk '/^(IpInReceives|IpInDiscards|IpReasmReqds|IpReasmFails|UdpInDatagrams|UdpRcvbufErrors|UdpInErrors) / { printf "srv %s %s\n", $1, $2 }'
	ip -n "$NS_SRV" -s -o link show type ppp | tr -s ' ' | sed 's/^/srv ppp /'
	ip -n "$NS_SRV" -s -o link show dev br0 | tr -s ' ' | sed 's/^/srv br0 /'
	awk '{ printf "softnet cpu%d processed 0x%s dropped 0x%s squeezed 0x%s\n", NR - 1, $1, $2, $3 }' /proc/net/softnet_stat
}

e2e_init
netns_up
for dp in "${paths[@]}"; do
	echo "===== datapath $dp, UDP 1200 B at $RATE for $SECS s, up"
	E2E_DATAPATH=$dp write_server_conf "plugin $E2E_ROOT/plugin/pptpd-policy.so"
	server_start "$PPTPD"
	ip=$(client_up c1 alice "$(user_pass alice)")
	cif=$(client_ifname c1)
	echo "tunnel $ip on $cif; default qdisc $(cat /proc/sys/net/core/default_qdisc 2>/dev/null)"
	ip -n "$NS_CLI" -d link show dev "$cif" | head -n 3
	ip -n "$NS_SRV" -d link show type ppp | head -n 3
	for run in 1 2; do
		counters "before run $run" "$cif"
		if [ "${DIAG_SNIFF:-1}" = 1 ] && [ "$run" = 1 ]; then
			ip netns exec "$NS_SRV" python3 "$E2E_LIB_DIR/gre_sniff.py" $((SECS + 4)) >"$E2E_DIR/sniff" &
			sniffer=$!
			sleep 2
		else
			sniffer=
		fi
		r=$(iperf_udp "$NS_CLI" "$TUNNEL_LOCAL_IP" "$RATE" 1200 "$SECS")
		json=$(cat "$E2E_DIR/iperf-last")
		python3 - "$json" <<-'PY'
			import json, sys
			e = json.load(open(sys.argv[1]))["end"]
			s = e.get("sum_sent", e["sum"]); r = e.get("sum_received", e["sum"])
			print("iperf3 sent packets %s, receiver lost %s of %s (%.2f %%), out of order %s" % (
			    s.get("packets"), r.get("lost_packets"), r.get("packets"), r.get("lost_percent", 0),
			    r.get("out_of_order", "-")))
		PY
		echo "iperf3 (rate loss sent): $r"
		[ -n "$sniffer" ] && { wait "$sniffer"; echo "wire: $(cat "$E2E_DIR/sniff")"; }
		counters "after run $run" "$cif"
		"$E2E_ROOT/ctl/pptpctl" status 2>/dev/null | grep -E "^gre" || true
	done
	client_down c1
	server_stop
done
tap_ok "diagnostic ran on: ${paths[*]}"
e2e_done
