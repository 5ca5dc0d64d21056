#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_ecmp_bed.sh [-n NAME] COMMAND [ARGS]
#
# An ECMP test bed in network namespaces (needs root):
#
#   A  --- R1 ==l1..lK== R2 --- B
#   A2 ---/                          (-a N: hosts A, A2..AN on R1)
#
# Hosts A (10.88.1.2) and B (10.88.2.2), extra hosts Aj (10.88.<j+1>.2,
# j >= 2) hang off routers R1 and R2 by one veth each (host side "eth0",
# router side "hA", "hAj", "hB"); R1 and R2 are joined by K parallel veth
# links l1..lK (10.88.<100+i>.0/30, R1 .1, R2 .2).  R1 routes B's subnet
# over K equal next hops, R2 every A-side subnet likewise; the routers
# hash on the 5-tuple (fib_multipath_hash_policy=1), so flows with
# different UDP source ports take different links.  rp_filter is off and
# ignore_routes_with_linkdown on in the routers; MTU 1500 everywhere.
#
# Namespaces are "NAME-a", "NAME-a2".., "NAME-b", "NAME-r1", "NAME-r2";
# NAME (-n, else $SRD_BED_NAME, else "srdbed") keeps parallel beds apart.
# Addresses are the same in every bed: they live inside the namespaces.
#
# Loss (-l / "loss"): in each router an nftables rule drops LOSS % (up to
# two decimals) of the packets it sends onto l1..lK, drawn with
# "numgen random"; so a packet crossing the bed meets exactly one lossy
# hop in each direction.  Only UDP is dropped unless -L all (then every
# IPv4 packet, TCP included).  Host links are never lossy.
# Blackhole ("blackhole I"): both routers drop everything they send onto
# link I, the routes still use it (a silent failure).  "linkdown I" sets
# the link down on both sides instead (the routes drop the next hop).
# Rate (-r MBIT / "rate"): a tbf qdisc on both ends of every link
# l1..lK, so each is limited in both directions and K links carry K times
# one; -R MBIT / "rate MBIT hosts" limits the hosts' links instead (the
# receiver's own link is then the bottleneck of an incast).
#
# The sft programs' servers listen for the out-of-band address exchange
# on 127.0.0.1 only.  So that a client in another host reaches them, each
# host DNATs TCP to its own address, ports OOB_LO-OOB_HI (-o, default
# 20000-31999), to 127.0.0.1 (route_localnet=1).  Other TCP ports (those a
# tcp provider listens on) are left alone.
#
# Commands:
#   up [-k K] [-r RATE_MBIT] [-R HOST_RATE_MBIT] [-l LOSS] [-L udp|all]
#      [-a NHOSTS_A] [-o LO-HI]
#                       create the bed (K default 4, no rate limit, no
#                       loss, 1 host on the A side)
#   down                remove it (kills what still runs in it); idempotent
#   exec HOST CMD...    run CMD in host A, A2.., B or router R1, R2
#   addr HOST           print the host's address
#   blackhole I | unblackhole I
#   linkdown I | linkup I
#   faultcmds blackhole|linkdown|none I | faultcmds rate I MBIT
#                       print the commands (one per line, for eval) that
#                       black-hole link I, set it down, limit it to MBIT
#                       in both directions, or change nothing at the same
#                       kind of cost: for a caller that times the fault
#                       while its endpoints keep the cores busy.  In each
#                       router it first starts and warms the tool that
#                       will apply it (nft -i, ip -batch or tc -batch,
#                       waiting on a FIFO), and each command is the
#                       shell's builtin printf of one line into that
#                       FIFO: nothing starts at the fault.  Undo with
#                       unblackhole, linkup or rate, and stop the tools
#                       with faultreap
#   faultreap           stop the tools faultcmds started, and wait until
#                       they are gone; fails if one had exited before or
#                       said anything on stderr (a command that failed)
#   loss LOSS [udp|all] set the loss on every link (0 = none)
#   rate MBIT [hosts]   set the rate limit on every link l1..lK, or with
#                       "hosts" on every host link (0 = none)
#   counters            one line per link l1..lK:
#                         link r1_tx_bytes r2_tx_bytes r1_tx_packets
#                         r2_tx_packets loss_drops bh_drops r1_loss_drops
#                         r2_loss_drops
#                       (tx = what each router sent onto the link; drops =
#                       packets the loss / blackhole rules dropped, both
#                       routers, then the loss drops of R1 and of R2:
#                       R1's are what hosts A.. sent); a header line
#                       starts with '#'
#   flows               UDP flows seen per link: "R LINK SRC:SPORT DST:DPORT"
#                       (R = r1 for A->B, r2 for B->A); flushflows clears
#   selftest            ping from every A-side host to B, then UDP from 16*K
#                       source ports A->B: every link must carry some
#   status              print the bed's namespaces, links and settings
#
# Exit status: 0 success, 1 failure, 2 usage, 77 not root / tools missing.
# shellcheck disable=SC2015 # "A && B || die" is meant: die if either fails
set -u

