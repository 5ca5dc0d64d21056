#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# upstream_fabtests.sh BINDIR [-p PROVIDER] [-x EXCLUDE] [-t REGEX] [-E]: runs libfabric's
# own fabtests (built separately from their public source; nothing of them
# is in this repo) pairwise over loopback: the RDM tests that release's
# runfabtests.sh runs, minus an exclude list.  Two generations: 1.x
# (v1.17.0: fi_poll, fi_bw) with upstream/srd.exclude, and 2.x (no fi_poll
# test; fi_flood, fi_inject_test, fi_setopt_test) with
# upstream/srd-2.x.exclude; BINDIR's programs tell which.  Each side runs
# under a timeout; a test passes only if both sides exit 0.  It never
# kills processes by name (runfabtests.sh's clean-up kills every fi_* on
# the machine).  2.x: runfabtests.sh's unit, functional, short
# (its default, "quick") and standard sets, and the regression test;
# not its threaded set (fi_rdm_bw_mt -n 8..32: 16 to 64 busy-polling
# threads per pair, more than a small machine's cores; run it by hand),
# complex (fi_ubertest: a per-provider config srd has none of) or
# multinode.  -t REGEX: only the tests whose command line matches.  -E: pairs exchange their names out of band (fabtests'
# -E) instead of resolving 127.0.0.1, and the unit tests that take IP
# addresses are skipped: for FI_SRD_WIRE=verbs, whose names (GID, QPN)
# no IP address gives.
set -u
bindir=${1:?usage: $0 FABTESTS_BINDIR [-p PROVIDER] [-x EXCLUDE_FILE] [-t REGEX] [-E]}
shift
prov=srd
exclude=
only=
oob=0
while [ $# -gt 0 ]; do
	case $1 in
	-E) oob=1; shift ;;
	-p) prov=$2; shift 2 ;;
	-x) exclude=$2; shift 2 ;;
	-t) only=$2; shift 2 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$bindir/fi_flood" ]; then
	gen=2
	: "${exclude:=$here/../upstream/srd-2.x.exclude}"
else
	gen=1
	: "${exclude:=$here/../upstream/srd.exclude}"
fi
export FI_SRD_IFACE=lo FI_TCP_IFACE=lo FI_NET_IFACE=lo
S=127.0.0.1
tmo=${UPSTREAM_TIMEOUT:-120}
passed=0 failed=0 excluded=0

