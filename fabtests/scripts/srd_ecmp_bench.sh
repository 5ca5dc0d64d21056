#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_ecmp_bench.sh [-p "PROV1 PROV2 ..."] [-r RATE_MBIT] [-k K] [-q]
#
# The SRD benchmark on the ECMP test bed (srd_ecmp_bed.sh: hosts A and B
# behind routers joined by K parallel links, ECMP with L4 hashing).  It
# runs srd, net and tcp;ofi_rxm (default; -p to choose) in one run, so
# every figure has its peers measured on the same machine minutes apart,
# and prints, per provider and with srd's ratios to the others:
#
#   1. bandwidth (sft_bw, 1 MiB messages) with K = 1 and K = 4 links,
#      each link rate-limited to RATE_MBIT (tbf, default 200 Mbit/s), and
#      the K = 4 / K = 1 speed-up;
#   2. small-message latency (sft_pingpong, 8 B, half round trips) p50,
#      p99, p99.9 with 0 %, 0.1 % and 1 % random loss on every link (no
#      rate limit; loss of every IPv4 packet, so TCP-based providers see
#      it too);
#   3. bandwidth under 1 % loss as a fraction of lossless (K = 4, rated);
#   4. the stall when the busiest of 4 links is black-holed mid-transfer:
#      the longest gap between two receive completions of a stream of
#      64 KiB messages (sft_stream) that overlaps the second after the
#      fault, against the same measure in a run without the fault (no-op
#      commands of the same cost run, so their own disturbance of a
#      small machine shows in both); a stream over before that second
#      ends reads "unmeasured".
#
# and checks srd against its targets: K=4 bandwidth >= 0.8 * 4 x K=1,
# p99.9 <= 2 ms under 1 % loss, >= 80 % of lossless bandwidth under 1 %
# loss, stall <= 10 ms.  A target missed is printed as MISSED; the exit
# status is 0 unless a run failed (a benchmark reports, CI does not
# gate on speed).  -q: shorter runs.  Needs root; every namespace it
# creates is removed on exit.
set -u

here=$(cd "$(dirname "$0")" && pwd)
provs="srd net tcp;ofi_rxm"
rate=200
quick=0
bed_name="srdbench$$"

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
usage() { sft_usage; }

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; provs=$2; shift 2 ;;
	-r) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
	-q) quick=1; shift ;;
	*) usage ;;
	esac
done

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: srd_ecmp_bench.sh needs root (network namespaces)"
	exit 77
fi

sft_find_bindir sft_bw sft_pingpong sft_stream