prog=$(basename "$0")
name=${SRD_BED_NAME:-srdbed}
# shellcheck source=srd_bed_lib.sh
. "$(dirname "$0")/srd_bed_lib.sh"

usage() {
	sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-n) [ $# -ge 2 ] || usage; name=$2; shift 2 ;;
	-h|--help) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
cmd=$1
shift

case "$name" in
''|*[!A-Za-z0-9_.-]*) die "bad bed name '$name' (letters, digits, _ . -)" ;;
esac
[ ${#name} -le 40 ] || die "bed name '$name' too long (40 at most)"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: $prog needs root (network namespaces, nftables, tc)"
	exit 77
fi
for tool in ip nft tc nsenter; do
	command -v "$tool" >/dev/null ||
		{ echo "SKIP: $prog: $tool not found"; exit 77; }
done

NS_R1="$name-r1"
NS_R2="$name-r2"
NS_B="$name-b"
TABLE=srdbed		# nftables table in routers and hosts

# ns_of HOST: namespace of a host/router name (A, A2.., B, R1, R2)
ns_of() {
	case "$1" in
	A|a|A1|a1) echo "$name-a" ;;
	A[2-9]|a[2-9]) echo "$name-a${1#?}" ;;
	B|b) echo "$NS_B" ;;
	R1|r1) echo "$NS_R1" ;;
	R2|r2) echo "$NS_R2" ;;
	*) return 1 ;;
	esac
}

# subnet octet of A-side host j (1 = A): A 10.88.1, Aj 10.88.(j+1)
a_net() {
	if [ "$1" = 1 ]; then echo 1; else echo $(($1 + 1)); fi
}

exists() { bed_exists "$1"; }

# our namespaces that exist now
bed_namespaces() {
	ip netns list 2>/dev/null | awk '{print $1}' |
		grep -E -- "^$(printf '%s' "$name" | sed 's/[.]/[.]/g')-(a[0-9]*|b|r1|r2)\$"
}

need_bed() {
	exists "$NS_R1" && exists "$NS_R2" ||
		die "bed '$name' is not up (run: $prog -n $name up)"
}

# links: the numbers i of l1..lK, read from R1
links() {
	ip -n "$NS_R1" -o link show 2>/dev/null |
		sed -n 's/^[0-9]*: l\([0-9]*\)@.*/\1/p' | sort -n
}

# a_hosts: the indexes j of the A-side hosts (1 = A)
a_hosts() {
	local ns
	for ns in $(bed_namespaces); do
		case "$ns" in
		"$name-a") echo 1 ;;
		"$name-a"[0-9]*) echo "${ns#"$name-a"}" ;;
		esac
	done | sort -n
}

check_link_no() {
	case "$1" in
	''|*[!0-9]*) die "bad link number '$1'" ;;
	esac
	links | grep -qx -- "$1" || die "no link l$1 in bed '$name'"
}

