#!/bin/bash
# tests/attack/run.sh -- hostile input and limits, end to end.
#
# A PPTP server ($PPTPD_SERVER: our pptpd/pptpd by default; Poptop's
# /usr/sbin/pptpd works too) runs in namespace "srv" (198.18.0.1). A real
# pptp-linux + pppd session from namespace "cli" (198.18.0.2) carries a ping
# at 10/s through the tunnel for the whole run. From namespace "atk"
# (198.18.0.3, .4 and 198.18.1.1-100) tests/attack/attack.py then sends
# malformed control messages, abuses the protocol order, forges GRE and ICMP,
# and floods connections; after each attack it checks that the live session
# lost no packet, that the daemon is alive and that a new client is served
# within 2 s. The run ends with a second real session, then the line
#     N passed, M failed
# and a non-zero exit status if anything failed.
#
# Needs a kernel with PPP: without one it re-runs itself in the VM test bed
# (scripts/e2e-run -> scripts/vm/run). Runs in private network and mount
# namespaces; /etc/ppp/{options,chap-secrets,ip-up.d,ip-down.d} are
# replaced by test copies in the mount namespace only.
#
# Environment:
#   PPTPD_SERVER         server binary (default: pptpd/pptpd of this tree)
#   PPTPD_ATTACK_ONLY    attack groups: control,order,gre,flood,final
#   PPTPD_ATTACK_PICK    only the attacks whose names contain one of these
#                        comma-separated strings (the rest are listed as
#                        not run; a suite of one attack for a measurement)
#   PPTPD_PER_CLIENT     per-address connection limit to configure (default
#                        8; 0 = the server has no such setting)
#   PPTPD_PER_CLIENT_KEY its pptpd.conf key (default "connections-per-client")
#   PPTPD_ATTACK_SHIPPED=1  the limits as shipped instead of the suite's own:
#                        connections, stimeout and the pool of
#                        examples/pptpd.conf, every other limit at the
#                        daemon's default (connections-per-client 32, which
#                        the suite is told but does not write)
#   PPTPD_ATTACK_DATAPATH=kernel  our server on the kernel data path
#                        (`datapath kernel` with the plugin of the server's
#                        tree): the live session must be on it, and the
#                        server must say its GRE guard is on, unless
#   PPTPD_ATTACK_UNGUARDED=1  the server runs the kernel path without the
#                        guard (a build from before it: the reproduction)
#   E2E_PRIVSEP=no       our server with `privsep no` (one root process,
#                        for debugging; the default is its monitor and
#                        worker, doc/design/privsep.md)
#   E2E_KEEP=1           keep the work directory; E2E_VERBOSE=1 show logs
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"
server=${PPTPD_SERVER:-$root/pptpd/pptpd}
stimeout=5
connections=250
pool=198.19.0.10-90
per_client=${PPTPD_PER_CLIENT:-8}
per_client_key=${PPTPD_PER_CLIENT_KEY:-connections-per-client}
write_per_client=1
datapath=${PPTPD_ATTACK_DATAPATH:-}
case "$datapath" in
''|engine|kernel) ;;
*) echo "attack: PPTPD_ATTACK_DATAPATH: engine or kernel, not '$datapath'" >&2; exit 1 ;;
esac
if [ "${PPTPD_ATTACK_SHIPPED:-0}" = 1 ]; then
	shipped() { awk -v k="$1" '$1 == k { print $2; exit }' "$root/examples/pptpd.conf"; }
	stimeout=$(shipped stimeout)
	connections=$(shipped connections)
	pool=$(shipped remoteip)
	per_client=32   # pptpd's CONF_DEFAULT_PER_CLIENT
	write_per_client=
fi

say() { printf '# %s\n' "$*"; }
die() { printf 'attack: %s\n' "$*" >&2; exit 1; }

