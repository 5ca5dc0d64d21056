#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_hosts_recipe.sh [-n NAME] [-t SECONDS]
#
# README's "Two hosts" recipe, run across two network namespaces of the
# veth bed (srd_veth_bed.sh: A 10.89.0.10, B 10.89.0.20 on eth0, MTU
# 1500), each behind README's nftables rule set: UDP passes only between
# ports of FI_SRD_PORT_LOW_RANGE..FI_SRD_PORT_HIGH_RANGE (40000-40199),
# source and destination, and every other UDP datagram is counted and
# dropped.  With the range set, in order:
#   fi_pingpong (Debian's) -m msg and -m tagged, -c -S all: both sides
#     check the data;
#   sft_pingpong and sft_bw, the server bound with -b to B's address and
#     the client with -b to A's (FI_SRD_STATS=1: no path went down);
#   Open MPI's mpi_pingpong (one rank per namespace, a hostfile, and an
#     rsh agent that enters the namespaces), checked byte for byte;
# then the drop counters, which must be 0: every socket of every
# endpoint kept to the range.  Last, the same fi_pingpong without the
# range (FI_SRD_PEER_TIMEOUT=2000) must fail, and the rule set count
# drops.  MPICH (README) is not run: Debian's cannot use libfabric.
#
# Needs root, nft, ip; fi_pingpong and mpirun parts SKIP without them.
# FI_PROVIDER_PATH: where libsrd-fi.so is; SFT_BINDIR: the sft programs
# (default: ../../build/fabtests); MPI_BINDIR: a built mpi_pingpong
# (else it is compiled with mpicc into a temporary directory).
# -t bounds each command (default 60 s).  Exit 0 pass, 1 fail, 77 skip.
set -u
# shellcheck disable=SC2317  # functions run from traps

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=srd_bed_lib.sh
. "$here/srd_bed_lib.sh"
top=$(cd "$here/../.." && pwd)
name=srdhr$$
tmo=60
low=40000
high=40199
while getopts "n:t:h" opt; do
	case "$opt" in
	n) name=$OPTARG ;;
	t) tmo=$OPTARG ;;
	*) sed -n '3,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
for c in nft ip; do
	command -v "$c" >/dev/null || { echo "SKIP: no $c"; exit 77; }
done
sft=${SFT_BINDIR:-$top/build/fabtests}
[ -x "$sft/sft_pingpong" ] || { echo "FAIL: no $sft/sft_pingpong (SFT_BINDIR)"; exit 1; }

bed=("$here/srd_veth_bed.sh" -n "$name")
A=10.89.0.10
B=10.89.0.20
tmp=$(mktemp -d "${TMPDIR:-/tmp}/srd_hosts.XXXXXX") || exit 1
fail=0