# percent with up to 2 decimals -> basis points (0..10000)
basis_points() {
	local p=$1 int frac
	case "$p" in
	''|*[!0-9.]*|*.*.*) return 1 ;;
	esac
	int=${p%%.*}
	frac=
	[ "$int" != "$p" ] && frac=${p#*.}
	[ ${#frac} -le 2 ] || return 1
	frac="${frac}00"
	frac=${frac:0:2}
	int=${int:-0}
	[ $((10#$int)) -le 100 ] || return 1
	local bp=$((10#$int * 100 + 10#$frac))
	[ "$bp" -le 10000 ] || return 1
	echo "$bp"
}

# bed_ping NS DST: one ICMP echo (ping(8) if present, else python3), 2 s
bed_ping() {
	if command -v ping >/dev/null; then
		ip netns exec "$1" ping -c 1 -W 2 "$2" >/dev/null
		return
	fi
	ip netns exec "$1" python3 - "$2" <<'EOF'
import os, socket, struct, sys, time
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
ident = os.getpid() & 0xffff
pkt = struct.pack("!BBHHH", 8, 0, 0, ident, 1) + b"srdbed00"
pkt = pkt[:2] + struct.pack("!H", csum(pkt)) + pkt[4:]
s.sendto(pkt, (sys.argv[1], 0))
end = time.time() + 2
while time.time() < end:
    s.settimeout(max(0.01, end - time.time()))
    try:
        data, src = s.recvfrom(2048)
    except socket.timeout:
        break
    ihl = (data[0] & 15) * 4
    t, _, _, i, _ = struct.unpack("!BBHHH", data[ihl:ihl + 8])
    if t == 0 and i == ident and src[0] == sys.argv[1]:
        sys.exit(0)
sys.exit(1)
EOF
}

# ---------------------------------------------------------------------------
do_down() {
	# shellcheck disable=SC2046 # one word per namespace
	bed_del_namespaces $(bed_namespaces)
	rm -rf "$(fault_dir)"	# its tools ran in the routers: gone now
	[ -z "$(bed_namespaces)" ]
}

# set_loss NS BASIS_POINTS PROTO: (re)write the loss rules of a router
set_loss() {
	local ns=$1 bp=$2 proto=$3 i match rules=
	case "$proto" in
	udp) match="meta l4proto udp" ;;
	all) match="meta nfproto ipv4" ;;
	*) die "loss protocol must be udp or all" ;;
	esac
	rules="flush chain inet $TABLE bed_loss"$'\n'
	if [ "$bp" -gt 0 ]; then
		for i in $(links); do
			rules+="add rule inet $TABLE bed_loss oifname \"l$i\" $match"
			rules+=" numgen random mod 10000 < $bp counter name \"loss_l$i\" drop"$'\n'
		done
	fi
	printf '%s' "$rules" | ip netns exec "$ns" nft -f - ||
		die "nft: setting loss in $ns failed"
}

# tbf_burst MBIT: the tbf's burst for that rate, 4 ms worth of bytes, at
# least 4 full frames (set_rate and faultcmds rate)
tbf_burst() {
	local burst=$(($1 * 1000000 / 8 / 250))
	echo $((burst < 6056 ? 6056 : burst))
}

# set_rate DEV_NS DEV MBIT
set_rate() {
	local ns=$1 dev=$2 mbit=$3
	if [ "$mbit" = 0 ]; then
		tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null
		return 0
	fi
	tc -n "$ns" qdisc replace dev "$dev" root tbf rate "${mbit}mbit" \
		burst "$(tbf_burst "$mbit")" latency 20ms ||
		die "tc: tbf on $ns/$dev failed"
}

link_devs() {	# "NS DEV" for both ends of l1..lK
	local i
	for i in $(links); do
		echo "$NS_R1 l$i"
		echo "$NS_R2 l$i"
	done
}

host_devs() {	# "NS DEV" for both ends of every host link
	local j
	for j in $(a_hosts); do
		if [ "$j" = 1 ]; then
			echo "$name-a eth0"; echo "$NS_R1 hA"
		else
			echo "$name-a$j eth0"; echo "$NS_R1 hA$j"
		fi
	done
	echo "$NS_B eth0"
	echo "$NS_R2 hB"
}

router_nft() {	# the routers' table: blackhole, loss, flow records
	local i
	echo "table inet $TABLE {"
	echo "  set blackholed { type ifname; }"
	for i in "$@"; do
		echo "  counter loss_l$i { }"
		echo "  counter bh_l$i { }"
		echo "  set flows_l$i { type ipv4_addr . inet_service . ipv4_addr . inet_service; flags dynamic; size 65536; }"
	done
	echo "  chain bed_loss { }"
	echo "  chain bed_fwd {"
	echo "    type filter hook forward priority 0; policy accept;"
	for i in "$@"; do
		echo "    oifname \"l$i\" oifname @blackholed counter name \"bh_l$i\" drop"
	done
	echo "    jump bed_loss"
	for i in "$@"; do
		echo "    oifname \"l$i\" meta l4proto udp add @flows_l$i { ip saddr . udp sport . ip daddr . udp dport }"
	done
	echo "  }"
	echo "}"
}

host_nft() {	# OOB DNAT to loopback
	local addr=$1 range=$2
	cat <<EOF
table ip $TABLE {
  chain pre {
    type nat hook prerouting priority -100; policy accept;
    ip daddr $addr tcp dport $range dnat to 127.0.0.1
  }
}
EOF
}

sysctls() { bed_sysctls "$@"; }


# veth NS1 DEV1 NS2 DEV2: a veth pair made directly in the namespaces
veth() {
	ip link add "$2" netns "$1" mtu 1500 type veth peer name "$4" \
		netns "$3" mtu 1500 ||
		die "creating veth $1/$2 -- $3/$4 failed"
	ip -n "$1" link set "$2" up && ip -n "$3" link set "$4" up ||
		die "setting $2/$4 up failed"
}

do_up() {
	local k=4 rate=0 hrate=0 loss=0 proto=udp na=1 oob=20000-31999 opt
	local i j net nh ns bp dev
	OPTIND=1
	while getopts "k:r:R:l:L:a:o:" opt; do
		case "$opt" in
		k) k=$OPTARG ;;
		r) rate=$OPTARG ;;
		R) hrate=$OPTARG ;;
		l) loss=$OPTARG ;;
		L) proto=$OPTARG ;;
		a) na=$OPTARG ;;
		o) oob=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# = 0 ] || usage
	case "$k" in ''|*[!0-9]*) die "bad -k '$k'" ;; esac
	[ "$k" -ge 1 ] && [ "$k" -le 16 ] || die "-k must be 1..16"
	case "$rate" in ''|*[!0-9]*) die "bad -r '$rate' (Mbit/s)" ;; esac
	case "$hrate" in ''|*[!0-9]*) die "bad -R '$hrate' (Mbit/s)" ;; esac
	case "$na" in [1-8]) ;; *) die "-a must be 1..8" ;; esac
	case "$proto" in udp|all) ;; *) die "-L must be udp or all" ;; esac
	case "$oob" in
	[0-9]*-[0-9]*) ;;
	*) die "-o wants LO-HI" ;;
	esac
	bp=$(basis_points "$loss") || die "bad loss '$loss' (0..100, 2 decimals)"

	[ -z "$(bed_namespaces)" ] ||
		die "bed '$name' exists (run: $prog -n $name down)"
	# from here on a failure removes what was built
	trap 'do_down; exit 1' EXIT

	for ns in "$NS_R1" "$NS_R2" "$NS_B" $(for j in $(seq 1 "$na"); do
			if [ "$j" = 1 ]; then echo "$name-a"; else echo "$name-a$j"; fi
		done); do
		ip netns add "$ns" || die "cannot create namespace $ns"
		ip -n "$ns" link set lo up || die "lo up in $ns failed"
	done

	# routers
	for ns in "$NS_R1" "$NS_R2"; do
		sysctls "$ns" net.ipv4.ip_forward=1 \
			net.ipv4.fib_multipath_hash_policy=1 \
			net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 \
			net.ipv4.conf.all.ignore_routes_with_linkdown=1 \
			net.ipv4.conf.default.ignore_routes_with_linkdown=1
	done
	for i in $(seq 1 "$k"); do
		veth "$NS_R1" "l$i" "$NS_R2" "l$i"
		ip -n "$NS_R1" addr add "10.88.$((100 + i)).1/30" dev "l$i" &&
		ip -n "$NS_R2" addr add "10.88.$((100 + i)).2/30" dev "l$i" ||
			die "addresses on l$i failed"
	done

	# hosts
	for j in $(seq 1 "$na"); do
		net=$(a_net "$j")
		if [ "$j" = 1 ]; then ns="$name-a"; dev=hA; else ns="$name-a$j"; dev="hA$j"; fi
		veth "$ns" eth0 "$NS_R1" "$dev"
		ip -n "$ns" addr add "10.88.$net.2/24" dev eth0 &&
		ip -n "$NS_R1" addr add "10.88.$net.1/24" dev "$dev" &&
		ip -n "$ns" route add default via "10.88.$net.1" ||
			die "addresses/routes of host A$j failed"
		sysctls "$ns" net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.all.route_localnet=1 \
			net.ipv4.conf.eth0.route_localnet=1
		host_nft "10.88.$net.2" "$oob" | ip netns exec "$ns" nft -f - ||
			die "nft in $ns failed"
	done
	veth "$NS_B" eth0 "$NS_R2" hB
	ip -n "$NS_B" addr add 10.88.2.2/24 dev eth0 &&
	ip -n "$NS_R2" addr add 10.88.2.1/24 dev hB &&
	ip -n "$NS_B" route add default via 10.88.2.1 ||
		die "addresses/routes of host B failed"
	sysctls "$NS_B" net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.all.route_localnet=1 \
		net.ipv4.conf.eth0.route_localnet=1
	host_nft 10.88.2.2 "$oob" | ip netns exec "$NS_B" nft -f - ||
		die "nft in $NS_B failed"

	# ECMP routes
	nh=()
	for i in $(seq 1 "$k"); do
		nh+=(nexthop via "10.88.$((100 + i)).2" dev "l$i" weight 1)
	done
	ip -n "$NS_R1" route add 10.88.2.0/24 "${nh[@]}" ||
		die "ECMP route on R1 failed"
	nh=()
	for i in $(seq 1 "$k"); do
		nh+=(nexthop via "10.88.$((100 + i)).1" dev "l$i" weight 1)
	done
	for j in $(seq 1 "$na"); do
		ip -n "$NS_R2" route add "10.88.$(a_net "$j").0/24" "${nh[@]}" ||
			die "ECMP route on R2 failed"
	done

	# nftables in the routers
	for ns in "$NS_R1" "$NS_R2"; do
		# shellcheck disable=SC2046 # one word per link
		router_nft $(seq 1 "$k") | ip netns exec "$ns" nft -f - ||
			die "nft in $ns failed"
		set_loss "$ns" "$bp" "$proto"
	done

	if [ "$hrate" != 0 ]; then
		host_devs | while read -r ns dev; do
			set_rate "$ns" "$dev" "$hrate" || exit 1
		done || die "host rate limit failed"
	fi
	if [ "$rate" != 0 ]; then
		link_devs | while read -r ns dev; do
			set_rate "$ns" "$dev" "$rate" || exit 1
		done || die "rate limit failed"
	fi

	# every link running (carrier on at both ends): in its first moments
	# a veth is up but not running, and fi_getinfo skips such links
	for ns in $(bed_namespaces); do
		bed_wait_running "$ns" || die "links of $ns not running after 5 s"
	done
	# neighbours answer: a ping from every A-side host to B, up to 5
	# tries (-L all applies the loss to ICMP too: at 5 % on each link a
	# round trip fails about 1 time in 5, so two tries failed about 1 bed
	# in 30)
	for j in $(seq 1 "$na"); do
		if [ "$j" = 1 ]; then ns="$name-a"; else ns="$name-a$j"; fi
		local try=0
		until bed_ping "$ns" 10.88.2.2; do
			try=$((try + 1))
			[ $try -lt 5 ] || die "ping from A$j to B failed (5 tries)"
		done
	done
	trap - EXIT
	echo "bed '$name' up: K=$k links, rate ${rate:-0} Mbit/s per link, ${hrate:-0} per host link, loss $loss % ($proto), $na A-side host(s), OOB DNAT $oob"
}

