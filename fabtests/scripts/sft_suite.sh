#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sft_suite.sh -p PROVIDER [--quick] [-t SECONDS] [TEST...]
#
# Runs the sft_* tests against PROVIDER: sft_api directly, the others as
# server/client pairs through sft_pair.sh.  Prints "PASS name",
# "FAIL name" or "SKIP name: reason" per test (with its run time), the
# output of failed tests, and finally one line "N passed, N failed,
# N skipped".  Exit 1 if any test failed, else 0.
#
# Binaries: $SFT_BINDIR, default this script's directory (an install:
# $libexecdir/srd) or the one above it (where "make" builds them), else
# wherever sft_pingpong is found in $PATH.
# TEST names restrict the run (see the list printed by -h).
set -u

here=$(cd "$(dirname "$0")" && pwd)
prov=
quick=0
tmo=
only=()

usage() {
	echo "usage: $0 -p PROVIDER [--quick] [-t SECONDS_PER_TEST] [TEST...]" >&2
	echo "tests: ${all_tests[*]}" >&2
	exit 2
}

all_tests=(api pingpong_msg pingpong_tagged bw_msg bw_tagged
	   stream unexpected_msg unexpected_tagged peek multi_recv cancel inject
	   cqdata perf_lat perf_bw perf_write perf_read perf_disagree scale_av
	   scale_peers scale_hot threads nccl)

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; prov=$2; shift 2 ;;
	--quick|-q) quick=1; shift ;;
	-t) [ $# -ge 2 ] || usage; tmo=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) only+=("$1"); shift ;;
	esac
done
[ -n "$prov" ] || usage

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
sft_find_bindir sft_pingpong
pair="$here/sft_pair.sh"

# Everything runs over loopback.
export FI_TCP_IFACE=${FI_TCP_IFACE:-lo}
export FI_SRD_IFACE=${FI_SRD_IFACE:-lo}
export FI_NET_IFACE=${FI_NET_IFACE:-lo}

if [ "$quick" = 1 ]; then
	tmo=${tmo:-60}
	pp_args=(-S "0,1,64,4k,64k,1m" -I 5)
	bw_msg_args=(-S "4k,1m" -I 2)
	bw_tag_args=(-S "64,256k" -I 2)
	stream_args=(-S 256k -W 16 -I 200)
	ux_args=(-I 12)
	mr_args=(-I 200)
	perf_n=200
	nccl_args=(-W 2 -I 2)
	# the sanitized quick suite also runs it over the emulated verbs
	# device, where four modes of -I 200 took more than a minute
	threads_args=(-I 50 -S 256k -W 2)
else
	tmo=${tmo:-120}
	pp_args=(-S "all" -I 10)
	bw_msg_args=(-S "64,4k,64k,1m,64m" -I 4)
	bw_tag_args=(-S "1,4k,256k,4m" -I 4)
	stream_args=(-S 1m -W 64 -I 1000)
	ux_args=(-I 24)
	mr_args=(-I 500)
	perf_n=1000
	nccl_args=(-W 4 -I 4)
	threads_args=(-I 1000 -S 1m -W 4)
fi
common=(-p "$prov" -t "$tmo")	# the programs' own watchdog
ptmo=$((tmo + 10))			# timeout(1) backstop

# set_cmd NAME: put the command line of test NAME into the array cmd
set_cmd() {
	local b=$bindir
	local p=("$pair" -t "$ptmo" --)
	case "$1" in
	api) cmd=(timeout -k 5 "$ptmo" "$b/sft_api" "${common[@]}") ;;
	pingpong_msg) cmd=("${p[@]}" "$b/sft_pingpong" "${common[@]}" -m msg "${pp_args[@]}") ;;
	pingpong_tagged) cmd=("${p[@]}" "$b/sft_pingpong" "${common[@]}" -m tagged "${pp_args[@]}") ;;
	bw_msg) cmd=("${p[@]}" "$b/sft_bw" "${common[@]}" -m msg "${bw_msg_args[@]}") ;;
	bw_tagged) cmd=("${p[@]}" "$b/sft_bw" "${common[@]}" -m tagged "${bw_tag_args[@]}") ;;
	stream) cmd=("${p[@]}" "$b/sft_stream" "${common[@]}" "${stream_args[@]}") ;;
	unexpected_msg) cmd=("${p[@]}" "$b/sft_unexpected" "${common[@]}" -m msg "${ux_args[@]}") ;;
	unexpected_tagged) cmd=("${p[@]}" "$b/sft_unexpected" "${common[@]}" -m tagged "${ux_args[@]}") ;;
	peek) cmd=("${p[@]}" "$b/sft_peek" "${common[@]}") ;;
	multi_recv) cmd=("${p[@]}" "$b/sft_multi_recv" "${common[@]}" "${mr_args[@]}") ;;
	cancel) cmd=("${p[@]}" "$b/sft_cancel" "${common[@]}") ;;
	inject) cmd=("${p[@]}" "$b/sft_inject" "${common[@]}") ;;
	cqdata) cmd=("${p[@]}" "$b/sft_cqdata" "${common[@]}") ;;
	# the benchmark programs, briefly: their own checks must hold
	perf_lat) cmd=("${p[@]}" "$b/sft_perf" "${common[@]}" -o lat -m tagged -S 8,4k,64k,1m -I "$perf_n") ;;
	perf_bw) cmd=("${p[@]}" "$b/sft_perf" "${common[@]}" -o bw -S 8,64k,1m -W 16 -I "$perf_n") ;;
	perf_write) cmd=("${p[@]}" "$b/sft_perf" "${common[@]}" -o write -S 8,64k,1m -W 16 -I "$perf_n") ;;
	perf_read) cmd=("${p[@]}" "$b/sft_perf" "${common[@]}" -o read -S 8,64k,1m -W 16 -I "$perf_n") ;;
	# the two ends given different windows: both must stop at once,
	# each naming the option and both values, before any traffic
	perf_disagree) cmd=(expect_disagree "$pair" -t "$ptmo" -c -W -c 4 --
			    "$b/sft_perf" "${common[@]}" -o lat -S 8 -W 16
			    -I 16) ;;
	scale_av) cmd=(timeout -k 5 "$ptmo" "$b/sft_scale" "${common[@]}" -o av -S 1000,100000) ;;
	scale_peers) cmd=("${p[@]}" "$b/sft_scale" "${common[@]}" -o peers -S 32 -W 64 -I "$perf_n") ;;
	# a hot set of 4 among 32 peers after a silence, against the client's
	# second endpoint that knows the 4 alone: rounds in turn, every
	# message's number checked (its ratio is not judged here)
	scale_hot) cmd=(env SFT_SCALE_IDLE_MS=200 SFT_SCALE_HOT=4 SFT_SCALE_ROUNDS=2
			"${p[@]}" "$b/sft_scale" "${common[@]}" -o peers -S 32 -W 64 -I "$perf_n") ;;
	# two processes, two threads with an endpoint each, two threads on
	# one endpoint: every byte checked (its ratios are not judged here)
	threads) cmd=(timeout -k 5 "$ptmo" "$b/sft_threads" "${common[@]}" "${threads_args[@]}") ;;
	# aws-ofi-nccl's SENDRECV sequence: 4 communicators each way, sizes
	# 0..4 MiB, 4 rounds.  The plugin drops tcp entries on the
	# interfaces of OFI_NCCL_EXCLUDE_TCP_IF (its default: lo,docker0);
	# the suite runs on lo, so lo is let through, as a user of the
	# plugin on loopback would set it.  Against libfabric 1.17 the TCP
	# provider to give is "tcp;ofi_rxm": 1.17's tcp alone offers only
	# FI_EP_MSG (fi_info -p tcp -t FI_EP_RDM lists only tcp;ofi_rxm),
	# and ofi_rxm adds the FI_EP_RDM and FI_TAGGED the plugin asks for.
	nccl) cmd=(env "OFI_NCCL_EXCLUDE_TCP_IF=${OFI_NCCL_EXCLUDE_TCP_IF:-docker0}"
		   "${p[@]}" "$b/sft_nccl" "${common[@]}" "${nccl_args[@]}") ;;
	*) return 1 ;;
	esac
}

