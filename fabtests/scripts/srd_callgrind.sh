#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_callgrind.sh [-I ITERATIONS] [-S SIZE] [-m msg|tagged] [-k]
#
# srd's cost in instructions, which machine noise does not move: a fixed
# ping-pong (sft_perf -o lat, 8 bytes by default) whose client runs under
# valgrind --tool=callgrind, twice, with I and 3*I round trips (default
# I = 1000); the differences between the two runs, divided by the extra
# round trips, cancel set-up, handshakes and warm-up.  Prints, per round
# trip (user-space instructions only; the kernel's share is not counted):
#
#   send path     fi_inject / fi_send (or tagged) down to the datagram
#                 handed to the socket: srd_txe_post, inclusive;
#   receive path  one data datagram from the socket up to its completion
#                 in the CQ, plus the fi_cq_read that returns it: the
#                 transport's per-datagram handler, inclusive, and the CQ
#                 copy-out;
#   round trip    everything the client process executed (including the
#                 polls that found nothing, so it moves with timing).
#
# and one line for scripts:
#   CALLGRIND size=8 mode=msg send_ir=N recv_ir=N rtt_ir=N
# Needs valgrind; runs on 127.0.0.1 (FI_SRD_IFACE=lo), about a minute.
set -u

here=$(cd "$(dirname "$0")" && pwd)
iters=1000
size=8
mode=msg
keep=0

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
usage() { sft_usage; }

while [ $# -gt 0 ]; do
	case "$1" in
	-I) [ $# -ge 2 ] || usage; iters=$2; shift 2 ;;
	-S) [ $# -ge 2 ] || usage; size=$2; shift 2 ;;
	-m) [ $# -ge 2 ] || usage; mode=$2; shift 2 ;;
	-k) keep=1; shift ;;
	*) usage ;;
	esac
done

command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	{ echo "SKIP: srd_callgrind.sh needs valgrind"; exit 77; }
sft_find_bindir sft_perf

export FI_SRD_IFACE=lo
# The progress thread would add its own instructions at random times.
export FI_SRD_PROGRESS_THREAD=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/srd_callgrind.XXXXXX") || exit 1
cleanup() {
	if [ "$keep" = 1 ]; then echo "logs kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
port=$((40000 + $$ % 20000))

# profile N: one client run of N timed round trips under callgrind
profile() {
	local n=$1 out="$tmp/cg.$1" spid
	port=$((port + 1))
	timeout -k 3 600 "$bindir/sft_perf" -p srd -o lat -m "$mode" \
		-S "$size" -I "$n" -t 590 -s -P "$port" >"$tmp/server.$n" 2>&1 &
	spid=$!
	timeout -k 3 600 valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$bindir/sft_perf" -p srd -o lat -m "$mode" -S "$size" -I "$n" \
		-t 590 -P "$port" 127.0.0.1 >"$tmp/client.$n" 2>&1
	local rc=$?
	wait "$spid"
	if [ "$rc" != 0 ] || ! grep -q '^PASS' "$tmp/client.$n"; then
		echo "callgrind run of $n round trips failed:" >&2
		tail -n 5 "$tmp/client.$n" "$tmp/server.$n" >&2
		exit 1
	fi
	callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$out" \
		>"$tmp/incl.$n" 2>/dev/null
	callgrind_annotate --auto=no --threshold=100 "$out" >"$tmp/self.$n" 2>/dev/null
}

# ir FILE FUNCTION: the Ir of FUNCTION in an annotate file (the largest
# of the lines that name it: inclusive listings repeat a function under
# several file spellings)
ir() {
	awk -v f="$2" '
	{
		v = $1; gsub(/,/, "", v)
		if (v !~ /^[0-9]+$/) next
		for (i = 2; i <= NF; i++)
			if ($i ~ (":" f "$") || $i ~ (":" f "'"'"'[0-9]+$"))
				if (v + 0 > m) m = v + 0
	}
	END { print m + 0 }' "$1"
}
total() { awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1; exit }' "$1"; }

lo=$iters
hi=$((iters * 3))
profile "$lo"
profile "$hi"
# round trips per run: timed + warm-up (a tenth, at least 10) + 2 checks
rounds() { local w=$(($1 / 10)); [ "$w" -lt 10 ] && w=10; echo $(($1 + w + 2)); }
d=$(( $(rounds "$hi") - $(rounds "$lo") ))

per() {	# per FILE-KIND FUNCTIONS...: delta of summed Ir per round trip
	local kind=$1 a=0 b=0 f
	shift
	for f in "$@"; do
		a=$((a + $(ir "$tmp/$kind.$lo" "$f")))
		b=$((b + $(ir "$tmp/$kind.$hi" "$f")))
	done
	echo $(((b - a) / d))
}
# srd_txe_post: the operation through message layer and transport to
# the socket (the entry points' shims add a lock and, when the endpoint
# has not been progressed for a while, a progress call, which callgrind's
# slowness would make every time)
send_ir=$(per incl srd_txe_post)
# tp_rx_one: one datagram through transport, message layer, CQ write;
# cq_copy_entry: the entry handed to the application by fi_cq_read
recv_ir=$(( $(per incl tp_rx_one) + $(per incl cq_copy_entry) ))
rtt_ir=$(( ($(total "$tmp/incl.$hi") - $(total "$tmp/incl.$lo")) / d ))

printf 'srd instructions per %s-byte %s round trip (client, callgrind, %d vs %d round trips)\n' \
	"$size" "$mode" "$(rounds "$lo")" "$(rounds "$hi")"
printf '  %-14s %8d\n' "send path" "$send_ir" "receive path" "$recv_ir" \
	"round trip" "$rtt_ir"
echo "top functions (self, per round trip):"
selfs() {	# FUNCTION Ir pairs of a self listing (inlined parts summed)
	awk '{ v = $1; gsub(/,/, "", v); if (v !~ /^[0-9]+$/) next
	       for (i = 2; i <= NF; i++) if ($i ~ /:/) { n = $i; sub(/^.*:/, "", n)
	       s[n] += v; break } }
	     END { for (n in s) print n, s[n] }' "$1"
}
LC_ALL=C join <(selfs "$tmp/self.$lo" | LC_ALL=C sort) \
	<(selfs "$tmp/self.$hi" | LC_ALL=C sort) |
	awk -v d="$d" '{ v = int(($3 - $2) / d); if (v > 0) printf "  %8d  %s\n", v, $1 }' |
	sort -rn | head -n "${SRD_CG_TOP:-15}"
echo "CALLGRIND size=$size mode=$mode send_ir=$send_ir recv_ir=$recv_ir rtt_ir=$rtt_ir"