# ------------------------------------------------ the second real client
# Called back by attack.py (through --real-client-cmd) once every attack
# is done: a brand-new session from the attacker's namespace must come up
# and carry traffic.
if [ "${1:-}" = real-client ]; then
	# pptp-linux shares one control connection per server between all its
	# calls through a socket in /var/run/pptp: without a private one this
	# call would ride on the live client's connection (from another
	# address) and its GRE would rightly be dropped.
	if [ -z "${ATTACK_PRIVATE_RUN:-}" ]; then
		export ATTACK_PRIVATE_RUN=1
		exec unshare --mount --propagation private "$self" real-client
	fi
	mkdir -p /var/run/pptp
	mount -t tmpfs tmpfs /var/run/pptp
	log=$ATTACK_WORK/second-client.log
	: >"$log"
	ip netns exec "$ATTACK_NS_ATK" pppd pty "pptp 198.18.0.1 --nolaunchpppd --nohostroute" \
		name second user second remotename pptpd \
		refuse-pap refuse-chap refuse-mschap refuse-eap \
		noauth nodetach nodefaultroute noipdefault nopersist \
		require-mppe-128 nobsdcomp nodeflate novj novjccomp \
		lcp-echo-interval 0 lcp-max-configure 40 debug logfile "$log" >>"$log.out" 2>&1 &
	pid=$!
	up=
	for _ in $(seq 450); do
		grep -q 'local  IP address' "$log" && { up=1; break; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	rc=1
	if [ -z "$up" ]; then
		echo "second session did not come up: $(tail -n 2 "$log" | tr '\n' ' ')"
	elif ip netns exec "$ATTACK_NS_ATK" ping -n -c 5 -i 0.2 -W 3 198.19.0.1 >"$ATTACK_WORK/second-ping" 2>&1; then
		echo "second session up, $(grep -o '[0-9]* received' "$ATTACK_WORK/second-ping") of 5"
		rc=0
	else
		echo "second session up but no traffic: $(tail -n 2 "$ATTACK_WORK/second-ping" | tr '\n' ' ')"
	fi
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null || true
	exit $rc
fi

# ---------------------------------------------------------------- stage 0
if [ -z "${PPTPD_ATTACK_STAGE:-}" ]; then
	[ -x "$server" ] || die "server $server not built (make, or set PPTPD_SERVER=/usr/sbin/pptpd)"
	for t in pppd pptp ip ping unshare python3; do
		command -v "$t" >/dev/null || die "$t not installed"
	done
	if [ ! -e /dev/ppp ] && ! modprobe -q ppp_generic 2>/dev/null; then
		[ -z "${PPTPD_IN_VM:-}" ] || die "no PPP in the VM's kernel"
		say "no PPP in this kernel: running in the VM test bed"
		export PPTPD_SERVER=$server
		VM_ENV="${VM_ENV:-} E2E_KEEP E2E_VERBOSE" \
			exec bash "$root/scripts/e2e-run" "$self" "$@"
	fi
	modprobe -q ppp_mppe 2>/dev/null || true
	modprobe -q pptp 2>/dev/null || true
	[ "$(id -u)" = 0 ] || die "must run as root"
	export PPTPD_ATTACK_STAGE=1
	exec unshare --mount --propagation private "$self" "$@"
fi

# ---------------------------------------------------------------- setup
work=$(mktemp -d /tmp/attack.XXXXXX)
ns_s=atk-srv-$$ ns_c=atk-cli-$$ ns_a=atk-atk-$$
server_pid= live_pid=
cleanup() {
	set +e
	[ -n "$live_pid" ] && kill "$live_pid" 2>/dev/null
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	for ns in "$ns_c" "$ns_a" "$ns_s"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	sleep 0.5
	for ns in "$ns_c" "$ns_a" "$ns_s"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "# work dir kept: $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

: >"$work/options"
mkdir -p "$work/empty.d"
cat >"$work/chap-secrets" <<'EOF'
# client	server	secret		addresses
live		pptpd	live-secret	*
second		pptpd	second-secret	*
EOF
chmod 600 "$work/chap-secrets"
for f in options chap-secrets; do
	[ -e "/etc/ppp/$f" ] || die "/etc/ppp/$f missing (package ppp)"
	mount --bind "$work/$f" "/etc/ppp/$f"
done
for d in ip-up.d ip-down.d; do
	[ -d "/etc/ppp/$d" ] && mount --bind "$work/empty.d" "/etc/ppp/$d"
done

cat >"$work/options.pptpd" <<EOF
name pptpd
refuse-pap
refuse-chap
refuse-mschap
require-mschap-v2
require-mppe-128
nobsdcomp
nodeflate
novj
novjccomp
nologfd
lcp-echo-interval 0
logfile $work/server-pppd.log
EOF
{
	echo "option $work/options.pptpd"
	echo "localip 198.19.0.1"
	echo "remoteip $pool"
	echo "stimeout $stimeout"
	echo "connections $connections"
	case "$server" in
	*/usr/sbin/pptpd) per_client=0 ;;   # Poptop has no such key
	*)
		[ "$per_client" -gt 0 ] && [ -n "$write_per_client" ] &&
			echo "$per_client_key $per_client"
		if [ "$datapath" = kernel ]; then
			# The plugin makes the kernel's channel pppd's: the one
			# built with the server.
			echo "plugin $(dirname "$server")/../plugin/pptpd-policy.so"
			echo "datapath kernel"
		else
			# The per-peer MPPE plugin is not what is under attack here.
			echo "noplugin"
			[ -z "$datapath" ] || echo "datapath $datapath"
		fi
		# tests/e2e/without-privsep's switch: one root process, not
		# the monitor and its worker (the default).
		[ -z "${E2E_PRIVSEP:-}" ] || echo "privsep $E2E_PRIVSEP"
		;;
	esac
} >"$work/pptpd.conf"
# The worker's user (privsep yes is the default).
[ "${E2E_PRIVSEP:-}" = no ] || "$root/scripts/privsep-user"