cleanup() {
	trap - EXIT INT TERM
	"${bed[@]}" down >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

pass() { echo "PASS $*"; }
failed() { echo "FAIL $*"; fail=1; }

"${bed[@]}" up -m 1500 || { echo "FAIL: the veth bed did not come up"; exit 1; }

# README's rule set, in both namespaces
cat >"$tmp/srd.nft" <<EOF
table inet srd {
    chain input {
        type filter hook input priority filter; policy accept;
        ct state established,related accept
        udp sport $low-$high udp dport $low-$high accept
        meta l4proto udp counter drop
    }
    chain output {
        type filter hook output priority filter; policy accept;
        ct state established,related accept
        udp sport $low-$high udp dport $low-$high accept
        meta l4proto udp counter drop
    }
}
EOF
for h in a b; do
	"${bed[@]}" exec "$h" nft -f "$tmp/srd.nft" ||
		{ echo "FAIL: nft rule set in $h"; exit 1; }
done

# UDP datagrams the rule sets dropped, both hosts, both directions
drops() {
	local h n=0 c
	for h in a b; do
		for c in $("${bed[@]}" exec "$h" nft list table inet srd |
			   sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'); do
			n=$((n + c))
		done
	done
	echo "$n"
}
reset_drops() {
	local h
	for h in a b; do "${bed[@]}" exec "$h" nft reset counters >/dev/null; done
}

range=("FI_SRD_PORT_LOW_RANGE=$low" "FI_SRD_PORT_HIGH_RANGE=$high")
# (contrib/test.sh exports FI_SRD_IFACE=lo: the sft programs pick their
# interface by -b alone)
pp_env=(env -u FI_SRD_IFACE)
[ -n "${FI_PROVIDER_PATH:-}" ] && pp_env+=(FI_PROVIDER_PATH="$FI_PROVIDER_PATH")
srdenv=("${pp_env[@]}" FI_SRD_IFACE=eth0)

# pair NAME SERVER-CMD... -- CLIENT-CMD...: server in B, client in A,
# each bounded; both must exit 0
pair() {
	local what=$1 srv=() cli=() s c t=$SECONDS
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout -k 5 "$tmo" "${bed[@]}" exec b "${srv[@]}" >"$tmp/srv.log" 2>&1 &
	s=$!
	sleep 0.5
	timeout -k 5 "$tmo" "${bed[@]}" exec a "${cli[@]}" >"$tmp/cli.log" 2>&1
	c=$?
	wait "$s"
	s=$?
	tail -2 "$tmp/cli.log" | sed 's/^/    /'
	if [ $s = 0 ] && [ $c = 0 ]; then
		pass "$what ($((SECONDS - t)) s)"
		return 0
	fi
	failed "$what (server rc=$s, client rc=$c)"
	sed 's/^/    server: /' "$tmp/srv.log" | tail -15
	sed 's/^/    client: /' "$tmp/cli.log" | tail -15
	return 1
}

t0=$(date +%s)
if command -v fi_pingpong >/dev/null; then
	for mode in msg tagged; do
		pp=(fi_pingpong -p srd -e rdm -m "$mode" -c -S all -I 5)
		pair "fi_pingpong -m $mode across the hosts, data checked" \
			"${srdenv[@]}" "${range[@]}" "${pp[@]}" -B 47592 -- \
			"${srdenv[@]}" "${range[@]}" "${pp[@]}" -P 47592 "$B"
	done
else
	echo "SKIP fi_pingpong: not installed (libfabric-bin)"
fi

sftenv=("${pp_env[@]}" "${range[@]}" FI_SRD_STATS=1)
pair "sft_pingpong -b across the hosts" \
	"${sftenv[@]}" "$sft/sft_pingpong" -p srd -s -b "$B" -P 47601 \
	-S 0,64,4k,64k,1m -I 20 -- \
	"${sftenv[@]}" "$sft/sft_pingpong" -p srd -b "$A" -P 47601 \
	-S 0,64,4k,64k,1m -I 20 "$B"
pair "sft_bw -b across the hosts" \
	"${sftenv[@]}" "$sft/sft_bw" -p srd -s -b "$B" -P 47602 -S 4k,64k,1m \
	-I 50 -W 8 -- \
	"${sftenv[@]}" "$sft/sft_bw" -p srd -b "$A" -P 47602 -S 4k,64k,1m \
	-I 50 -W 8 "$B"
# FI_SRD_STATS: each side's endpoint on its -b address, its port in the
# range; every path of the sender (A) delivered (acked packets): all of
# them passed both firewalls
for f in srv cli; do
	ep=$(sed -n 's/^srd-stats [0-9]* .* addr=\([0-9.]*\):\([0-9]*\) paths=\([0-9]*\)$/\1 \2 \3/p' \
		"$tmp/$f.log" | head -1)
	read -r ip port np <<<"${ep:-none 0 0}"
	want=$([ $f = srv ] && echo "$B" || echo "$A")
	if [ "$ip" = "$want" ] && [ "$port" -ge $low ] && [ "$port" -le $high ]; then
		pass "sft_bw $f: endpoint $ip:$port, $np paths"
	else
		failed "sft_bw $f: endpoint '${ep:-none}', not on $want in $low-$high"
	fi
done
np=${np:-0}
ok=$(grep -c '^path .* tx_pkts=[1-9][0-9]* .* acked=[1-9]' "$tmp/cli.log")
if [ "$np" -gt 0 ] && [ "$ok" -ge "$np" ]; then
	pass "sft_bw: all $np paths of the sender delivered through the firewalls"
else
	failed "sft_bw: $ok of $np paths delivered"
	grep '^path ' "$tmp/cli.log" | sed 's/^/    /'
fi

# Open MPI: mpirun in A, ranks in A and B through an rsh agent that
# enters the namespace (with the namespace's name as host name, so that
# Open MPI sees two nodes)
mpi() {
	local bin=${MPI_BINDIR:-} out
	if [ -z "$bin" ]; then
		bin=$tmp
		mpicc -O2 -o "$tmp/mpi_pingpong" "$top/fabtests/mpi/mpi_pingpong.c" \
			>"$tmp/mpicc.log" 2>&1 ||
			{ failed "mpicc mpi_pingpong"; cat "$tmp/mpicc.log"; return; }
	fi
	bed_mpi_launcher "$tmp" "$name-a|$name-b"
	printf '%s slots=1\n%s slots=1\n' "$name-a" "$name-b" >"$tmp/hosts"
	local t=$SECONDS
	out=$(cd "$tmp" && "${srdenv[@]}" "${range[@]}" \
		timeout -k 10 "$tmo" "$tmp/nsexec" "$name-a" \
		mpirun --allow-run-as-root --hostfile "$tmp/hosts" --map-by node -np 2 \
		--mca plm_rsh_agent "$tmp/agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include srd \
		--mca oob_tcp_if_include eth0 \
		-x FI_PROVIDER=srd -x FI_SRD_IFACE ${FI_PROVIDER_PATH:+-x FI_PROVIDER_PATH} \
		-x FI_SRD_PORT_LOW_RANGE -x FI_SRD_PORT_HIGH_RANGE \
		"$bin/mpi_pingpong" -s 8,4k,64k,1m -i 20 2>&1)
	local rc=$?
	echo "$out" | tail -3 | sed 's/^/    /'
	if [ $rc = 0 ] && grep -q "^PASS mpi_pingpong" <<<"$out"; then
		pass "Open MPI mpi_pingpong across the hosts (hostfile, mtl ofi, srd; $((SECONDS - t)) s)"
	else
		failed "Open MPI mpi_pingpong (rc=$rc)"
		echo "$out" | tail -20 | sed 's/^/    /'
	fi
}
if command -v mpirun >/dev/null && command -v mpicc >/dev/null; then
	mpi
else
	echo "SKIP Open MPI: no mpirun/mpicc"
fi

n=$(drops)
if [ "$n" = 0 ]; then
	pass "the rule sets dropped no UDP datagram: every socket bound in $low-$high"
else
	failed "the rule sets dropped $n UDP datagrams with the range set"
	for h in a b; do "${bed[@]}" exec "$h" nft list table inet srd | sed 's/^/    /'; done
fi

# Without the range the same firewall stops srd.
if command -v fi_pingpong >/dev/null; then
	reset_drops
	pp=(fi_pingpong -p srd -e rdm -m tagged -c -S 64 -I 5)
	timeout -k 2 6 "${bed[@]}" exec b "${srdenv[@]}" FI_SRD_PEER_TIMEOUT=2000 \
		"${pp[@]}" -B 47593 >"$tmp/srv.log" 2>&1 &
	s=$!
	sleep 0.5
	timeout -k 2 6 "${bed[@]}" exec a "${srdenv[@]}" FI_SRD_PEER_TIMEOUT=2000 \
		"${pp[@]}" -P 47593 "$B" >"$tmp/cli.log" 2>&1
	c=$?
	kill "$s" 2>/dev/null
	wait "$s" 2>/dev/null
	n=$(drops)
	if [ $c != 0 ] && [ "$n" -gt 0 ]; then
		pass "without the range: fi_pingpong fails (rc=$c), $n datagrams dropped"
		tail -2 "$tmp/cli.log" | sed 's/^/    /'
	else
		failed "without the range: fi_pingpong rc=$c, $n datagrams dropped"
		tail -5 "$tmp/cli.log" | sed 's/^/    /'
	fi
fi

echo "srd_hosts_recipe: $(( $(date +%s) - t0 )) s"
[ $fail = 0 ] && echo "PASS srd_hosts_recipe" || echo "FAIL srd_hosts_recipe"
exit $fail
