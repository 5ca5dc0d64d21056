#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_rails_bench.sh [-n RUNS] [-r RATE_MBIT] [-q]
#
# Multi-rail (fi_srd(7) MULTI-RAIL, protocol spec 5.16), measured: two
# network namespaces A and B joined by two veth pairs, rails r0
# (10.91.1.0/24) and r1 (10.91.2.0/24), each limited to RATE_MBIT
# (default 200) in both directions by a tbf qdisc on both ends, so that
# the links and not the CPU are the limit.  One sft_stream pair (tagged
# messages, a sliding window, every byte checked; the server in B times
# its receive completions), per run (-n, default 5):
#
#   one rail    MB/s of 1 MiB messages, window 64, FI_SRD_IFACE=r0
#   two rails   the same with FI_SRD_IFACE=r0+r1 (one multi-rail
#               domain); the ratio is two rails over one
#   rail dies   64 KiB messages, window 256, two rails; 1.5 s in, A's
#               r1 is set down (ip link set down): the longest gap
#               between receive completions that overlaps the second
#               after it, and whether every message still arrived
#               (the sender's own link: its sends there are refused)
#   far rail    the same with B's r1 set down (the receiver's link: the
#               sender's datagrams there vanish on the way)
#   no fault    the same stream with A's r1 set up (it is up: a no-op of
#               the same command, at the same moment): the bed's own
#               gaps (this machine's two cores run both ends, and the
#               ip command takes one of them from one end for a while),
#               for the two above to be read against
#
# With each of these three it prints the rails that the sender and the
# receiver took down as one (rail_downs of their FI_SRD_STATS dumps), for
# reading, not as a target: a stream with no fault injected may still
# meet a burst of losses on a rail, which takes it DOWN rightly.
#
# It prints min/median/max over the runs and the targets as MET or
# MISSED (each must hold on every run): two rails >= 1.8x one rail;
# rail death stalls <= 10 ms and loses nothing.  net and tcp;ofi_rxm
# have no multi-rail endpoint: their one-rail figure is printed beside
# srd's (-p to change, "" for none).  The exit status is 0 unless a run
# failed to complete: a benchmark reports, it does not gate on speed.
# -q: 2 runs, srd only.  Before the runs, fi_info must list the group
# as one domain of r0's fabric (and "r0+nosuch" as none, with a warning
# naming the missing interface), or the script fails at once.  Needs
# root; the namespaces are removed on exit.
set -u

here=$(cd "$(dirname "$0")" && pwd)
runs=5
rate=200
quick=0
peers="net"
name="srdrails$$"

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
usage() { sed -n '3,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	-n) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
	-r) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
	-p) [ $# -ge 2 ] || usage; peers=$2; shift 2 ;;
	-q) quick=1; runs=2; peers=; shift ;;
	*) usage ;;
	esac
done
case "$runs$rate" in *[!0-9]*|'') usage ;; esac

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: srd_rails_bench.sh needs root (network namespaces)"
	exit 77
fi
for tool in ip tc; do
	command -v "$tool" >/dev/null ||
		{ echo "SKIP: srd_rails_bench.sh: $tool not found"; exit 77; }
done
sft_find_bindir sft_stream