# One bridge in the server's namespace; the client and the attacker hang
# off it. 198.18.0.0/16 everywhere; the tunnel uses 198.19.0.0/24.
ip netns add "$ns_s"
ip netns add "$ns_c"
ip netns add "$ns_a"
ip -n "$ns_s" link set lo up
ip -n "$ns_s" link add br0 type bridge
ip -n "$ns_s" addr add 198.18.0.1/16 dev br0
ip -n "$ns_s" link set br0 up
i=0
for pair in "$ns_c:198.18.0.2" "$ns_a:198.18.0.3"; do
	ns=${pair%%:*} addr=${pair#*:}
	i=$((i + 1))
	ip link add "atks$i-$$" type veth peer name "atkc$i-$$"
	ip link set "atks$i-$$" netns "$ns_s"
	ip link set "atkc$i-$$" netns "$ns"
	ip -n "$ns_s" link set "atks$i-$$" master br0 up
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "atkc$i-$$" name eth0
	ip -n "$ns" addr add "$addr/16" dev eth0
	ip -n "$ns" link set eth0 up
done
ip -n "$ns_a" addr add 198.18.0.4/16 dev eth0
for j in $(seq 1 100); do
	ip -n "$ns_a" addr add "198.18.1.$j/16" dev eth0
done
# Forged sources must reach the server: no reverse-path filter there.
ip netns exec "$ns_s" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.br0.rp_filter=0 2>/dev/null || true

say "server: $server"
case "$server" in
*/usr/sbin/pptpd)
	# Poptop logs to syslog; -f keeps it in the foreground.
	ip netns exec "$ns_s" "$server" -f -d -c "$work/pptpd.conf" -p "$work/pptpd.pid" \
		>"$work/server.log" 2>&1 &
	;;
*)
	ip netns exec "$ns_s" "$server" -f -d -c "$work/pptpd.conf" -p "$work/pptpd.pid" \
		>"$work/server.log" 2>&1 &
	;;