# ---------------------------------------------------------------------------
nft_counter() {	# NS NAME -> packets
	ip netns exec "$1" nft list counter inet "$TABLE" "$2" 2>/dev/null |
		sed -n 's/.*packets \([0-9]*\).*/\1/p' | head -n1
}

stat_of() {	# NS DEV FIELD
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3" 2>/dev/null ||
		echo 0
}

loss_drops() {	# packets all loss rules dropped so far
	local i n t=0
	for i in $(links); do
		n=$(nft_counter "$NS_R1" "loss_l$i")
		t=$((t + ${n:-0}))
	done
	echo "$t"
}

do_counters() {
	local i lp lq bp bq
	need_bed
	echo "# link r1_tx_bytes r2_tx_bytes r1_tx_packets r2_tx_packets loss_drops bh_drops r1_loss_drops r2_loss_drops"
	for i in $(links); do
		lp=$(nft_counter "$NS_R1" "loss_l$i")
		lq=$(nft_counter "$NS_R2" "loss_l$i")
		bp=$(nft_counter "$NS_R1" "bh_l$i")
		bq=$(nft_counter "$NS_R2" "bh_l$i")
		echo "l$i $(stat_of "$NS_R1" "l$i" tx_bytes)" \
			"$(stat_of "$NS_R2" "l$i" tx_bytes)" \
			"$(stat_of "$NS_R1" "l$i" tx_packets)" \
			"$(stat_of "$NS_R2" "l$i" tx_packets)" \
			"$(( ${lp:-0} + ${lq:-0} ))" "$(( ${bp:-0} + ${bq:-0} ))" \
			"${lp:-0}" "${lq:-0}"
	done
}