unit_tests=(
	"fi_getinfo_test -s $S $S"
	"fi_av_test -g $S -n 1 -s $S -e rdm"
	"fi_dom_test -n 2"
	"fi_eq_test"
	"fi_cq_test"
	"fi_mr_test"
	"fi_cntr_test"
)
if [ $gen = 1 ]; then
pair_tests=(
	"fi_av_xfer -e rdm"
	"fi_cq_data -e rdm"
	"fi_rdm" "fi_rdm -U"
	"fi_rdm_rma_event" "fi_rdm_rma_trigger"
	"fi_shared_ctx" "fi_scalable_ep" "fi_rdm_shared_av"
	"fi_rdm_tagged_peek"
	"fi_multi_mr -e rdm -V"
	"fi_multi_ep -e rdm -v"
	"fi_recv_cancel -e rdm -V"
	"fi_unexpected_msg -e rdm -I 10"
	"fi_bw -e rdm -v -T 1" "fi_bw -e rdm -v -T 1 -U"
	"fi_rdm_multi_client -C 10 -I 5" "fi_rdm_multi_client -C 10 -I 5 -U"
	"fi_rma_bw -e rdm -o write -I 5" "fi_rma_bw -e rdm -o write -v -I 5"
	"fi_rma_bw -e rdm -o read -v -I 5" "fi_rma_bw -e rdm -o writedata -v -I 5"
	"fi_rma_bw -e rdm -o write -v -I 5 -U"
	"fi_rdm_atomic -I 5 -o all" "fi_rdm_atomic -I 5 -o all -U"
	"fi_rdm_cntr_pingpong -I 5"
	"fi_multi_recv -e rdm -I 5"
	"fi_rdm_pingpong -I 5" "fi_rdm_pingpong -I 5 -v"
	"fi_rdm_pingpong -I 5 -U" "fi_rdm_pingpong -I 5 -v -U"
	"fi_rdm_tagged_pingpong -I 5" "fi_rdm_tagged_pingpong -I 5 -v"
	"fi_rdm_tagged_bw -I 5" "fi_rdm_tagged_bw -I 5 -v"
	"fi_rdm_pingpong" "fi_rdm_pingpong -k" "fi_rdm_pingpong -v"
	"fi_rdm_tagged_pingpong" "fi_rdm_tagged_bw"
	"fi_rdm_cntr_pingpong"
	"fi_multi_recv -e rdm"
	"fi_poll -t queue" "fi_poll -t counter"
)
else
unit_tests+=("fi_setopt_test" "sighandler_test")
pair_tests=(
	"fi_av_xfer -e rdm"
	"fi_cq_data -e rdm -o senddata" "fi_cq_data -e rdm -o writedata"
	"fi_rdm" "fi_rdm -U"
	"fi_rdm_rma_event" "fi_rdm_rma_trigger"
	"fi_shared_ctx" "fi_shared_ctx --no-tx-shared-ctx"
	"fi_shared_ctx --no-rx-shared-ctx"
	"fi_rdm_tagged_peek" "fi_scalable_ep" "fi_rdm_shared_av"
	"fi_multi_mr -e rdm -V"
	"fi_multi_ep -e rdm -v -A" "fi_multi_ep -e rdm -v -Q"
	"fi_multi_ep -e rdm -v -A -Q"
	"fi_multi_ep -e rdm -v --threading completion"
	"fi_multi_ep -e rdm -v -A --threading completion"
	"fi_multi_ep -e rdm -v -Q --threading completion"
	"fi_multi_ep -e rdm -v -A -Q --threading completion"
	"fi_recv_cancel -e rdm -V"
	"fi_unexpected_msg -e rdm -I 10 -v"
	"fi_inject_test -A inject -v" "fi_inject_test -N -A inject -v"
	"fi_inject_test -A inj_complete -v" "fi_inject_test -N -A inj_complete -v"
	"fi_flood -e rdm -v -T 1" "fi_flood -e rdm -v -T 1 -U"
	"fi_rdm_multi_client -C 10 -I 5" "fi_rdm_multi_client -C 10 -I 5 -U"
	"fi_rma_bw -e rdm -o write -I 5" "fi_rma_bw -e rdm -o write -I 5 -U"
	"fi_rma_bw -e rdm -o read -I 5" "fi_rma_bw -e rdm -o read -I 5 -U"
	"fi_rma_bw -e rdm -o writedata -I 5" "fi_rma_bw -e rdm -o writedata -I 5 -U"
	"fi_rdm_atomic -I 5 -o all" "fi_rdm_atomic -I 5 -o all -U"
	"fi_rdm_atomic -I 5 -o all -v" "fi_rdm_atomic -I 5 -o all -U -v"
	"fi_rdm_cntr_pingpong -I 5"
	"fi_multi_recv -e rdm -I 5"
	"fi_rdm_pingpong -I 5" "fi_rdm_pingpong -I 5 -U"
	"fi_rdm_pingpong -I 5 -v" "fi_rdm_pingpong -I 5 -v -U"
	"fi_rdm_tagged_pingpong -I 5" "fi_rdm_tagged_pingpong -I 5 -U"
	"fi_rdm_tagged_pingpong -I 5 -v" "fi_rdm_tagged_pingpong -I 5 -v -U"
	"fi_rdm_tagged_bw -I 5" "fi_rdm_tagged_bw -I 5 -U"
	"fi_rdm_tagged_bw -I 5 -v" "fi_rdm_tagged_bw -I 5 -v -U"
	# runfabtests.sh's standard set (-t standard, -t all)
	"fi_rma_bw -e rdm -o write" "fi_rma_bw -e rdm -o write -U"
	"fi_rma_bw -e rdm -o read" "fi_rma_bw -e rdm -o read -U"
	"fi_rma_bw -e rdm -o writedata" "fi_rma_bw -e rdm -o writedata -U"
	"fi_rdm_atomic -o all -I 1000" "fi_rdm_atomic -o all -I 1000 -U"
	"fi_rdm_atomic -o all -I 1000 -v" "fi_rdm_atomic -o all -I 1000 -U -v"
	"fi_rdm_cntr_pingpong"
	"fi_multi_recv -e rdm"
	"fi_rdm_pingpong" "fi_rdm_pingpong -U"
	"fi_rdm_pingpong -v" "fi_rdm_pingpong -v -U"
	"fi_rdm_pingpong -k" "fi_rdm_pingpong -k -U"
	"fi_rdm_pingpong -k -v" "fi_rdm_pingpong -k -v -U"
	"fi_rdm_tagged_pingpong" "fi_rdm_tagged_pingpong -U"
	"fi_rdm_tagged_pingpong -v" "fi_rdm_tagged_pingpong -v -U"
	"fi_rdm_tagged_bw" "fi_rdm_tagged_bw -U"
	"fi_rdm_tagged_bw -v" "fi_rdm_tagged_bw -v -U"
)
fi
echo "upstream fabtests generation $gen.x, exclude list $exclude"