esac
server_pid=$!
for _ in $(seq 50); do
	grep -q ':1723 ' <<<"$(ip netns exec "$ns_s" ss -ltn 2>/dev/null)" && break
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.2
done
# (read whole first: grep -q ending the pipe early fails it under pipefail)
grep -q ':1723 ' <<<"$(ip netns exec "$ns_s" ss -ltn)" || {
	cat "$work/server.log"
	die "server is not listening on 1723"
}

# The live session.
: >"$work/live.log"
ip netns exec "$ns_c" pppd pty "pptp 198.18.0.1 --nolaunchpppd --nohostroute" \
	name live user live remotename pptpd \
	refuse-pap refuse-chap refuse-mschap refuse-eap \
	noauth nodetach nodefaultroute noipdefault nopersist \
	require-mppe-128 nobsdcomp nodeflate novj novjccomp \
	lcp-echo-interval 0 lcp-max-configure 40 debug logfile "$work/live.log" \
	>"$work/live.out" 2>&1 &
live_pid=$!
# A loaded host makes the emulated guest slow: be patient here.
up=
for _ in $(seq 600); do
	grep -q 'local  IP address' "$work/live.log" && { up=1; break; }
	kill -0 "$live_pid" 2>/dev/null || break
	sleep 0.2
done
if [ -z "$up" ]; then
	echo "# ---- server.log"; sed 's/^/#   /' "$work/server.log" | tail -n 40
	echo "# ---- live.log"; sed 's/^/#   /' "$work/live.log" | tail -n 40
	die "the live session did not come up"
fi
ip netns exec "$ns_c" ping -n -c 3 -i 0.2 -W 3 198.19.0.1 >/dev/null ||
	die "the live session carries no traffic"
say "live session up: $(grep 'local  IP address' "$work/live.log" | tail -n 1 | tr -s ' ')"
say "$(grep -o 'data path: .*' "$work/server.log" | head -n 1 | cut -c1-160)"
if [ "$datapath" = kernel ]; then
	# The suite proves nothing about the kernel path unless the live call
	# is on it (its pppd runs with the kernel channel's plugin options),
	# and nothing about the guard unless the server runs it.
	on_kernel=
	for p in $(ip netns pids "$ns_s"); do
		grep -qa pptpd-kernel "/proc/$p/cmdline" 2>/dev/null && on_kernel=1
	done
	[ -n "$on_kernel" ] || die "PPTPD_ATTACK_DATAPATH=kernel: the live call is not on the kernel path"
	if [ "${PPTPD_ATTACK_UNGUARDED:-0}" = 1 ]; then
		say "kernel path WITHOUT the GRE guard (PPTPD_ATTACK_UNGUARDED=1)"
	elif ! grep -q 'kernel PPTP channel with its GRE guard' "$work/server.log"; then
		die "PPTPD_ATTACK_DATAPATH=kernel: the server does not run its GRE guard"
	fi
fi

export ATTACK_WORK=$work ATTACK_NS_ATK=$ns_a
set +e
python3 "$here/attack.py" \
	--server 198.18.0.1 --client 198.18.0.2 --tunnel-ip 198.19.0.1 \
	--srv-ns "$ns_s" --cli-ns "$ns_c" --atk-ns "$ns_a" \
	--atk-src 198.18.0.3 --legit-src 198.18.0.4 --flood-srcs 198.18.1.1-100 \
	--pid "$server_pid" --live-pid "$live_pid" --log "$work/server.log" \
	--stimeout "$stimeout" --connections "$connections" \
	--per-client "$per_client" \
	--real-client-cmd "$self real-client" \
	--only "${PPTPD_ATTACK_ONLY:-}" --pick "${PPTPD_ATTACK_PICK:-}"
rc=$?
set -e
kill -0 "$server_pid" 2>/dev/null || say "the server died"
if [ "$rc" != 0 ] || [ "${E2E_VERBOSE:-0}" = 1 ]; then
	for f in server.log server-pppd.log live.log second-client.log; do
		[ -s "$work/$f" ] || continue
		echo "# ---- $f (last 60 lines)"
		tail -n 60 "$work/$f" | sed 's/^/#   /'
	done
fi
exit $rc