do_flows() {
	local i r ns
	need_bed
	for i in $(links); do
		for r in r1 r2; do
			if [ "$r" = r1 ]; then ns=$NS_R1; else ns=$NS_R2; fi
			ip netns exec "$ns" nft list set inet "$TABLE" "flows_l$i" |
				sed 's/[,{}]/\n/g' |
				sed -n 's/^[[:space:]]*\([0-9.]*\) \. \([0-9]*\) \. \([0-9.]*\) \. \([0-9]*\).*/\1:\2 \3:\4/p' |
				sed "s/^/$r l$i /"
		done
	done
}

do_flushflows() {
	local i ns
	need_bed
	for ns in "$NS_R1" "$NS_R2"; do
		for i in $(links); do
			ip netns exec "$ns" nft flush set inet "$TABLE" "flows_l$i" ||
				die "flushing flows_l$i in $ns failed"
		done
	done
}

do_blackhole() {	# add|delete I
	local op=$1 i=$2 ns
	need_bed
	check_link_no "$i"
	for ns in "$NS_R1" "$NS_R2"; do
		if [ "$op" = add ]; then
			ip netns exec "$ns" nft add element inet "$TABLE" blackholed "{ \"l$i\" }" ||
				die "blackhole l$i in $ns failed"
		else
			ip netns exec "$ns" nft list set inet "$TABLE" blackholed |
				grep -q "\"l$i\"" || continue
			ip netns exec "$ns" nft delete element inet "$TABLE" blackholed "{ \"l$i\" }" ||
				die "unblackhole l$i in $ns failed"
		fi
	done
}