is_excluded() {
	local t=$1 re
	while read -r re _; do
		[ -z "$re" ] || [ "${re:0:1}" = "#" ] && continue
		[[ "$t" =~ $re ]] && return 0
	done <"$exclude"
	return 1
}

report() {	# name rc
	if [ "$2" -eq 0 ]; then
		echo "PASS $1"; passed=$((passed + 1))
	else
		echo "FAIL $1 ($3)"; failed=$((failed + 1))
	fi
}

for t in "${unit_tests[@]}"; do
	[[ "$t" =~ $only ]] || continue
	if is_excluded "$t"; then echo "EXCL $t"; excluded=$((excluded + 1)); continue; fi
	if [ $oob = 1 ] && [[ "$t" == *" -s "* ]]; then
		echo "N/A  $t (IP addresses)"; continue
	fi
	out=$(timeout "$tmo" "$bindir/${t%% *}" ${t#* } -p "$prov" 2>&1)
	rc=$?
	report "$t" $rc "rc=$rc"
	[ $rc -eq 0 ] || echo "$out" | tail -5 | sed 's/^/  | /'
done
# A name that is no provider's must get -FI_ENODATA (exit 61).
if [[ "fi_rdm g00n13s" =~ $only ]]; then
	out=$(timeout 30 "$bindir/fi_rdm" -p g00n13s 2>&1); rc=$?
	report "fi_rdm -p g00n13s (expects ENODATA)" $([ $rc -eq 61 ] && echo 0 || echo 1) "rc=$rc"
fi

for t in "${pair_tests[@]}"; do
	[[ "$t" =~ $only ]] || continue
	if is_excluded "$t"; then echo "EXCL $t"; excluded=$((excluded + 1)); continue; fi
	bin=$bindir/${t%% *}
	args=${t#* }
	[ "$args" = "$t" ] && args=
	if [ $oob = 1 ]; then
		srv_args="-E" cli_args="-E $S"
	else
		srv_args="-s $S" cli_args="-s $S $S"
	fi
	timeout "$tmo" "$bin" $args -p "$prov" $srv_args >/tmp/uft-s.$$ 2>&1 &
	srv=$!
	sleep 1
	timeout "$tmo" "$bin" $args -p "$prov" $cli_args >/tmp/uft-c.$$ 2>&1
	crc=$?
	wait $srv
	src=$?
	report "$t" $(( src != 0 || crc != 0 )) "server rc=$src client rc=$crc"
	if [ $src -ne 0 ] || [ $crc -ne 0 ]; then
		tail -4 /tmp/uft-s.$$ | sed 's/^/  | server: /'
		tail -4 /tmp/uft-c.$$ | sed 's/^/  | client: /'
	fi
	rm -f /tmp/uft-s.$$ /tmp/uft-c.$$
done
echo "excluded: $excluded (reasons in $(basename "$exclude"))"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
