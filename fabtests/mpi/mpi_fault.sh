#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# mpi_fault.sh [-p PROVIDER] [-T PEER_TIMEOUT_MS] [-t SECONDS]
#
# Peer-failure check: mpi_fault at 2 ranks over srd (mtl ofi, loopback)
# with -x FI_SRD_PEER_TIMEOUT=2000.  After a barrier rank 1 stops itself
# (SIGSTOP); rank 0 keeps sending 64 KiB messages to it and must get an
# error back, print it ("ERROR after X s: ...") and MPI_Abort.
#
# PASS when mpirun exits non-zero, the program printed an ERROR line (not
# "FAIL: no error"), and mpirun was gone within PEER_TIMEOUT/1000 + 10 s
# of the moment rank 1 stopped.  The whole run is under timeout 60 (-t).
# Afterwards every process left of this exact binary path gets SIGCONT
# and SIGKILL.
#
# mpirun flags:
#   -np 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include srd
#   -x FI_PROVIDER=srd -x FI_SRD_PEER_TIMEOUT=2000 -x FI_SRD_IFACE=lo
#   --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
#   [-x FI_PROVIDER_PATH]
# Binaries: $MPI_BINDIR, else built into a temporary directory.
# shellcheck disable=SC2317  # functions run from traps
set -u

here=$(cd "$(dirname "$0")" && pwd)
prov=srd
peer_ms=2000
tmo=60

usage() {
	cat >&2 <<'EOF'
usage: mpi_fault.sh [-p PROVIDER] [-T PEER_TIMEOUT_MS] [-t SECONDS]
  -p PROVIDER   default srd
  -T MS         FI_SRD_PEER_TIMEOUT passed to the ranks (default 2000)
  -t SECONDS    timeout around mpirun (default 60)
Set FI_PROVIDER_PATH to pick the srd build (e.g. /work/main/build/.libs).
EOF
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; prov=$2; shift 2 ;;
	-T) [ $# -ge 2 ] || usage; peer_ms=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; tmo=$2; shift 2 ;;
	-h|--help) usage ;;
	*) usage ;;
	esac
done
for v in "$peer_ms" "$tmo"; do
	case "$v" in ''|*[!0-9]*) usage ;; esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_fault.XXXXXX") || exit 1
bindir=
run_pid=

reap() {
	# leftovers of our exact binary (a stopped rank 1 above all)
	local pat
	[ -n "$bindir" ] || return 0
	pat="^$bindir/mpi_fault( |\$)"
	pkill -CONT -f "$pat" 2>/dev/null
	pkill -KILL -f "$pat" 2>/dev/null
	return 0
}
cleanup() {
	local t
	trap - EXIT INT TERM
	if [ -n "$run_pid" ]; then
		# timeout(1) passes the TERM on to mpirun
		t=$(cat "$tmp/timeout.pid" 2>/dev/null)
		[ -n "$t" ] && kill -TERM "$t" 2>/dev/null
		sleep 2
		kill -TERM "$run_pid" 2>/dev/null
	fi
	reap
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

if [ -n "${MPI_BINDIR:-}" ]; then
	bindir=$(cd "$MPI_BINDIR" && pwd)
else
	bindir=$tmp/bin
	"$here/mpi_build.sh" "$bindir" >"$tmp/build.log" 2>&1 || {
		cat "$tmp/build.log" >&2
		exit 1
	}
fi
[ -x "$bindir/mpi_fault" ] || { echo "$bindir/mpi_fault missing" >&2; exit 1; }

export FI_SRD_IFACE=lo FI_TCP_IFACE=lo FI_NET_IFACE=lo
limit=$((peer_ms / 1000 + 10))	# seconds from the stop to mpirun's exit
x=()
[ -n "${FI_PROVIDER_PATH:-}" ] && x=(-x FI_PROVIDER_PATH)

echo "mpi_fault: provider $prov, FI_SRD_PEER_TIMEOUT=$peer_ms ms, bound ${limit}s"
# Every output line gets a time stamp; the last line is mpirun's status.
(
	timeout -k 5 "$tmo" mpirun --allow-run-as-root --oversubscribe \
		--bind-to none -np 2 \
		--mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "$prov" \
		-x "FI_PROVIDER=$prov" -x "FI_SRD_PEER_TIMEOUT=$peer_ms" \
		-x FI_SRD_IFACE -x FI_TCP_IFACE -x FI_NET_IFACE "${x[@]}" \
		"$bindir/mpi_fault" -t "$limit" 2>&1 &
	echo $! >"$tmp/timeout.pid"
	wait $!
	echo "MPIRUN_STATUS $?"
) | while IFS= read -r line; do
	printf '%s %s\n' "$(date +%s.%N)" "$line"
done >"$tmp/log" &
run_pid=$!
wait "$run_pid"
run_pid=
reap

sed 's/^[0-9.]* /    /' "$tmp/log" | grep -v '^\s*$' | grep -v '^    MPIRUN_STATUS'
rc=$(awk '$2 == "MPIRUN_STATUS" { print $3 }' "$tmp/log")
t_stop=$(awk '/rank 1: stopping/ { print $1; exit }' "$tmp/log")
t_end=$(awk '$2 == "MPIRUN_STATUS" { print $1 }' "$tmp/log")
errline=$(grep -m1 'ERROR after' "$tmp/log" | sed 's/^[0-9.]* //')

fail=()
[ -n "$rc" ] || fail+=("no exit status")
[ "${rc:-0}" != 0 ] || fail+=("mpirun exited 0")
[ "${rc:-}" = 124 ] || [ "${rc:-}" = 137 ] && fail+=("mpirun hit the ${tmo}s timeout")
grep -q 'FAIL: no error' "$tmp/log" && fail+=("no error reported within ${limit}s")
[ -n "$errline" ] || fail+=("no ERROR line from rank 0")
if [ -n "$t_stop" ] && [ -n "$t_end" ]; then
	secs=$(awk -v a="$t_stop" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }')
	awk -v s="$secs" -v l="$limit" 'BEGIN { exit !(s <= l) }' ||
		fail+=("mpirun exited ${secs}s after the stop (bound ${limit}s)")
else
	secs="?"
	fail+=("rank 1 never reported stopping")
fi

if [ ${#fail[@]} -eq 0 ]; then
	echo "PASS mpi_fault: exit $rc ${secs}s after the stop; $errline"
	exit 0
fi
msg=$(printf '%s; ' "${fail[@]}")
echo "FAIL mpi_fault: ${msg%; } (exit ${rc:-?}, ${secs}s after the stop)"
exit 1
