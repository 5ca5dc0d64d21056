# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sft_lib.sh: helpers the sft_*/srd_* scripts source ("$here/sft_lib.sh").
# Defines functions only; sets nothing and runs nothing.

# sft_find_bindir PROGRAM...: sets bindir to the directory holding the
# sft programs, or exits 1 naming what is missing.  $SFT_BINDIR if set,
# else the first that has the first PROGRAM of: the scripts' own
# directory (an install: programs and scripts both in $libexecdir/srd),
# fabtests/ next to the scripts (an in-tree build), build/fabtests (a
# build directory), $PATH.
sft_find_bindir() {
	local here d p
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	bindir=${SFT_BINDIR:-}
	if [ -z "$bindir" ]; then
		for d in "$here" "$here/.." "$here/../../build/fabtests" \
			 "$(dirname "$(command -v "$1" 2>/dev/null || echo .)")"; do
			[ -x "$d/$1" ] && { bindir=$(cd "$d" && pwd); break; }
		done
		bindir=${bindir:-$here/..}
	fi
	for p in "$@"; do
		[ -x "$bindir/$p" ] && continue
		echo "$p not found in $bindir (set SFT_BINDIR)" >&2
		exit 1
	done
}

# sft_usage: prints the calling script's header comment (line 2 up to
# "set -u") to stderr and exits 2.
sft_usage() {
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

# sft_lossy_ns PREFIX LOSS_PERCENT: creates a network namespace (its
# name in $ns, deleted when the script exits) whose lo is up and drops
# LOSS_PERCENT % of the UDP packets leaving through it (nftables numgen,
# counted); TCP passes.  Exits 77 when namespaces are not available.
sft_lossy_ns() {
	ns="$1-$$-$RANDOM"
	trap 'ip netns del "$ns" 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
	if ! ip netns add "$ns"; then
		echo "SKIP: cannot create network namespace"
		exit 77
	fi
	ip -n "$ns" link set lo up || exit 1
	ip netns exec "$ns" nft -f - <<NFT || exit 1
table inet sftlossy {
	chain lossy {
		type filter hook output priority 0; policy accept;
		oifname "lo" meta l4proto udp numgen random mod 100 < $2 counter drop
	}
}
NFT
}

# sft_lossy_dropped: the UDP packets sft_lossy_ns's rule has dropped.
sft_lossy_dropped() {
	ip netns exec "$ns" nft list chain inet sftlossy lossy |
		sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | head -n1
}

# sft_uptime_into VAR: seconds since boot into VAR (an array element
# too: "at[i]"), from /proc/uptime (CLOCK_BOOTTIME: the same as
# CLOCK_MONOTONIC, which sft_stream's logs use, where nothing
# suspends), to line events up with those logs.  The shell's own read:
# a subshell and awk, as $(...) would start, take cores both ends of a
# stream may be using, at the very moment a fault is timed from.
sft_uptime_into() {
	read -r "$1" _ </proc/uptime
}

# sft_busiest_link BEFORE AFTER: the number I of the link lI whose bytes
# grew most between two snapshots of "lI BYTES ..." lines (lines
# starting with '#' skipped; srd_ecmp_bed.sh counters, whose second
# column is what R1 sent onto the link, or the same from "ip -s link");
# nothing when none grew.
sft_busiest_link() {
	awk 'NR == FNR { if ($1 !~ /^#/) b[$1] = $2; next }
	     $1 !~ /^#/ { d = $2 - b[$1]; if (d > m) { m = d; l = $1 } }
	     END { sub(/^l/, "", l); print l }' "$1" "$2"
}

# The benchmarks' summaries (srd_fault_bench.sh, srd_rails_bench.sh).
# sft_mmm "V1 V2 ...": "min / median / max" of the values, "-" if none.
sft_mmm() {
	tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%s / %s / %s", v[1], m, v[NR] }'
}

# sft_every "V1 V2 ..." OP LIMIT RUNS: MET when there are RUNS values and
# each satisfies OP LIMIT (OP <=, >= or <), else "MISSED (k of RUNS runs)".
sft_every() {
	tr ' ' '\n' <<<"$1" | sed '/^$/d' |
		awk -v op="$2" -v lim="$3" -v want="$4" '
			{ n++; if ((op == "<=" && $1 > lim) || (op == ">=" && $1 < lim) ||
				    (op == "<" && $1 >= lim)) bad++ }
			END { if (n == want && !bad) print "MET"; else printf "MISSED (%d of %d runs)\n", n - bad, want }'
}

# sft_stream's server log (SFT_GAP_LOG=1): sft_stream_mbs LOG prints the
# RESULT line's MB/s; sft_stream_gap_ms LOG T prints the longest gap
# between receive completions overlapping [T, T + 1 s], in ms (T from
# /proc/uptime, CLOCK_BOOTTIME; the gap lines, first_s and last_s are
# CLOCK_MONOTONIC, the same where nothing suspends).
sft_stream_mbs() {
	sed -n 's/^RESULT.* mbs=\([0-9.]*\).*/\1/p' "$1"
}
sft_stream_gap_ms() {
	awk -v t="$2" '
		$1 == "gap" && $3 >= t && $2 <= t + 1 && $3 - $2 > m { m = $3 - $2 }
		END { printf "%.1f", m * 1000 }' "$1"
}
# sft_stream_reach_ms LOG T: how far into [T, T + 1 s] the stream's
# completions reached, in whole ms (1000: it ran through the window,
# which then holds every gap; less: it ended inside the window, whose
# rest was not measured; 0: it ended before it or began after it);
# nothing when the RESULT line lacks first_s and last_s.
sft_stream_reach_ms() {
	sed -n 's/^RESULT.* first_s=\([0-9.]*\) last_s=\([0-9.]*\).*/\1 \2/p' "$1" |
		awk -v t="$2" '
			{ r = $1 > t ? 0 : ($2 - t) * 1000 }
			END { if (!NR) exit
			      if (r < 0) r = 0; if (r > 1000) r = 1000
			      printf "%d", int(r) }'
}
