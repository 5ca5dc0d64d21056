#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# mpi_bench.sh [-i ITER] [-b WINDOWS] [-t SECONDS]
#
# Runs mpi_pingpong and mpi_bw with 2 ranks on loopback through Open MPI's
# mtl ofi for the providers srd, net and "tcp;ofi_rxm", and prints a table:
# one-way latency (us) at 8 B, 4 KiB, 64 KiB, 1 MiB and bandwidth (MB/s,
# 10^6 bytes) at 64 KiB and 1 MiB per provider, plus the ratios srd/net
# and srd/tcp;ofi_rxm (latency: below 1 = srd faster; bandwidth: above 1
# = srd faster).  A provider that does not run shows "n/a".
#
# srd and tcp;ofi_rxm are pinned to lo (FI_<PROV>_IFACE=lo).  net runs
# unpinned, marked "*": with FI_NET_IFACE=lo, libfabric 1.17's net
# provider under Open MPI 4.1's mtl ofi fails to open (its RDM endpoint
# listens on a socket it never created: "xnet_listen(): socket listen
# failed"); unpinned it binds the host's own address, and traffic
# between two local addresses is carried by the kernel's loopback all
# the same.  A pinned run that fails is retried once unpinned, and marked
# "*" too.
#
# mpirun flags per provider P:
#   --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include P -x FI_PROVIDER=P
#   --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo --bind-to none
#   -x FI_SRD_IFACE -x FI_TCP_IFACE -x FI_NET_IFACE [-x FI_PROVIDER_PATH]
# Binaries: $MPI_BINDIR, else built into a temporary directory.
# shellcheck disable=SC2317  # functions run from traps
set -u

here=$(cd "$(dirname "$0")" && pwd)
iters=1000
windows=50
tmo=40
providers=(srd net "tcp;ofi_rxm")
lat_sizes=(8 4096 65536 1048576)
bw_sizes=(65536 1048576)

usage() {
	cat >&2 <<'EOF'
usage: mpi_bench.sh [-i ITER] [-b WINDOWS] [-t SECONDS]
  -i ITER     ping-pong round trips per size (default 1000; sizes above
              64 KiB run proportionally fewer, at least 10)
  -b WINDOWS  bandwidth windows of 64 messages per size (default 50)
  -t SECONDS  timeout per mpirun (default 40)
Providers: srd, net, "tcp;ofi_rxm", each pinned to lo.  Set
FI_PROVIDER_PATH to pick the srd build (e.g. /work/main/build/.libs).
EOF
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-i) [ $# -ge 2 ] || usage; iters=$2; shift 2 ;;
	-b) [ $# -ge 2 ] || usage; windows=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; tmo=$2; shift 2 ;;
	-h|--help) usage ;;
	*) usage ;;
	esac
done
for v in "$iters" "$windows" "$tmo"; do
	case "$v" in ''|*[!0-9]*) usage ;; esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpi_bench.XXXXXX") || exit 1
cur_pid=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$cur_pid" ] && kill -TERM "$cur_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

if [ -n "${MPI_BINDIR:-}" ]; then
	bindir=$MPI_BINDIR
else
	bindir=$tmp/bin
	"$here/mpi_build.sh" "$bindir" >"$tmp/build.log" 2>&1 || {
		cat "$tmp/build.log" >&2
		exit 1
	}
fi

join() { local IFS=,; echo "$*"; }

declare -A val		# val[prov|lat|size], val[prov|bw|size]
declare -A mark		# mark[prov] = "*" when run unpinned

# run_one PROV PINNED OUT PROGRAM ARGS...
run_one() {
	local p=$1 pinned=$2 out=$3 prog=$4 rc
	shift 4
	local -a envs=(env FI_SRD_IFACE=lo FI_TCP_IFACE=lo FI_NET_IFACE=lo)
	[ "$pinned" = 0 ] && envs=(env -u FI_SRD_IFACE -u FI_TCP_IFACE -u FI_NET_IFACE)
	local -a x=()
	[ "$pinned" = 1 ] && x=(-x FI_SRD_IFACE -x FI_TCP_IFACE -x FI_NET_IFACE)
	[ -n "${FI_PROVIDER_PATH:-}" ] && x+=(-x FI_PROVIDER_PATH)
	"${envs[@]}" timeout -k 5 "$tmo" mpirun --allow-run-as-root \
		--oversubscribe --bind-to none -np 2 \
		--mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "$p" \
		-x "FI_PROVIDER=$p" "${x[@]}" \
		"$bindir/$prog" -t "$tmo" "$@" >"$out" 2>&1 &
	cur_pid=$!
	wait "$cur_pid"
	rc=$?
	cur_pid=
	[ "$rc" = 0 ] && grep -q "^PASS $prog" "$out"
}

