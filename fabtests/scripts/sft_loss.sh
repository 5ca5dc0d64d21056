#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sft_loss.sh -p PROVIDER [-l LOSS_PERCENT] [-t TOTAL_SECONDS]
#
# Runs sft pairs over a lossy loopback: creates a network namespace with
# a unique name, brings up its lo, adds an nftables rule there that drops
# LOSS_PERCENT (default 5) % of UDP packets, and inside it runs
#   1. sft_pingpong: one 64 MiB message each way (-S 64m -I 1),
#   2. sft_bw: 10,000 messages of 64 bytes (window 100, 100 windows),
# every byte verified by the tests.  TCP is not dropped, so a TCP-based
# provider sees no loss.  Prints how many packets the rule dropped.
# The namespace is always deleted on exit.  Needs root (else exit 77).
# Exit 0 if both runs pass, 1 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
prov=
loss=5
total=300

usage() {
	echo "usage: $0 -p PROVIDER [-l LOSS_PERCENT] [-t TOTAL_SECONDS]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; prov=$2; shift 2 ;;
	-l) [ $# -ge 2 ] || usage; loss=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; total=$2; shift 2 ;;
	*) usage ;;
	esac
done
[ -n "$prov" ] || usage

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: sft_loss.sh needs root (network namespace + nftables)"
	exit 77
fi
for tool in ip nft timeout; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
sft_find_bindir sft_bw

export FI_TCP_IFACE=${FI_TCP_IFACE:-lo}
export FI_SRD_IFACE=${FI_SRD_IFACE:-lo}
export FI_NET_IFACE=${FI_NET_IFACE:-lo}

sft_lossy_ns sftloss "$loss"

start=$SECONDS
fails=0

# run NAME PROGRAM ARGS...: one pair inside the namespace, bounded by
# what is left of the total time.
run() {
	local name=$1 left rc before
	shift
	left=$((total - (SECONDS - start)))
	if [ "$left" -lt 10 ]; then
		echo "FAIL $name: no time left of ${total}s"
		fails=$((fails + 1))
		return
	fi
	before=$(sft_lossy_dropped)
	echo "== $name (limit ${left}s, ${loss}% UDP loss)"
	ip netns exec "$ns" "$here/sft_pair.sh" -t "$left" -- "$@" \
		-t "$((left - 5))"
	rc=$?
	echo "   rule dropped $(( $(sft_lossy_dropped) - before )) UDP packets during $name"
	if [ "$rc" = 0 ]; then
		echo "PASS $name"
	else
		echo "FAIL $name (exit $rc)"
		fails=$((fails + 1))
	fi
}

run large_64m "$bindir/sft_pingpong" -p "$prov" -S 64m -I 1
run small_10k "$bindir/sft_bw" -p "$prov" -S 64 -W 100 -I 100

echo "nft rule dropped $(sft_lossy_dropped) UDP packets in total; $((SECONDS - start))s"
if [ "$fails" = 0 ]; then
	echo "PASS sft_loss ($prov)"
	exit 0
fi
echo "FAIL sft_loss ($prov): $fails run(s) failed"
exit 1