NA="$name-a" NB="$name-b"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/srd_rails.XXXXXX") || exit 1
cleanup() {
	ip netns pids "$NA" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns pids "$NB" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# bed_up: A rI 10.91.(I+1).1 ====== B rI 10.91.(I+1).2, I = 0, 1
bed_up() {
	local i ns
	ip netns add "$NA" && ip netns add "$NB" || return 1
	for i in 0 1; do
		ip link add "r$i" netns "$NA" type veth peer name "r$i" \
			netns "$NB" || return 1
		ip -n "$NA" addr add "10.91.$((i + 1)).1/24" dev "r$i"
		ip -n "$NB" addr add "10.91.$((i + 1)).2/24" dev "r$i"
		for ns in "$NA" "$NB"; do
			ip -n "$ns" link set "r$i" mtu 1500 up || return 1
			tc -n "$ns" qdisc replace dev "r$i" root tbf \
				rate "${rate}mbit" burst 30000 latency 20ms ||
				return 1
		done
	done
	ip -n "$NA" link set lo up && ip -n "$NB" link set lo up || return 1
	rails_wait_running
}

# until both ends of both pairs report operstate up (5 s at most):
# fi_getinfo skips an interface that is not running yet
rails_wait_running() {
	local ns i ok
	for _ in $(seq 1 100); do
		ok=1
		for ns in "$NA" "$NB"; do
			for i in 0 1; do
				[ "$(ip netns exec "$ns" cat \
				     "/sys/class/net/r$i/operstate")" = up ] || ok=0
			done
		done
		[ "$ok" = 1 ] && return 0
		sleep 0.05
	done
	return 1
}

port=25000
failures=0
envs=(FI_SRD_STATS=1)
[ -n "${FI_PROVIDER_PATH:-}" ] && envs+=("FI_PROVIDER_PATH=$FI_PROVIDER_PATH")

# stream PROV IFACES SIZE WINDOW MSGS KILL: one pair, server in B bound to
# B's r0 address; KILL=A or B sets that host's r1 down 1.5 s in, N sets
# A's r1 up then (a no-op; 0: nothing).  Sets S_MBS, S_GAP_MS (over the
# second after the kill), S_RAILS (rails each side took down as one, from
# its FI_SRD_STATS dump: sender/receiver).
stream() {
	local prov=$1 ifaces=$2 size=$3 wnd=$4 msgs=$5 kill=$6 spid cpid rc t_kill=
	local ifenv=("FI_SRD_IFACE=$ifaces" "FI_NET_IFACE=$ifaces" "FI_TCP_IFACE=$ifaces")
	port=$((port + 1))
	S_MBS=fail S_GAP_MS=fail S_RAILS=na
	ip netns exec "$NB" env "${envs[@]}" "${ifenv[@]}" SFT_GAP_LOG=1 \
		timeout -k 5 90 "$bindir/sft_stream" -p "$prov" -s \
		-b 10.91.1.2 -P "$port" -t 80 -S "$size" -W "$wnd" -I "$msgs" \
		>"$tmp/server" 2>&1 &
	spid=$!
	sleep 0.5
	ip netns exec "$NA" env "${envs[@]}" "${ifenv[@]}" timeout -k 5 90 \
		"$bindir/sft_stream" -p "$prov" -P "$port" -t 80 -S "$size" \
		-W "$wnd" -I "$msgs" 10.91.1.2 >"$tmp/client" 2>&1 &
	cpid=$!
	if [ "$kill" != 0 ]; then
		sleep 1.5
		sft_uptime_into t_kill
		if [ "$kill" = N ]; then
			ip -n "$NA" link set r1 up
		else
			ip -n "$name-${kill,,}" link set r1 down
		fi
	fi
	wait "$cpid"
	rc=$?
	wait "$spid" 2>/dev/null
	if [ "$kill" = A ] || [ "$kill" = B ]; then
		ip -n "$name-${kill,,}" link set r1 up
		rails_wait_running
	fi
	if [ "$rc" != 0 ] || ! grep -q '^RESULT' "$tmp/server"; then
		echo "  $prov $ifaces ($size x $wnd): did not complete (exit $rc): $(grep -a -v '^libfabric' "$tmp/client" | tail -n 1)"
		failures=$((failures + 1))
		return 1
	fi
	S_MBS=$(sft_stream_mbs "$tmp/server")
	[ -n "$t_kill" ] && S_GAP_MS=$(sft_stream_gap_ms "$tmp/server" "$t_kill")
	S_RAILS=$(rail_downs "$tmp/client")/$(rail_downs "$tmp/server")
	return 0
}

# rail_downs FILE: the rails taken down as one, over the FI_SRD_STATS
# dumps in FILE ("na" without one)
rail_downs() {
	awk '/^ep / { for (i = 2; i <= NF; i++) if ($i ~ /^rail_downs=/) {
		n += substr($i, 12); seen = 1 } }
	     END { print seen ? n : "na" }' "$1"
}

declare -A V
add() { V[$1]="${V[$1]:-} $2"; }

if [ "$quick" = 1 ]; then bw_msgs=60; kill_msgs=2000; else bw_msgs=100; kill_msgs=3000; fi
t_start=$(date +%s)
echo "=== srd multi-rail benchmark: $runs runs; 2 rails of $rate Mbit/s each"
bed_up || { echo "bed up failed"; exit 1; }

