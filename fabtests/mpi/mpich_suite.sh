#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# mpich_suite.sh [-p PROVIDER] [-r "2 4"] [-o CASES] [-t SECONDS] [--quick] [-k]
#
# The MPI test programs of this directory under MPICH built with
# --with-device=ch4:ofi (its mpicc and Hydra mpiexec first in PATH, or
# MPICH_BIN=DIR naming them), over libfabric provider PROVIDER (default
# srd) on loopback: point-to-point, collectives, MPI_THREAD_MULTIPLE,
# one-sided (MPI_Win_create and MPI_Win_allocate windows), ping-pong and
# bandwidth, at each rank count.  MPIR_CVAR_NOLOCAL=1 keeps MPICH's
# shared memory out, so every message between ranks goes through
# libfabric.  A first "select" case proves it: with FI_SRD_STATS=1 every
# rank's srd endpoint reports the bytes it received, and MPICH's debug
# summary names the provider.  Prints "PASS name np=N (Xs)" or "FAIL ..."
# per case and "N passed, M failed"; exit 1 if any failed.
#
# MPICH is not in Debian 12 with ch4:ofi (Debian's is ch4:ucx): build it
# from its public source, e.g.
#   ./configure --prefix=/opt/mpich --with-device=ch4:ofi \
#       --with-libfabric=/usr --disable-fortran && make install
# shellcheck disable=SC2317  # trap functions
set -u

here=$(cd "$(dirname "$0")" && pwd)
prov=srd
ranks_list="2 4"
case_tmo=
quick=0
keep=0
only=

usage() {
	sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; prov=$2; shift 2 ;;
	-r) [ $# -ge 2 ] || usage; ranks_list=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; case_tmo=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	-k) keep=1; shift ;;
	*) usage ;;
	esac
done
if [ -z "$case_tmo" ]; then
	if [ "$quick" = 1 ]; then case_tmo=150; else case_tmo=300; fi
fi
prog_tmo=$((case_tmo > 20 ? case_tmo - 10 : case_tmo))

[ -n "${MPICH_BIN:-}" ] && PATH=$MPICH_BIN:$PATH
command -v mpiexec >/dev/null || { echo "mpiexec not found" >&2; exit 1; }
if ! mpiexec --version 2>/dev/null | grep -q HYDRA; then
	echo "mpiexec is not MPICH's Hydra (set MPICH_BIN)" >&2
	exit 1
fi
if ! mpichversion 2>/dev/null | grep -q 'ch4:ofi'; then
	echo "this MPICH is not built with ch4:ofi:" >&2
	mpichversion 2>&1 | grep -i device >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpich_suite.XXXXXX") || exit 1