bed() { "$here/srd_ecmp_bed.sh" -n "$bed_name" "$@"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/srd_bench.XXXXXX") || exit 1
cleanup() {
	bed down >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$quick" = 1 ]; then
	bw_iters=4; lat_iters=5000; stall_secs=5
else
	bw_iters=12; lat_iters=20000; stall_secs=6
fi
# the stall streams' messages (64 KiB): STALL_SECS at the K = 4 links'
# full rate, so that a stream that keeps that rate still runs through
# the second after the fault (~2.7 s in); single-flow peers on one link
# take up to four times as long
stall_msgs=$(( rate * 4 * 1000000 * stall_secs / 8 / 65536 ))
port=21000
failures=0

# Environment for both ends: everything pinned to the bed's interface.
envs=(FI_SRD_IFACE=eth0 FI_TCP_IFACE=eth0 FI_NET_IFACE=eth0)
[ -n "${FI_PROVIDER_PATH:-}" ] && envs+=("FI_PROVIDER_PATH=$FI_PROVIDER_PATH")

# pair PROV TIMEOUT PROGRAM ARGS...: server in B, client in A; the
# client's output in $tmp/client, the server's in $tmp/server.
# Returns the client's exit status (124: timeout).
pair() {
	local prov=$1 tmo=$2 prog=$3 rc
	shift 3
	port=$((port + 1))
	bed exec B env "${envs[@]}" timeout -k 5 "$tmo" "$bindir/$prog" \
		-p "$prov" -s -P "$port" -t "$tmo" "$@" >"$tmp/server" 2>&1 &
	local spid=$!
	sleep 0.5
	bed exec A env "${envs[@]}" timeout -k 5 "$tmo" "$bindir/$prog" \
		-p "$prov" -P "$port" -t "$tmo" "$@" "$(bed addr B)" \
		>"$tmp/client" 2>&1
	rc=$?
	wait "$spid" 2>/dev/null
	return $rc
}

# MB/s of the last size line of sft_bw's client output
bw_of() { awk '$1 ~ /^[0-9]+$/ && NF == 4 { v = $4 } END { print v + 0 }' "$tmp/client"; }

declare -A R	# results: R[prov,key]

run_bw() {	# run_bw PROV KEY
	if pair "$1" 120 sft_bw -S 1m -W 8 -I "$bw_iters"; then
		R[$1,$2]=$(bw_of)
	else
		R[$1,$2]=fail
		echo "  $1 $2: failed: $(tail -n 2 "$tmp/client" | tr '\n' ' ')"
		failures=$((failures + 1))
	fi
}

run_lat() {	# run_lat PROV KEY
	if pair "$1" 120 sft_pingpong -S 8 -I "$lat_iters"; then
		R[$1,$2]=$(awk '$1 == "8" { printf "%s %s %s", $5, $6, $7 }' \
			   "$tmp/client")
	else
		R[$1,$2]="fail fail fail"
		echo "  $1 $2: failed: $(tail -n 2 "$tmp/client" | tr '\n' ' ')"
		failures=$((failures + 1))
	fi
}

# The longest receive gap of a stream of 64 KiB messages (sft_stream,
# window 16) over the second after the fault; with FAULT=1, black-hole
# the link that carried the most bytes during the first 1.5 s.  The
# fault's commands (srd_ecmp_bed.sh faultcmds: a line written to a tool
# started in each router beforehand) are made ready before it; without
# the fault a no-op of the black hole's kind is handed over the same
# way ("none"), so that their disturbance of a small machine shows in
# both.  A stream that ended inside that second
# reads "unmeasured" (its stall is not known, so srd's target is not
# met).
run_stall() {	# run_stall PROV KEY FAULT
	local prov=$1 key=$2 fault=$3 link t_fault c reach
	local -a cmds
	port=$((port + 1))
	bed exec B env "${envs[@]}" SFT_GAP_LOG=1 timeout -k 5 60 \
		"$bindir/sft_stream" -p "$prov" -s -P "$port" -t 60 -S 64k \
		-W 16 -I "$stall_msgs" >"$tmp/server" 2>&1 &
	local spid=$!
	sleep 0.5
	bed counters >"$tmp/c0"
	bed exec A env "${envs[@]}" timeout -k 5 60 "$bindir/sft_stream" \
		-p "$prov" -P "$port" -t 60 -S 64k -W 16 -I "$stall_msgs" \
		"$(bed addr B)" >"$tmp/client" 2>&1 &
	local cpid=$!
	sleep 1.5
	bed counters >"$tmp/c1"
	link=$(sft_busiest_link "$tmp/c0" "$tmp/c1")
	link=${link:-1}
	if [ "$fault" = 1 ]; then
		mapfile -t cmds < <(bed faultcmds blackhole "$link")
	else
		mapfile -t cmds < <(bed faultcmds none "$link")
	fi
	if [ "${#cmds[@]}" != 2 ]; then
		R[$prov,$key]="unmeasured"
		echo "  $prov $key: the bed gave no commands for the fault"
		wait "$cpid" "$spid" 2>/dev/null
		return
	fi
	sleep 1
	# CLOCK_BOOTTIME, = CLOCK_MONOTONIC where nothing suspends
	sft_uptime_into t_fault
	for c in "${cmds[@]}"; do
		eval "$c" >/dev/null
	done
	wait "$cpid"
	local rc=$?
	wait "$spid" 2>/dev/null
	bed unblackhole "$link" >/dev/null
	if ! bed faultreap; then
		R[$prov,$key]="unmeasured"
		echo "  $prov $key: the fault was not inflicted (see above)"
		return
	fi
	if [ "$rc" != 0 ] || ! grep -q '^RESULT' "$tmp/server"; then
		R[$prov,$key]="stalled"
		echo "  $prov $key: did not complete (exit $rc)"
		return
	fi
	reach=$(sft_stream_reach_ms "$tmp/server" "$t_fault")
	if [ "${reach:-0}" -lt 1000 ]; then
		R[$prov,$key]="unmeasured"
		echo "  $prov $key: the stream ended ${reach:-?} ms into the second after the fault"
	else
		R[$prov,$key]=$(sft_stream_gap_ms "$tmp/server" "$t_fault")
	fi
}

ratio() {	# ratio A B: A / B with two decimals, or "-"
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'
}

t_start=$(date +%s)
echo "=== srd ECMP benchmark: providers: $provs; links rate-limited to $rate Mbit/s for bandwidth"

# 1 + 3: bandwidth, K = 1 and K = 4, lossless and (K = 4) 1 % loss
for k in 1 4; do
	bed up -k "$k" -r "$rate" >/dev/null || { echo "bed up failed"; exit 1; }
	while read -r prov; do
		run_bw "$prov" "bw$k"
	done < <(tr ' ' '\n' <<<"$provs" | sed '/^$/d')
	if [ "$k" = 4 ]; then
		bed loss 1 all >/dev/null
		while read -r prov; do
			run_bw "$prov" bwloss
		done < <(tr ' ' '\n' <<<"$provs" | sed '/^$/d')
		bed loss 0 >/dev/null
		# 4: stall, same rated bed
		while read -r prov; do
			run_stall "$prov" gap 0
			run_stall "$prov" stall 1
		done < <(tr ' ' '\n' <<<"$provs" | sed '/^$/d')
	fi
	bed down >/dev/null
done

# 2: latency, K = 4, no rate limit
bed up -k 4 >/dev/null || { echo "bed up failed"; exit 1; }
for loss in 0 0.1 1; do
	bed loss "$loss" all >/dev/null
	while read -r prov; do
		run_lat "$prov" "lat$loss"
	done < <(tr ' ' '\n' <<<"$provs" | sed '/^$/d')
done
bed down >/dev/null

# --- report ------------------------------------------------------------------
plist=()
while read -r prov; do plist+=("$prov"); done < <(tr ' ' '\n' <<<"$provs" | sed '/^$/d')

echo
printf '%-14s %10s %10s %8s %10s %8s\n' provider "K=1 MB/s" "K=4 MB/s" "K4/K1" "1%loss MB/s" "of-clean"
for p in "${plist[@]}"; do
	printf '%-14s %10s %10s %8s %10s %8s\n' "$p" "${R[$p,bw1]}" "${R[$p,bw4]}" \
		"$(ratio "${R[$p,bw4]}" "${R[$p,bw1]}")" "${R[$p,bwloss]}" \
		"$(ratio "${R[$p,bwloss]}" "${R[$p,bw4]}")"
done
echo
printf '%-14s %-24s %-24s %-24s\n' provider "lat 0% p50/p99/p99.9 us" "0.1% loss" "1% loss"
for p in "${plist[@]}"; do
	printf '%-14s %-24s %-24s %-24s\n' "$p" "$(tr ' ' / <<<"${R[$p,lat0]}")" \
		"$(tr ' ' / <<<"${R[$p,lat0.1]}")" "$(tr ' ' / <<<"${R[$p,lat1]}")"
done
echo
printf '%-14s %18s %22s\n' provider "gap in 1 s, ms" "same, link black-holed"
for p in "${plist[@]}"; do
	printf '%-14s %18s %22s\n' "$p" "${R[$p,gap]}" "${R[$p,stall]}"
done

if [[ " ${plist[*]} " == *" srd "* ]]; then
	echo
	echo "srd against the others (ratio > 1: srd better):"
	for p in "${plist[@]}"; do
		[ "$p" = srd ] && continue
		echo "  vs $p: K=4 bandwidth x$(ratio "${R[srd,bw4]}" "${R[$p,bw4]}"), 1% loss bandwidth x$(ratio "${R[srd,bwloss]}" "${R[$p,bwloss]}"), p99.9 at 1% loss x$(ratio "$(awk '{print $3}' <<<"${R[$p,lat1]}")" "$(awk '{print $3}' <<<"${R[srd,lat1]}")")"
	done
	echo
	echo "srd targets:"
	check() {	# check LABEL VALUE OP LIMIT
		if awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN {
			if (v !~ /^[0-9.]+$/) exit 1
			exit !((op == ">=") ? v + 0 >= l + 0 : v + 0 <= l + 0) }'; then
			echo "  met     $1: $2 $3 $4"
		else
			echo "  MISSED  $1: $2 (want $3 $4)"
		fi
	}
	check "K=4 bandwidth vs 0.8*4 x K=1" "$(ratio "${R[srd,bw4]}" "${R[srd,bw1]}")" ">=" 3.2
	check "p99.9 half-RTT at 1% loss, us" "$(awk '{print $3}' <<<"${R[srd,lat1]}")" "<=" 2000
	check "1% loss bandwidth / lossless" "$(ratio "${R[srd,bwloss]}" "${R[srd,bw4]}")" ">=" 0.80
	check "stall with a black-holed link, ms" "${R[srd,stall]}" "<=" 10
fi
echo
echo "elapsed $(( $(date +%s) - t_start ))s; $failures failed runs"
[ "$failures" = 0 ]
