#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_stat.sh [-i SECONDS] [-n COUNT] [-p] DIR|FILE...
#
# Prints the counters that srd endpoints keep in FI_SRD_STATS_DIR while
# they run (one srd-PID-N.stats file per endpoint, rewritten every
# FI_SRD_STATS_INTERVAL_MS; the last version stays after close):
#
#   FI_SRD_STATS_DIR=/tmp/s sft_bw -p srd ... &
#   srd_stat.sh -i 1 /tmp/s
#
# Per endpoint: packets, resends (timeout / fast), RNR, window cuts, path
# downs and, with -i, the rates since the previous look.  Per peer sent
# to: state, congestion window, packets in flight, RTTs.  With -p also
# each path's share of the peer's bytes, its losses and state.
# -i SECONDS repeats every SECONDS (default: once); -n COUNT stops after
# COUNT looks.
set -u

interval=
count=0
paths=0

usage() {
	echo "usage: $0 [-i SECONDS] [-n COUNT] [-p] DIR|FILE..." >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-i) [ $# -ge 2 ] || usage; interval=$2; shift 2 ;;
	-n) [ $# -ge 2 ] || usage; count=$2; shift 2 ;;
	-p) paths=1; shift ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage

files() {
	local a
	for a in "$@"; do
		if [ -d "$a" ]; then
			ls "$a"/srd-*.stats 2>/dev/null
		else
			echo "$a"
		fi
	done
}

state=$(mktemp "${TMPDIR:-/tmp}/srd_stat.XXXXXX") || exit 1
trap 'rm -f "$state"' EXIT

# One look: every file, with rates against the previous look (in $state).
look() {
	local now f
	now=$(date +%s.%N)
	mapfile -t list < <(files "$@")
	if [ ${#list[@]} -eq 0 ]; then
		echo "no srd-*.stats files in $*"
		return
	fi
	for f in "${list[@]}"; do
		[ -r "$f" ] || continue
		awk -v now="$now" -v paths="$paths" -v file="$f" \
		    -v statefile="$state" '
		function v(key,   i) {
			for (i = 1; i < NF; i++) if ($i == key) return $(i + 1)
			return 0
		}
		BEGIN {
			while ((getline l < statefile) > 0) {
				split(l, a, " ")
				if (a[1] == file) { pt = a[2]; ptx = a[3]; pby = a[4] }
			}
			close(statefile)
		}
		/^srd ep / { printf "%s (pid %s, %s paths)\n", $3, $5, $7 }
		/^ep / {
			tx = v("tx_pkts"); by = v("tx_bytes")
			printf "  tx %d pkts %.1f MB, resent %d timeout %d fast %d probe, rx %d pkts %d dup, rnr %d out %d in, %d cuts, %d path downs, %d/%d peers failed\n",
			       tx, by / 1e6, v("retx_timeout"), v("retx_fast"),
			       v("retx_probe"), v("rx_pkts"), v("rx_dup"), v("rnr_sent"),
			       v("rnr_recv"), v("cc_cuts"), v("path_downs"),
			       v("peers_failed"), v("peers")
			if (pt != "" && now > pt)
				printf "  since last look: %.0f pkts/s, %.1f MB/s\n",
				       (tx - ptx) / (now - pt),
				       (by - pby) / 1e6 / (now - pt)
			printf "%s %s %s %s\n", file, now, tx, by >> statefile
		}
		/^peer / {
			peer_bytes = v("tx_bytes")
			printf "  -> %s %s cwnd %s inflight %s rtt %s us (net %s, base %s) rto %s us, resent %s+%s+%s, rnr %s, cuts %s, paths down %s\n",
			       $2, v("state"), v("cwnd"), v("inflight"),
			       v("srtt_us"), v("net_rtt_us"), v("base_rtt_us"),
			       v("rto_us"), v("retx_timeout"), v("retx_fast"),
			       v("retx_probe"), v("rnr_recv"), v("cc_cuts"), v("paths_down")
		}
		/^  path / && paths {
			share = peer_bytes ? 100 * v("tx_bytes") / peer_bytes : 0
			printf "       path %2d %-4s %5.1f%% of bytes, %d resent here, %d lost, rtt %s us, score %s\n",
			       $2, $3, share, v("retx"), v("losses"),
			       v("srtt_us"), v("score")
		}
		' "$f"
	done
}

n=0
while :; do
	look "$@"
	n=$((n + 1))
	[ -n "$interval" ] || break
	[ "$count" -gt 0 ] && [ "$n" -ge "$count" ] && break
	sleep "$interval"
	echo
done