# domains: the group is one, of rail 0's subnet; a group with a member
# that does not exist is not offered, and says why
if command -v fi_info >/dev/null; then
	ip netns exec "$NA" env "${envs[@]}" FI_SRD_IFACE=r0+r1 \
		timeout 30 fi_info -p srd >"$tmp/info" 2>&1
	if ! grep -q 'domain: r0+r1$' "$tmp/info" ||
	   ! grep -q 'fabric: 10.91.1.0/24$' "$tmp/info" ||
	   grep -q 'domain: r[01]$' "$tmp/info"; then
		echo "FAIL: fi_info with FI_SRD_IFACE=r0+r1 does not list one domain r0+r1 of fabric 10.91.1.0/24:"
		cat "$tmp/info"
		exit 1
	fi
	ip netns exec "$NA" env "${envs[@]}" FI_SRD_IFACE=r0+nosuch \
		FI_LOG_LEVEL=warn timeout 30 fi_info -p srd >"$tmp/info" 2>&1
	if grep -q 'domain:' "$tmp/info" ||
	   ! grep -q 'interface nosuch is not usable' "$tmp/info"; then
		echo "FAIL: fi_info with FI_SRD_IFACE=r0+nosuch:"
		cat "$tmp/info"
		exit 1
	fi
	echo "  fi_info: FI_SRD_IFACE=r0+r1 is one domain r0+r1 (fabric 10.91.1.0/24); r0+nosuch none, said"
fi
for run in $(seq 1 "$runs"); do
	line="  run $run:"
	one='' two=''
	stream srd r0 1m 64 "$bw_msgs" 0 && one=$S_MBS && add one "$one"
	stream srd r0+r1 1m 64 "$bw_msgs" 0 && two=$S_MBS && add two "$two"
	line+=" srd MB/s one rail ${one:-failed}, two rails ${two:-failed}"
	if [ -n "$one" ] && [ -n "$two" ]; then
		ratio=$(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", a / b }')
		add ratio "$ratio"
		line+=" (${ratio}x)"
	fi
	for side in A B; do
		key=gap; [ "$side" = B ] && key=fargap
		if stream srd r0+r1 64k 256 "$kill_msgs" "$side"; then
			add "$key" "$S_GAP_MS"
			add "rails_$side" "$S_RAILS"
			line+="; $side's r1 dies: longest gap $S_GAP_MS ms"
		else
			add gap_failed 1
			line+="; $side's r1 dies: did not complete"
		fi
	done
	if stream srd r0+r1 64k 256 "$kill_msgs" N; then
		add nofault "$S_GAP_MS"
		add rails_N "$S_RAILS"
		line+="; no fault: longest gap $S_GAP_MS ms"
	fi
	for p in $peers; do
		stream "$p" r0 1m 64 "$bw_msgs" 0 && add "peer_$p" "$S_MBS" &&
			line+="; $p one rail $S_MBS MB/s"
	done
	echo "$line"
done


echo
printf '%-26s %s\n' metric "min / median / max over the runs"
printf '%-26s %s\n' "srd one rail MB/s" "$(sft_mmm "${V[one]:-}")"
printf '%-26s %s\n' "srd two rails MB/s" "$(sft_mmm "${V[two]:-}")"
printf '%-26s %s\n' "two rails / one" "$(sft_mmm "${V[ratio]:-}")"
printf '%-26s %s\n' "rail death gap ms" "$(sft_mmm "${V[gap]:-}")"
printf '%-26s %s\n' "far rail death gap ms" "$(sft_mmm "${V[fargap]:-}")"
printf '%-26s %s\n' "no fault gap ms" "$(sft_mmm "${V[nofault]:-}")"
printf '%-26s %s\n' "rails DOWN, send/recv" "sender's rail dies:${V[rails_A]:- -}; receiver's:${V[rails_B]:- -}; no fault:${V[rails_N]:- -} (each run)"
for p in $peers; do
	printf '%-26s %s\n' "$p one rail MB/s" "$(sft_mmm "${V[peer_$p]:-}")"
done
echo
echo "srd targets (each must hold on every run):"
printf '  %-44s %s\n' "two rails >= 1.8x one rail" "$(sft_every "${V[ratio]:-}" ">=" 1.8 "$runs")"
printf '  %-44s %s\n' "the sender's rail dies: gap <= 10 ms" "$(sft_every "${V[gap]:-}" "<=" 10 "$runs")"
printf '  %-44s %s\n' "the receiver's rail dies: gap <= 10 ms" "$(sft_every "${V[fargap]:-}" "<=" 10 "$runs")"
printf '  %-44s %s ms\n' "(the same window with no fault, for scale)" "$(sft_mmm "${V[nofault]:-}")"
printf '  %-44s %s\n' "a rail dies: every message arrives" "$([ -z "${V[gap_failed]:-}" ] && [ "$(wc -w <<<"${V[gap]:-} ${V[fargap]:-}")" = "$((2 * runs))" ] && echo MET || echo "MISSED ($(wc -w <<<"${V[gap_failed]:-}") of $((2 * runs)) streams did not complete)")"
echo "=== $(( $(date +%s) - t_start )) s; $failures runs failed"
[ "$failures" = 0 ]