# The commands that inflict a fault on link I in both routers, printed
# one per line (words shell-quoted, for eval), for a caller that times
# the fault while its endpoints busy-poll this machine's cores: the
# whole "blackhole" command (a bash script and two "ip netns exec",
# which remounts /sys) takes about 140 ms of CPU, and with two "exec
# R1|R2 tc qdisc show" at that moment and no fault the endpoints'
# longest gap in the next second rose from 2.9-5.8 ms to 6.6-12.9 ms
# (srd_fault_bench.sh, 2026-12-05); one nsenter or ip process per
# router at the fault still paid its start and, for nft, its first
# commands.  So each command is a builtin printf of one line to a tool
# started and warmed beforehand (fault_applier), guarded by a test that
# the FIFO is still one (after faultreap it would write a plain file
# and do nothing).  "none" hands its tool a no-op of the same kind as
# the black hole's (nft adds the table that is there), for the same
# window timed without a fault.
# Where faultcmds keeps its FIFOs, the pids of the tools reading them
# and what each said on stderr.
fault_dir() { echo "/run/srd_bed/$name"; }

# tool_alive PID: running, not a zombie (the tools are orphans, and an
# init that is slow to reap them must not make a dead one look alive)
tool_alive() {
	local state=Z
	read -r _ _ state _ <"/proc/$1/stat" 2>/dev/null
	[ "$state" != Z ]
}

# tool_cpu PID: the CPU time it has used, ns
tool_cpu() {
	local ns=0
	read -r ns _ <"/proc/$1/schedstat" 2>/dev/null
	echo "$ns"
}

# tool_waiting PID: asleep in a read of its FIFO (a reader that has
# been woken shows no wait channel)
tool_waiting() { grep -q pipe_read "/proc/$1/wchan" 2>/dev/null; }

# tool_ran_since PID CPU: it has run since its CPU time was CPU, and
# waits on its FIFO again
tool_ran_since() { [ "$(tool_cpu "$1")" -gt "$2" ] && tool_waiting "$1"; }

# tool_until PID CHECK...: whether CHECK holds within 2 s, tried every
# 10 ms; false as soon as the tool is gone
tool_until() {
	local pid=$1
	shift
	for _ in $(seq 1 200); do
		"$@" && return 0
		tool_alive "$pid" || return 1
		sleep 0.01
	done
	return 1
}

# tool_line PID FIFO LINE: hands the tool one line and waits (2 s at
# most) until it has run since and waits on its FIFO again: done
tool_line() {
	local pid=$1 cpu
	cpu=$(tool_cpu "$pid")
	printf '%s\n' "$3" 1<>"$2"
	tool_until "$pid" tool_ran_since "$pid" "$cpu"
}

# fault_applier NS TOOL I: starts TOOL (nft, ip or tc) in router
# namespace NS reading commands from a FIFO, warms it up on link I and
# prints the FIFO's path once the tool waits on it again.  The tool
# holds the FIFO open for writing too: it never sees an end of file,
# and a writer never blocks, even when the tool is gone.  It costs its
# start now, when the caller is not yet timing anything.  So does the
# warming: a tool's first commands cost it far more than the next
# (nft on an idle machine, 2026-12-06: 5.2, 2.4 and 1.7 ms of CPU for
# its first three, a set element's add or delete 0.3-0.5 ms after);
# nft's is an element added and taken off again, the same work as a
# black hole's, on a name that is no interface.
fault_applier() {
	local ns=$1 tool=$2 i=$3 dir fifo pid line
	local -a warm
	dir=$(fault_dir)
	fifo="$dir/$ns.fifo"
	mkdir -p "$dir" && rm -f "$fifo" && mkfifo "$fifo" ||
		die "cannot make the FIFO $fifo"
	case "$tool" in
	nft) nsenter "--net=/run/netns/$ns" nft -i <>"$fifo" >/dev/null \
		2>"$dir/$ns.err" & ;;
	*) "$tool" -n "$ns" -batch - <>"$fifo" >/dev/null 2>"$dir/$ns.err" & ;;
	esac
	pid=$!
	echo "$pid" >"$dir/$ns.pid"
	# Its FIFO open and waited on, before any line: a line written
	# while no process but the writer holds the FIFO dies with the
	# writer's close (seen: a warming line lost, the next one failed)
	if ! tool_until "$pid" tool_waiting "$pid"; then
		tool_alive "$pid" || die "$tool in $ns exited at start"
		die "$tool in $ns is not reading its FIFO after 2 s"
	fi
	case "$tool" in
	nft) warm=("add element inet $TABLE blackholed { \"srdwarm\" }"
		   "delete element inet $TABLE blackholed { \"srdwarm\" }")
	     warm+=("${warm[@]}") ;;
	ip) warm=("link show dev l$i" "link show dev l$i") ;;
	tc) warm=("qdisc show dev l$i" "qdisc show dev l$i") ;;
	esac
	for line in "${warm[@]}"; do
		tool_line "$pid" "$fifo" "$line" ||
			die "$tool in $ns did not take '$line' (2 s)"
	done
	[ ! -s "$dir/$ns.err" ] ||
		die "$tool in $ns, warming up: $(cat "$dir/$ns.err")"
	echo "$fifo"
}

