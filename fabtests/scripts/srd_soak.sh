#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_soak.sh [-p PROVIDER] [-T SECONDS] [-l LOSS_PERCENT] [-E EPS] [-S SLOTS]
#
# The soak: sft_soak (a server process with EPS endpoints and SLOTS
# client processes that come and go, one in four killed with SIGKILL;
# msg, tagged, RMA and atomic traffic of random sizes; every byte and
# every completion verified) inside a network namespace created for the
# run, whose lo drops LOSS_PERCENT (default 1) % of UDP packets at random
# (nftables numgen).  Defaults: srd, 60 s, 4 endpoints, 4 slots; long
# runs by hand with -T 1800.  The namespace is always removed; the run is
# bounded (SECONDS + 5 min).  Prints sft_soak's SOAK line and how many
# packets were dropped.  Needs root (else exit 77).
set -u

here=$(cd "$(dirname "$0")" && pwd)
prov=srd secs=60 loss=1 eps=4 slots=4

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
usage() { sft_usage; }

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; prov=$2; shift 2 ;;
	-T) [ $# -ge 2 ] || usage; secs=$2; shift 2 ;;
	-l) [ $# -ge 2 ] || usage; loss=$2; shift 2 ;;
	-E) [ $# -ge 2 ] || usage; eps=$2; shift 2 ;;
	-S) [ $# -ge 2 ] || usage; slots=$2; shift 2 ;;
	*) usage ;;
	esac
done

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: srd_soak.sh needs root (network namespace + nftables)"
	exit 77
fi
for tool in ip nft timeout; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done

sft_find_bindir sft_soak

export FI_TCP_IFACE=lo FI_SRD_IFACE=lo FI_NET_IFACE=lo

sft_lossy_ns srdsoak "$loss"

echo "soak: $prov, $secs s, $loss % UDP loss, $eps endpoints, $slots client slots"
timeout -k 10 $((secs + 300)) ip netns exec "$ns" \
	"$bindir/sft_soak" -p "$prov" -T "$secs" -E "$eps" -S "$slots"
rc=$?
dropped=$(sft_lossy_dropped)
echo "soak: nftables dropped ${dropped:-?} UDP packets; exit $rc"
exit $rc