# expect_disagree PAIR...: the pair must fail, each end with the
# message that names -W and both windows, its own first
expect_disagree() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ "$rc" = 77 ] && return 77	# the provider cannot run sft_perf
	if [ "$rc" != 1 ]; then
		echo "expected the pair to fail (rc 1), got $rc"
		return 1
	fi
	local srv='disagree on -W: 16 here, 4 at the other end'
	local cli='disagree on -W: 4 here, 16 at the other end'
	if ! grep -q "^\[server\] FAIL .*$srv" <<<"$out" ||
	   ! grep -q "^\[client\] FAIL .*$cli" <<<"$out"; then
		echo "expected both ends to name -W and both windows"
		return 1
	fi
}

tests=("${all_tests[@]}")
if [ ${#only[@]} -gt 0 ]; then
	tests=("${only[@]}")
	for t in "${tests[@]}"; do
		set_cmd "$t" || { echo "unknown test '$t'" >&2; usage; }
	done
fi

logdir=$(mktemp -d "${TMPDIR:-/tmp}/sft_suite.XXXXXX") || exit 1
trap 'rm -rf "$logdir"' EXIT

npass=0 nfail=0 nskip=0
# elapsed NS_START: seconds since then, one decimal
elapsed() {
	local ms=$((($(date +%s%N) - $1) / 1000000))
	printf '%d.%ds' $((ms / 1000)) $((ms % 1000 / 100))
}

t_start=$(date +%s%N)
echo "sft suite: provider '$prov', binaries $bindir$([ "$quick" = 1 ] && echo ', quick')"
for t in "${tests[@]}"; do
	t0=$(date +%s%N)
	set_cmd "$t"
	"${cmd[@]}" >"$logdir/$t" 2>&1
	rc=$?
	dt=$(elapsed "$t0")
	case $rc in
	0) echo "PASS $t ($dt)"; npass=$((npass + 1)) ;;
	77)
		reason=$(grep -m1 -o 'SKIP: .*' "$logdir/$t" | sed 's/^SKIP: //')
		echo "SKIP $t: ${reason:-no reason given} ($dt)"
		nskip=$((nskip + 1)) ;;
	*)
		echo "FAIL $t ($dt, exit $rc)"
		echo "  command: $(printf '%q ' "${cmd[@]}")"
		tail -n 40 "$logdir/$t" | sed 's/^/  | /'
		nfail=$((nfail + 1)) ;;
	esac
done
echo "total time $(elapsed "$t_start")"
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" = 0 ]