# Stops faultcmds' tools and waits (2 s, then SIGKILL) until they are
# gone; fails if one had exited before (ip and tc -batch stop at a
# failed command) or said anything on stderr (nft -i goes on after one).
do_faultreap() {
	local dir f ns pid rc=0
	dir=$(fault_dir)
	for f in "$dir"/*.pid; do
		[ -e "$f" ] || continue
		ns=$(basename "$f" .pid)
		pid=$(cat "$f")
		if tool_alive "$pid"; then
			kill "$pid" 2>/dev/null
			for _ in $(seq 1 200); do
				tool_alive "$pid" || break
				sleep 0.01
			done
			tool_alive "$pid" && kill -KILL "$pid" 2>/dev/null
		else
			echo "$prog: the fault's tool in $ns had exited" >&2
			rc=1
		fi
		if [ -s "$dir/$ns.err" ]; then
			echo "$prog: the fault's tool in $ns said:" >&2
			sed 's/^/  /' "$dir/$ns.err" >&2
			rc=1
		fi
		rm -f "$f" "$dir/$ns.fifo" "$dir/$ns.err"
	done
	return "$rc"
}

do_faultcmds() {	# blackhole|linkdown|none I, or rate I MBIT
	local fault=$1 i=$2 mbit=${3:-} ns tool line fifo
	need_bed
	check_link_no "$i"
	case "$fault" in
	blackhole|linkdown|none) [ -z "$mbit" ] || usage ;;
	rate) case "$mbit" in ''|0|*[!0-9]*) die "bad rate '$mbit'" ;; esac ;;
	*) usage ;;
	esac
	do_faultreap 2>/dev/null	# a caller's leftovers
	for ns in "$NS_R1" "$NS_R2"; do
		case "$fault" in
		blackhole) tool=nft
			line="add element inet $TABLE blackholed { \"l$i\" }" ;;
		linkdown) tool=ip; line="link set l$i down" ;;
		rate)	# the same tbf as set_rate's
			tool=tc
			line="qdisc replace dev l$i root tbf rate ${mbit}mbit"
			line+=" burst $(tbf_burst "$mbit") latency 20ms" ;;
		none) tool=nft; line="add table inet $TABLE" ;;
		esac
		fifo=$(fault_applier "$ns" "$tool" "$i") || exit 1
		printf '[ -p %q ] && ' "$fifo"
		printf '%q ' printf '%s\n' "$line"
		printf '1<>%q\n' "$fifo"
	done
}

do_linkstate() {	# up|down I
	local st=$1 i=$2 ns
	need_bed
	check_link_no "$i"
	for ns in "$NS_R1" "$NS_R2"; do
		ip -n "$ns" link set "l$i" "$st" || die "link l$i $st in $ns failed"
	done
	if [ "$st" = up ]; then
		# wait (<= 3 s) until both ends have carrier again
		for _ in $(seq 1 30); do
			ip -n "$NS_R1" link show "l$i" | grep -q 'state UP' &&
				ip -n "$NS_R2" link show "l$i" | grep -q 'state UP' &&
				return 0
			sleep 0.1
		done
		die "l$i has no carrier after linkup"
	fi
}

do_loss() {
	local bp proto=${2:-udp} ns
	[ $# -ge 1 ] || usage
	need_bed
	bp=$(basis_points "$1") || die "bad loss '$1' (0..100, 2 decimals)"
	for ns in "$NS_R1" "$NS_R2"; do
		set_loss "$ns" "$bp" "$proto"
	done
}

do_rate() {
	local devs=link_devs
	[ $# = 1 ] || { [ $# = 2 ] && [ "$2" = hosts ]; } || usage
	[ $# = 2 ] && devs=host_devs
	case "$1" in ''|*[!0-9]*) die "bad rate '$1' (Mbit/s)" ;; esac
	need_bed
	"$devs" | while read -r ns dev; do
		set_rate "$ns" "$dev" "$1" || exit 1
	done || die "rate change failed"
}

do_exec() {
	local ns
	[ $# -ge 2 ] || usage
	ns=$(ns_of "$1") || die "unknown host '$1' (A, A2.., B, R1, R2)"
	exists "$ns" || die "host $1 ($ns) does not exist"
	shift
	exec ip netns exec "$ns" "$@"
}

do_addr() {
	local ns j
	[ $# = 1 ] || usage
	ns=$(ns_of "$1") || die "unknown host '$1'"
	exists "$ns" || die "host $1 ($ns) does not exist"
	case "$1" in
	B|b) echo 10.88.2.2 ;;
	A|a|A1|a1) echo 10.88.1.2 ;;
	A*|a*) j=${1#?}; echo "10.88.$(a_net "$j").2" ;;
	R1|r1) echo 10.88.1.1 ;;
	R2|r2) echo 10.88.2.1 ;;
	esac
}

do_selftest() {
	local j ns k nports before after i got fails=0 pkts=20 d0 d1
	local -a b4
	need_bed
	k=$(links | wc -l)
	for j in $(a_hosts); do
		if [ "$j" = 1 ]; then ns="$name-a"; else ns="$name-a$j"; fi
		if bed_ping "$ns" 10.88.2.2; then
			echo "ping A$j -> B: ok"
		else
			echo "ping A$j -> B: FAILED"
			fails=$((fails + 1))
		fi
	done
	command -v python3 >/dev/null || { echo "no python3: UDP spread check skipped"; return "$fails"; }
	nports=$((16 * k))
	for i in $(links); do b4[i]=$(stat_of "$NS_R1" "l$i" tx_packets); done
	before=$(stat_of "$NS_B" eth0 rx_packets)
	d0=$(loss_drops)
	ip netns exec "$name-a" python3 - "$nports" "$pkts" <<'EOF' || fails=$((fails + 1))
import socket, sys
nports, pkts = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(nports):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.88.1.2", 0))
    socks.append(s)
for _ in range(pkts):
    for s in socks:
        s.sendto(b"x" * 100, ("10.88.2.2", 9))
EOF
	sleep 0.3
	after=$(stat_of "$NS_B" eth0 rx_packets)
	d1=$(loss_drops)
	echo "UDP: $nports source ports x $pkts packets A -> B; B received $((after - before)), the loss rules dropped $((d1 - d0))"
	[ $((after - before + d1 - d0)) -ge $((nports * pkts)) ] || {
		echo "FAILED: B received fewer than sent and not dropped"
		fails=$((fails + 1))
	}
	for i in $(links); do
		got=$(( $(stat_of "$NS_R1" "l$i" tx_packets) - b4[i] ))
		echo "  l$i: $got packets"
		if [ "$got" -lt $((pkts / 2)) ]; then
			echo "  FAILED: l$i carried no flow"
			fails=$((fails + 1))
		fi
	done
	return "$fails"
}

do_status() {
	local ns
	[ -n "$(bed_namespaces)" ] || { echo "bed '$name' is down"; return 0; }
	for ns in $(bed_namespaces); do echo "namespace $ns"; done
	exists "$NS_R1" || return 0
	echo "R1 route to B:"
	ip -n "$NS_R1" route show 10.88.2.0/24
	echo "links:"
	for i in $(links); do
		echo "  l$i R1 $(ip -n "$NS_R1" -br link show "l$i" | awk '{print $2}')" \
			"R2 $(ip -n "$NS_R2" -br link show "l$i" | awk '{print $2}')" \
			"qdisc: $(tc -n "$NS_R1" qdisc show dev "l$i" | head -n1 | sed 's/^qdisc \([a-z_]*\).*rate \([^ ]*\).*/\1 \2/')"
	done
	echo "blackholed: $(ip netns exec "$NS_R1" nft list set inet "$TABLE" blackholed |
		sed -n 's/.*elements = { \(.*\) }.*/\1/p')"
	echo "loss rules (R1):"
	ip netns exec "$NS_R1" nft list chain inet "$TABLE" bed_loss | grep numgen
	return 0
}

case "$cmd" in
up) do_up "$@" ;;
down) [ $# = 0 ] || usage; do_down || die "could not remove bed '$name'" ;;
exec) do_exec "$@" ;;
addr) do_addr "$@" ;;
blackhole) [ $# = 1 ] || usage; do_blackhole add "$1" ;;
unblackhole) [ $# = 1 ] || usage; do_blackhole delete "$1" ;;
linkdown) [ $# = 1 ] || usage; do_linkstate down "$1" ;;
linkup) [ $# = 1 ] || usage; do_linkstate up "$1" ;;
faultcmds) [ $# -ge 2 ] && [ $# -le 3 ] || usage; do_faultcmds "$@" ;;
faultreap) [ $# = 0 ] || usage; do_faultreap ;;
loss) do_loss "$@" ;;
rate) do_rate "$@" ;;
counters) [ $# = 0 ] || usage; do_counters ;;
flows) [ $# = 0 ] || usage; do_flows ;;
flushflows) [ $# = 0 ] || usage; do_flushflows ;;
selftest) [ $# = 0 ] || usage; do_selftest ;;
status) [ $# = 0 ] || usage; do_status ;;
*) usage ;;
esac