cur_pid=
cleanup() {
	trap - EXIT INT TERM
	if [ -n "$cur_pid" ]; then
		kill -TERM "$cur_pid" 2>/dev/null
		sleep 2
		kill -KILL "$cur_pid" 2>/dev/null
		wait "$cur_pid" 2>/dev/null
	fi
	if [ "$keep" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

bindir=$tmp/bin
MPICC=mpicc "$here/mpi_build.sh" "$bindir" >"$tmp/build.log" 2>&1 || {
	cat "$tmp/build.log" >&2
	echo "build failed" >&2
	exit 1
}

export FI_SRD_IFACE=lo FI_TCP_IFACE=lo FI_NET_IFACE=lo
base=(mpiexec -launcher fork
      -genv FI_PROVIDER "$prov"
      -genv MPIR_CVAR_NOLOCAL 1
      -genv FI_SRD_IFACE lo -genv FI_TCP_IFACE lo -genv FI_NET_IFACE lo)
[ -n "${FI_PROVIDER_PATH:-}" ] && base+=(-genv FI_PROVIDER_PATH "$FI_PROVIDER_PATH")
[ -n "${LD_LIBRARY_PATH:-}" ] && base+=(-genv LD_LIBRARY_PATH "$LD_LIBRARY_PATH")
for v in $(compgen -e | grep '^FI_SRD_' | grep -v '^FI_SRD_IFACE$'); do
	base+=(-genv "$v" "${!v}")
done

if [ "$quick" = 1 ]; then
	a_p2p=(-m 1m -n 200) a_coll=(-c 1,1000,10000)
	a_rma=(-m 64k -a 4096 -n 100) a_thr=(-i 20)
	a_pp=(-s 0,8,4k,64k,1m -i 10) a_bw=(-s 64k,1m -i 1 -W 16)
else
	a_p2p=() a_coll=() a_rma=() a_thr=()
	a_pp=(-s 0,8,4k,64k,1m,4m -i 50) a_bw=(-s 1,64k,1m,4m -i 3)
fi

npass=0 nfail=0 failed=()
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() {
	echo "FAIL $1"
	grep -v '^\s*$' "$2" | tail -n 20 | sed 's/^/    /'
	nfail=$((nfail + 1)); failed+=("$1")
}

# run_case NAME NP PROGRAM ARGS...
run_case() {
	local name=$1 np=$2 prog=$3 log rc t0 secs
	shift 3
	if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then return 0; fi
	log="$tmp/$name.np$np.log"
	t0=$(date +%s.%N)
	timeout -k 10 "$case_tmo" "${base[@]}" -n "$np" \
		"$bindir/$prog" -t "$prog_tmo" "$@" >"$log" 2>&1 &
	cur_pid=$!
	wait "$cur_pid"
	rc=$?
	cur_pid=
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	if [ "$rc" = 0 ] && grep -q "^PASS $prog" "$log"; then
		pass "$name np=$np (${secs}s)"
		grep -E '^(lat|bw) ' "$log" | sed 's/^/    /'
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "$name np=$np (timeout after ${secs}s)" "$log"
	else
		fail "$name np=$np (exit $rc, ${secs}s)" "$log"
	fi
}

# Two ranks exchange 20 x 64 KiB each way: with srd's statistics on, both
# ranks' endpoints must report having received at least that much, and
# MPICH must name the provider it chose.
check_select() {
	local log="$tmp/select.log" rc bad=() n min=$((20 * 65536))
	FI_SRD_STATS=1 timeout -k 10 120 "${base[@]}" -genv FI_SRD_STATS 1 \
		-genv MPIR_CVAR_DEBUG_SUMMARY 1 -n 2 \
		"$bindir/mpi_pingpong" -s 65536 -i 20 -t 100 >"$log" 2>&1
	rc=$?
	[ "$rc" = 0 ] && grep -q '^PASS mpi_pingpong' "$log" || bad+=("run failed (exit $rc)")
	grep -qi "provider.*$prov\|$prov.*provider" "$log" ||
		bad+=("MPICH's summary does not name provider $prov")
	if [ "$prov" = srd ]; then
		# the "ep" line of each endpoint's report (fi_srd(7) STATISTICS)
		n=$(awk -v min="$min" '/^ep tx_pkts=/ {
			for (i = 2; i <= NF; i++)
				if (index($i, "rx_bytes=") == 1) b = substr($i, 10) + 0
			if (b >= min) n++ } END { print n + 0 }' "$log")
		[ "$n" -ge 2 ] || bad+=("$n of 2 ranks' srd endpoints received >= $min bytes")
	fi
	if [ ${#bad[@]} -eq 0 ]; then
		pass "select: MPICH ch4:ofi chose $prov, which carried the traffic"
	else
		fail "select: $(printf '%s; ' "${bad[@]}")" "$log"
	fi
}

echo "mpich_suite: provider=$prov ranks=\"$ranks_list\" quick=$quick" \
     "mpiexec=$(command -v mpiexec)"
t_start=$(date +%s)
check_select
for np in $ranks_list; do
	run_case p2p "$np" mpi_p2p "${a_p2p[@]}"
	run_case coll "$np" mpi_coll "${a_coll[@]}"
	run_case threads "$np" mpi_threads "${a_thr[@]}"
	run_case rma "$np" mpi_rma -v "${a_rma[@]}"
	run_case pingpong "$np" mpi_pingpong "${a_pp[@]}"
	run_case bw "$np" mpi_bw "${a_bw[@]}"
done
echo "$npass passed, $nfail failed ($(( $(date +%s) - t_start )) s)" \
     "${failed[*]:+: ${failed[*]}}"
[ "$nfail" = 0 ]
