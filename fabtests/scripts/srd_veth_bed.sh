#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_veth_bed.sh [-n NAME] COMMAND [ARGS]
#
# The real-MTU test bed (needs root): two network namespaces, hosts A
# and B, joined by veth pairs of a chosen MTU and no rate limit; what a
# data path meets on an Ethernet link, without the 64 KiB datagrams of
# loopback.
#
#   A eth0 10.89.0.10 ====== B eth0 10.89.0.20
#     eth1 10.89.0.11 ====== B eth1 10.89.0.21     (-v 2 ...)
#
# Every pair is in one subnet (10.89.0.0/24).  With more than one pair,
# each host routes by source address (a policy rule and table per
# interface) and answers ARP only on the interface that owns the
# address, so traffic from ethI's address leaves by ethI: the
# multi-socket case, one endpoint per interface.
#
# "up" returns once every link is running (operstate up) and B answers
# on each (a TCP connect to a closed port is refused): fi_getinfo in the first moments after a veth is set up
# finds it not running and skips it (FI_LOG_LEVEL=debug names the
# reason), and a program would fall back to another address.
#
# The sft programs' servers listen for the out-of-band exchange on
# 127.0.0.1 unless -b (or SFT_OOB_ADDR) names an address; run servers in
# B with -b $(srd_veth_bed.sh addr b), which binds their endpoint there
# too.
#
# Commands:
#   up [-m MTU] [-v NVETH]  create the bed (MTU default 1500, 1 pair,
#                           at most 8)
#   down                    remove it (kills what still runs in it);
#                           idempotent
#   exec a|b CMD...         run CMD in host A or B
#   addr a|b [I]            print the address of ethI (default 0)
#   mtu MTU                 set the MTU of every link
#
# Namespaces are NAME-a and NAME-b; NAME (-n, else $SRD_BED_NAME, else
# "srdveth") keeps parallel beds apart.
set -u

prog=$(basename "$0")
name=${SRD_BED_NAME:-srdveth}
# shellcheck source=srd_bed_lib.sh
. "$(dirname "$0")/srd_bed_lib.sh"

usage() {
	sed -n '3,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-n) [ $# -ge 2 ] || usage; name=$2; shift 2 ;;
	-h) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
cmd=$1
shift
case "$name" in
''|*[!A-Za-z0-9_.-]*) die "bad bed name '$name'" ;;
esac
[ ${#name} -le 24 ] || die "bed name '$name' longer than 24 characters"
NS_A="$name-a"
NS_B="$name-b"

exists() { bed_exists "$1"; }

host_ns() {
	case "$1" in
	a|A) echo "$NS_A" ;;
	b|B) echo "$NS_B" ;;
	*) die "host must be a or b, not '$1'" ;;
	esac
}

host_addr() {	# host_addr a|b I
	case "$1" in
	a|A) echo "10.89.0.$((10 + $2))" ;;
	*) echo "10.89.0.$((20 + $2))" ;;
	esac
}

need_bed() {
	exists "$NS_A" && exists "$NS_B" ||
		die "bed '$name' is not up (run: $prog -n $name up)"
}

check_mtu() {
	case "$1" in ''|*[!0-9]*) die "bad MTU '$1'" ;; esac
	[ "$1" -ge 1280 ] && [ "$1" -le 65535 ] || die "MTU must be 1280..65535"
}

do_down() {
	local ns list=()
	for ns in "$NS_A" "$NS_B"; do
		exists "$ns" && list+=("$ns")
	done
	[ ${#list[@]} = 0 ] || bed_del_namespaces "${list[@]}"
	! exists "$NS_A" && ! exists "$NS_B"
}



# reachable SRC DST: a TCP connect from A's SRC to a closed port of
# DST is refused (an answer) rather than timing out, 2 s at most
reachable() {
	ip netns exec "$NS_A" python3 - "$1" "$2" <<'EOF'
import socket, sys
s = socket.socket()
s.settimeout(2)
s.bind((sys.argv[1], 0))
try:
    s.connect((sys.argv[2], 9))
except ConnectionRefusedError:
    sys.exit(0)
except OSError:
    sys.exit(1)
sys.exit(0)
EOF
}

do_up() {
	local mtu=1500 nveth=1 opt i ns h dev addr
	OPTIND=1
	while getopts "m:v:" opt; do
		case "$opt" in
		m) mtu=$OPTARG ;;
		v) nveth=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# = 0 ] || usage
	check_mtu "$mtu"
	case "$nveth" in [1-8]) ;; *) die "-v must be 1..8" ;; esac
	exists "$NS_A" || exists "$NS_B" &&
		die "bed '$name' exists (run: $prog -n $name down)"
	trap 'do_down; exit 1' EXIT

	for ns in "$NS_A" "$NS_B"; do
		ip netns add "$ns" || die "cannot create namespace $ns"
		ip -n "$ns" link set lo up || die "lo up in $ns failed"
		bed_sysctls "$ns" net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 \
			net.ipv4.conf.all.arp_ignore=1 \
			net.ipv4.conf.all.arp_announce=2
	done
	for i in $(seq 0 $((nveth - 1))); do
		dev="eth$i"
		ip link add "$dev" netns "$NS_A" mtu "$mtu" type veth peer \
			name "$dev" netns "$NS_B" mtu "$mtu" ||
			die "creating veth $dev failed"
		for h in a b; do
			ns=$(host_ns "$h")
			addr=$(host_addr "$h" "$i")
			ip -n "$ns" addr add "$addr/24" dev "$dev" ||
				die "address $addr on $ns/$dev failed"
			ip -n "$ns" link set "$dev" up || die "$ns/$dev up failed"
			if [ "$i" -gt 0 ]; then
				ip -n "$ns" rule add from "$addr" table $((100 + i)) &&
				ip -n "$ns" route add 10.89.0.0/24 dev "$dev" \
					src "$addr" table $((100 + i)) ||
					die "source routing of $ns/$dev failed"
			fi
		done
	done
	bed_wait_running "$NS_A" && bed_wait_running "$NS_B" ||
		die "links not running after 5 s"
	for i in $(seq 0 $((nveth - 1))); do
		reachable "$(host_addr a "$i")" "$(host_addr b "$i")" ||
			die "B does not answer on eth$i"
	done
	trap - EXIT
	echo "bed '$name' up: $nveth veth pair(s), MTU $mtu"
}

do_mtu() {
	local mtu=${1:-} ns dev
	check_mtu "$mtu"
	need_bed
	for ns in "$NS_A" "$NS_B"; do
		for dev in $(ip -n "$ns" -o link show | sed -n 's/^[0-9]*: \(eth[0-9]*\)@.*/\1/p'); do
			ip -n "$ns" link set "$dev" mtu "$mtu" ||
				die "MTU $mtu on $ns/$dev failed"
		done
	done
}

case "$cmd" in
up) do_up "$@" ;;
down) do_down ;;
exec)
	[ $# -ge 2 ] || usage
	ns=$(host_ns "$1")
	shift
	need_bed
	exec ip netns exec "$ns" "$@"
	;;
addr)
	[ $# -ge 1 ] || usage
	host_ns "$1" >/dev/null
	i=${2:-0}
	case "$i" in [0-7]) ;; *) die "interface index must be 0..7" ;; esac
	host_addr "$1" "$i"
	;;
mtu) do_mtu "$@" ;;
*) usage ;;
esac
