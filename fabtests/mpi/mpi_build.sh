#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# mpi_build.sh OUTDIR
#
# Compiles the MPI test programs of this directory with
#   ${MPICC:-mpicc} -O2 -Wall -Wextra [-pthread] -o OUTDIR/PROG PROG.c
# (mpi_threads with -pthread).  Stops at the first compiler error; a
# program is only put into OUTDIR once it has been built completely.
# shellcheck disable=SC2317  # functions run from traps
set -u

here=$(cd "$(dirname "$0")" && pwd)
progs=(mpi_p2p mpi_coll mpi_rma mpi_threads mpi_pingpong mpi_bw mpi_fault)

usage() {
	cat >&2 <<EOF
usage: $0 OUTDIR

Builds ${progs[*]}
into OUTDIR (created if needed) with \${MPICC:-mpicc} -O2 -Wall -Wextra.
EOF
	exit 2
}

[ $# -eq 1 ] || usage
case "$1" in -h|--help) usage ;; esac
out=$1
mpicc=${MPICC:-mpicc}
command -v "$mpicc" >/dev/null || { echo "$0: $mpicc not found" >&2; exit 1; }
mkdir -p "$out" || exit 1

tmpf=
cleanup() { [ -n "$tmpf" ] && rm -f "$tmpf"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

for p in "${progs[@]}"; do
	extra=()
	[ "$p" = mpi_threads ] && extra=(-pthread)
	tmpf="$out/.$p.tmp.$$"
	if ! "$mpicc" -O2 -Wall -Wextra "${extra[@]}" -o "$tmpf" "$here/$p.c"; then
		echo "$0: building $p failed" >&2
		exit 1
	fi
	mv -f "$tmpf" "$out/$p" || exit 1
	tmpf=
done
echo "built ${#progs[@]} programs in $out"
