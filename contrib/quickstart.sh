#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# quickstart.sh: the main job on a fresh Debian 12 machine: installs the
# Debian packages srd needs, builds it, installs libsrd-fi.so where the
# system libfabric loads providers from (no FI_PROVIDER_PATH needed), then
# runs a server and a client over srd on loopback -- Debian's own
# fi_pingpong and the project's sft_pingpong / sft_bw -- and, as root,
# srd, net and tcp;ofi_rxm streaming across a veth of MTU 1500 between
# two network namespaces, and prints the figures.  Latency comes from
# busy-polling clients.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export FI_SRD_IFACE=lo

echo "== installing Debian packages"
contrib/deps.sh
echo "== building"
./autogen.sh >/dev/null 2>&1
mkdir -p build && cd build
[ -f Makefile ] || ../configure -q
make -s -j"$(nproc)" 2>&1 | grep -v "^libtool: " || true
echo "== installing"
$SUDO make -s install >/dev/null
cd "$top"
unset FI_PROVIDER_PATH
echo "== fi_info -p srd (found by the system libfabric)"
fi_info -p srd -d lo | head -8

run_pair() {	# run_pair PORTARGS_SERVER PORTARGS_CLIENT -- CMD...
	local sargs=$1 cargs=$2
	shift 3
	timeout 120 "$@" $sargs >/tmp/srd-qs-server.$$ 2>&1 &
	local srv=$!
	sleep 0.5
	timeout 120 "$@" $cargs
	local rc=$?
	wait $srv || rc=1
	rm -f /tmp/srd-qs-server.$$
	return $rc
}

echo
echo "== fi_pingpong (Debian libfabric-bin), msg, srd over loopback"
echo "   usec/xfer: one-way time (half a round trip), busy polling; no data check"
for size in 8 4096 65536 1048576; do
	port=$((30000 + RANDOM % 20000))
	iters=$([ "$size" -ge 1048576 ] && echo 200 || echo 2000)
	run_pair "-B $port" "-P $port 127.0.0.1" -- \
		fi_pingpong -p srd -e rdm -m msg -I "$iters" -S "$size" |
		{ [ "$size" = 8 ] && cat || tail -n +2; }
done
echo
echo "== sft_pingpong (tagged), srd over loopback"
echo "   half-rtt_us: one-way time, busy polling; every byte checked on both"
echo "   sides, outside the timed round trip (the server checks and refills"
echo "   between polls while it waits)"
SFT_BINDIR=$top/build/fabtests fabtests/scripts/sft_pair.sh -- \
	"$top/build/fabtests/sft_pingpong" -p srd -m tagged -I 1000 \
	-S 8,4k,64k,1m | grep -v "^\[server\]"
echo
echo "== sft_bw (msg), srd over loopback"
echo "   MB/s (10^6 B) of windows of 64 sends, each window acked; the server"
echo "   checks every byte while the next window arrives"
SFT_BINDIR=$top/build/fabtests fabtests/scripts/sft_pair.sh -- \
	"$top/build/fabtests/sft_bw" -p srd -I 20 -S 64k,1m,16m |
	grep -v "^\[server\]"
echo
if [ "$(id -u)" -eq 0 ]; then
	# a real MTU: two namespaces joined by a veth of MTU 1500
	echo "== srd, net and tcp;ofi_rxm at MTU 1500 (a veth between two namespaces)"
	echo "   sft_perf -o bw: MB/s (10^6 B) streaming windows of 64 sends, the"
	echo "   same program for all three; a checked window before and after the"
	echo "   timed ones (ratio srd/peer above 1: srd is faster)"
	bed=fabtests/scripts/srd_veth_bed.sh
	$bed -n srdqs down >/dev/null 2>&1
	if $bed -n srdqs up -m 1500 >/dev/null; then
		veth_out=$(mktemp)
		for p in srd net "tcp;ofi_rxm"; do
			port=$((30000 + RANDOM % 20000))
			$bed -n srdqs exec b env SFT_OOB_ADDR=10.89.0.20 \
				FI_SRD_IFACE=eth0 FI_NET_IFACE=eth0 FI_TCP_IFACE=eth0 \
				timeout 120 "$top/build/fabtests/sft_perf" -p "$p" -o bw \
				-S 64k,1m -W 64 -I 20000 -s -P "$port" >/dev/null 2>&1 &
			sleep 0.5
			$bed -n srdqs exec a env FI_SRD_IFACE=eth0 FI_NET_IFACE=eth0 \
				FI_TCP_IFACE=eth0 timeout 120 \
				"$top/build/fabtests/sft_perf" -p "$p" -o bw -S 64k,1m \
				-W 64 -I 20000 -P "$port" 10.89.0.20 |
				awk -v p="$p" '$1 == "RESULT" { for (i = 2; i <= NF; i++) {
					split($i, kv, "="); f[kv[1]] = kv[2] }
					print p, f["size"], f["mbps"] }' >>"$veth_out" ||
				echo "  $p: failed"
			wait || true
		done
		$bed -n srdqs down >/dev/null
		awk '{ v[$1 " " $2] = $3; sz[$2] = 1 }
		     function r(a, b) { return (a != "" && b > 0) ? sprintf("%.2f", a / b) : "n/a" }
		     END { printf "  %-8s %10s %10s %12s %8s %16s\n", "bytes", "srd", "net",
				"tcp;ofi_rxm", "srd/net", "srd/tcp;ofi_rxm"
			   n = split("65536 1048576", s, " ")
			   for (i = 1; i <= n; i++) {
				a = v["srd " s[i]]; b = v["net " s[i]]; c = v["tcp;ofi_rxm " s[i]]
				printf "  %-8s %10s %10s %12s %8s %16s\n", s[i],
					a == "" ? "n/a" : a, b == "" ? "n/a" : b,
					c == "" ? "n/a" : c, r(a, b), r(a, c) } }' "$veth_out"
		rm -f "$veth_out"
	else
		echo "  (the veth bed could not be built; skipped)"
	fi
	echo
fi
echo "== Open MPI (mtl ofi) over srd, net and tcp;ofi_rxm, 2 ranks on lo"
fabtests/mpi/mpi_bench.sh
echo
echo "srd is installed: select it with FI_PROVIDER=srd (see man fi_srd and"
echo "README.md for the Open MPI flags)."