# bench PROV PINNED: both programs; 0 if both passed
bench() {
	local p=$1 pinned=$2 f=$tmp/${1//[^a-z_]/_} s v ok=0
	run_one "$p" "$pinned" "$f.lat" mpi_pingpong \
		-s "$(join "${lat_sizes[@]}")" -i "$iters" || ok=1
	run_one "$p" "$pinned" "$f.bw" mpi_bw \
		-s "$(join "${bw_sizes[@]}")" -i "$windows" || ok=1
	while read -r _ s v; do val["$p|lat|$s"]=$v; done < <(grep '^lat ' "$f.lat")
	while read -r _ s v; do val["$p|bw|$s"]=$v; done < <(grep '^bw ' "$f.bw")
	return $ok
}

t0=$(date +%s)
echo "mpi_bench: 2 ranks on lo, pingpong -i $iters, bw -i $windows," \
     "FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-<libfabric default>}"
for p in "${providers[@]}"; do
	mark[$p]=
	if [ "$p" = net ]; then
		mark[$p]="*"
		bench "$p" 0 || echo "note: $p failed" >&2
		continue
	fi
	if bench "$p" 1; then
		continue
	fi
	echo "note: $p failed pinned to lo:" >&2
	grep -v '^\s*$' "$tmp/${p//[^a-z_]/_}.lat" "$tmp/${p//[^a-z_]/_}.bw" |
		grep -iE 'fail|error|abort|warn|cannot' | head -n 4 | sed 's/^/    /' >&2
	for k in "${!val[@]}"; do
		[ "${k%%|*}" = "$p" ] && unset "val[$k]"
	done
	if bench "$p" 0; then
		mark[$p]="*"
	else
		echo "note: $p failed unpinned too" >&2
	fi
done

fmt() { if [ -n "${1:-}" ]; then echo "$1"; else echo "n/a"; fi; }
ratio() {
	if [ -n "${1:-}" ] && [ -n "${2:-}" ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
	else
		echo "n/a"
	fi
}
human() {
	case "$1" in
	1048576) echo "1 MiB" ;; 65536) echo "64 KiB" ;; 4096) echo "4 KiB" ;;
	*) echo "$1 B" ;;
	esac
}

echo
printf "%-18s" "metric"
for p in "${providers[@]}"; do printf " %14s" "$p${mark[$p]}"; done
printf " %10s %16s\n" "srd/net" "srd/tcp;ofi_rxm"
for kind in lat bw; do
	if [ "$kind" = lat ]; then sizes=("${lat_sizes[@]}"); unit=us; else sizes=("${bw_sizes[@]}"); unit=MB/s; fi
	for s in "${sizes[@]}"; do
		printf "%-18s" "$kind $(human "$s") ($unit)"
		for p in "${providers[@]}"; do
			printf " %14s" "$(fmt "${val[$p|$kind|$s]:-}")"
		done
		printf " %10s %16s\n" \
			"$(ratio "${val[srd|$kind|$s]:-}" "${val[net|$kind|$s]:-}")" \
			"$(ratio "${val[srd|$kind|$s]:-}" "${val[tcp;ofi_rxm|$kind|$s]:-}")"
	done
done
for p in "${providers[@]}"; do
	[ -n "${mark[$p]}" ] || continue
	if [ "$p" = net ]; then
		echo "* net: interface not pinned (libfabric 1.17's net fails to open under Open MPI 4.1 with FI_NET_IFACE=lo); its traffic stays on the kernel's loopback"
	else
		echo "* $p: failed pinned to lo, ran with the interface left to the provider"
	fi
done
echo "measured: Open MPI's MPI_Send/MPI_Recv latency (one-way: half a ping-pong round trip) and MPI_Isend window bandwidth (MB = 10^6 B), data filled and checked outside the timed part"
echo "ratios: srd's figure over the peer's; latency below 1 and bandwidth above 1 mean srd is faster"
echo "($(( $(date +%s) - t0 ))s)"
exit 0
