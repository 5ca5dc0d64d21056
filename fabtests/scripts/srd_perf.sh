#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_perf.sh [-p "PROV1 PROV2 ...", "srd+key" among them] [-n REPEATS] [-q]
#             [-s SECTIONS]
#             [-O OSU_DIR] [-M "MTU ..."] [-b] [-k]
#
# The performance comparison of srd against the providers a user would
# otherwise pick, measured in one run on loopback, providers interleaved
# and every measurement repeated (-n, default 3) so that machine noise
# shows.  Default providers: srd, net, tcp;ofi_rxm, udp;ofi_rxd.
#
# Sections (-s, comma list; default all that can run):
#   floor  raw UDP on this machine (sft_udp_floor): busy-polled 8 B and
#          4 KiB ping-pong, a stream of 64 KiB datagrams;
#   fabric the same provider-agnostic program (sft_perf) over every
#          provider: ping-pong latency (8 B, 4 KiB, 64 KiB, 1 MiB; msg and
#          tagged), streaming bandwidth (64 KiB, 1 MiB, 16 MiB), 8-byte
#          message rate (window 256), RMA write and read bandwidth;
#   scale  srd alone: latency and message rate with 1, 64 and 1024 peers
#          in the AV (sft_scale), AV insertion of 10^4 and 10^5
#          addresses, memory per peer;
#   mpi    Open MPI (pml cm, mtl ofi) per provider: osu_latency, osu_bw,
#          osu_mbw_mr (needs the OSU micro-benchmarks: -O DIR, default
#          $OSU_DIR or /opt/osu/libexec/osu-micro-benchmarks/mpi);
#   veth   a real Ethernet MTU (needs root): two network namespaces
#          joined by one veth, no rate limit (srd_veth_bed.sh), at each
#          MTU of -M (default "1500 9000"): srd, net and tcp;ofi_rxm
#          (those of -p) streaming 64 KiB, 1 MiB and 16 MiB, 8 B half
#          round trip, 8 B message rate; one iperf3 TCP stream as the
#          kernel's reference (when iperf3 is installed); and for srd
#          and net the CPU time both processes spent per KiB moved in a
#          1 MiB stream (their children's times from /proc: every
#          provider here busy-polls, so it reads about 2 CPUs / rate);
#          and raw UDP with 16-datagram UDP_SEGMENT sends into a
#          UDP_GRO socket (sft_udp_floor -G 16: the kernel's part of
#          srd's data path), as "udp_gso" in the 1 MiB bw row.
#          Sections "veth1500", "veth9000" in the PERF lines.
#
# Prints per section a table of medians (min-max of the repeats in
# brackets) with srd's ratio to each peer, the targets as MET/MISSED,
# and lines for scripts:
#   PERF section=S test=T size=N prov=P median=X min=Y max=Z unit=U
#   RATIO section=S test=T size=N srd/PROV=R
#   TARGET name=... value=... goal=... MET|MISSED
# The pseudo-provider "srd+key" in -p is srd with a job key (a random
# 32-byte FI_SRD_AUTH_KEY_FILE, fi_srd(7) SECURITY): every packet
# carries a MAC; its column and the srd/srd+key ratio are the key's
# cost (in the fabric and veth sections; the MPI section skips it).
# Exit status: 0 unless a run of srd failed (a benchmark reports, it
# does not gate on speed).  -q: fewer iterations.  -k: keep the logs.
# -b: bind the server to the last CPU and the client to the first
# (taskset), for the floor and fabric sections: unbound, the scheduler
# sometimes runs both on one CPU, where the receiver copies data still
# hot in that CPU's cache, and bandwidth figures swing by 2x.
# Everything but the veth section runs on 127.0.0.1 with every provider
# pinned to lo (the veth section pins them to the bed's eth0); each run
# is bounded by timeout(1).  Run it on a quiet machine: it takes about
# 12 minutes (-q: about 6).
set -u

here=$(cd "$(dirname "$0")" && pwd)
provs="srd net tcp;ofi_rxm udp;ofi_rxd"
reps=3
quick=0
keep=0
bind=0
sections=floor,fabric,scale,mpi,veth
veth_mtus="1500 9000"
osu_dir=${OSU_DIR:-/opt/osu/libexec/osu-micro-benchmarks/mpi}

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
usage() { sft_usage; }

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; provs=$2; shift 2 ;;
	-n) [ $# -ge 2 ] || usage; reps=$2; shift 2 ;;
	-s) [ $# -ge 2 ] || usage; sections=$2; shift 2 ;;
	-O) [ $# -ge 2 ] || usage; osu_dir=$2; shift 2 ;;
	-M) [ $# -ge 2 ] || usage; veth_mtus=$2; shift 2 ;;
	-q) quick=1; shift ;;
	-k) keep=1; shift ;;
	-b) bind=1; shift ;;
	*) usage ;;
	esac
done

sft_find_bindir sft_perf sft_scale sft_udp_floor

export FI_SRD_IFACE=lo FI_TCP_IFACE=lo FI_NET_IFACE=lo FI_UDP_IFACE=lo
tmp=$(mktemp -d "${TMPDIR:-/tmp}/srd_perf.XXXXXX") || exit 1
veth_bed="srdperf$$"
vbed() { "$here/srd_veth_bed.sh" -n "$veth_bed" "$@"; }
cleanup() {
	has veth && vbed down >/dev/null 2>&1
	if [ "$keep" = 1 ]; then echo "logs kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# srd+key: srd, with the job key in the environment of both sides
keyfile="$tmp/job.key"
head -c 32 /dev/urandom >"$keyfile" && chmod 600 "$keyfile"
prov_env() {	# prov_env PROV: sets p, the provider sft_perf gets
	p=$1
	unset FI_SRD_AUTH_KEY_FILE
	if [ "$1" = "srd+key" ]; then
		p=srd
		export FI_SRD_AUTH_KEY_FILE=$keyfile
	fi
}

bind_s=(env) bind_c=(env)
if [ "$bind" = 1 ]; then
	bind_s=(taskset -c "$(($(nproc) - 1))") bind_c=(taskset -c 0)
fi

has() { case ",$sections," in *",$1,"*) return 0 ;; esac; return 1; }
res="$tmp/results"	# section test size prov value unit
: >"$res"
srd_failures=0
port=$((30000 + $$ % 20000))
if [ "$quick" = 1 ]; then lat_iters=4000; bw_iters=4000; else
	lat_iters=20000; bw_iters=20000; fi

# run_pair LOG TIMEOUT PROGRAM ARGS...: server and client on 127.0.0.1;
# the client's output in LOG.  Returns 0 only if both sides passed.
run_pair() {
	local log=$1 tmo=$2 prog=$3 spid rc src
	shift 3
	port=$((port + 1))
	"${bind_s[@]}" timeout -k 3 "$tmo" "$bindir/$prog" "$@" -s \
		-P "$port" >"$log.server" 2>&1 &
	spid=$!
	sleep 0.2
	"${bind_c[@]}" timeout -k 3 "$tmo" "$bindir/$prog" "$@" -P "$port" \
		127.0.0.1 >"$log" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	[ "$rc" = 0 ] && [ "$src" = 0 ]
}

# record SECTION TEST PROV UNIT KEY LOG: RESULT lines' KEY value per size
record() {
	local sec=$1 test=$2 prov=$3 unit=$4 key=$5 log=$6
	awk -v sec="$sec" -v test="$test" -v prov="$prov" -v unit="$unit" \
	    -v key="$key" '
	$1 == "RESULT" {
		size = ""; val = ""
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "size") size = kv[2]
			if (kv[1] == key) val = kv[2]
		}
		if (size != "" && val != "")
			printf "%s %s %s %s %s %s\n", sec, test, size, prov, val, unit
	}' "$log" >>"$res"
}

# perf_metric TEST: sets key (the RESULT field) and unit for a test
perf_metric() {
	case "$1" in
	lat*) key=half_rtt_us; unit=us ;;
	rate) key=mmsgs; unit=Mmsg/s ;;
	*) key=mbps; unit=MB/s ;;
	esac
}

# fabric TEST PROV ARGS...: one sft_perf run
fabric_run() {
	local test=$1 prov=$2 key unit log p
	shift 2
	log="$tmp/$test.$(echo "$prov" | tr -c 'a-z0-9\n' _).$rep"
	perf_metric "$test"
	prov_env "$prov"
	if run_pair "$log" 90 sft_perf -p "$p" -t 80 "$@"; then
		record fabric "$test" "$prov" "$unit" "$key" "$log"
	else
		echo "  [$rep] $test over $prov failed: $(grep -h -m1 FAIL \
			"$log" "$log.server" 2>/dev/null | head -n1)"
		[ "$prov" = srd ] && srd_failures=$((srd_failures + 1))
		# what did finish still counts
		record fabric "$test" "$prov" "$unit" "$key" "$log"
	fi
}

floor_run() {
	local log="$tmp/floor.$rep"
	run_pair "$log.lat" 60 sft_udp_floor -o lat -S 8,4096 \
		-I "$lat_iters" && record floor lat floor us half_rtt_us "$log.lat"
	run_pair "$log.bw" 60 sft_udp_floor -o bw -S 65472 -T 2 &&
		record floor bw floor MB/s mbps "$log.bw.server"
}

echo "srd_perf: providers: $provs; $reps repeats; $(nproc) CPUs;" \
     "$([ "$bind" = 1 ] && echo "bound to CPUs;") $(uname -r);" \
     "$(date -u +%FT%TZ)"
for rep in $(seq 1 "$reps"); do
	echo "round $rep of $reps"
	has floor && floor_run
	has fabric || continue
	for prov in $provs; do
		fabric_run lat_msg "$prov" -o lat -S 8,4k,64k,1m -I "$lat_iters"
	done
	for prov in $provs; do
		fabric_run lat_tagged "$prov" -o lat -m tagged -S 8,4k,64k,1m \
			-I "$lat_iters"
	done
	for prov in $provs; do
		fabric_run bw "$prov" -o bw -S 64k,1m,16m -W 64 -I "$bw_iters"
	done
	for prov in $provs; do
		fabric_run rate "$prov" -o bw -S 8 -W 256 -I $((bw_iters * 10))
	done
	for prov in $provs; do
		fabric_run write "$prov" -o write -S 64k,1m -W 64 -I "$bw_iters"
	done
	for prov in $provs; do
		fabric_run read "$prov" -o read -S 64k,1m -W 64 -I "$bw_iters"
	done
done

# ---- scale: srd with many peers ---------------------------------------
# The server's endpoints use 4 paths each, to keep 1024 endpoints within
# the file descriptor limit.
scale_run() {
	local log="$tmp/scale.$rep" n
	if run_pair "$log.av" 60 sft_scale -p srd -o av -S 10000,100000; then
		record scale av_batch srd us/addr batch_us_per_addr "$log.av"
		record scale av_single srd us/addr single_us_per_addr "$log.av"
		record scale av_mem srd KiB/addr kib_per_addr "$log.av"
	else
		echo "  [$rep] sft_scale -o av failed: $(grep -h -m1 FAIL "$log.av")"
		srd_failures=$((srd_failures + 1))
	fi
	for n in 1 64 1024; do
		port=$((port + 1))
		FI_SRD_PATHS=4 timeout -k 3 120 "$bindir/sft_scale" -p srd -o peers \
			-S "$n" -W 256 -I "$lat_iters" -t 110 -s -P "$port" \
			>"$log.$n.server" 2>&1 &
		local spid=$!
		sleep 0.2
		if timeout -k 3 120 "$bindir/sft_scale" -p srd -o peers -S "$n" \
			-W 256 -I "$lat_iters" -t 110 -P "$port" 127.0.0.1 \
			>"$log.$n" 2>&1 && wait "$spid"; then
			record scale peers_lat srd us lat_us "$log.$n"
			record scale peers_rate srd Mmsg/s mmsgs "$log.$n"
			record scale peers_mem_av srd KiB/peer kib_per_peer_av "$log.$n"
			record scale peers_mem_active srd KiB/peer \
				kib_per_peer_active "$log.$n"
		else
			wait "$spid"
			echo "  [$rep] sft_scale with $n peers failed:" \
			     "$(grep -h -m1 FAIL "$log.$n" "$log.$n.server" | head -n1)"
			srd_failures=$((srd_failures + 1))
		fi
	done
}

# ---- mpi: Open MPI's mtl ofi, OSU micro-benchmarks ----------------------
# osu_run PROV PINNED LOG PROGRAM ARGS...
osu_run() {
	local p=$1 pinned=$2 log=$3 prog=$4
	shift 4
	local -a envs=(env) x=()
	[ "$pinned" = 0 ] && envs=(env -u FI_SRD_IFACE -u FI_TCP_IFACE \
		-u FI_NET_IFACE -u FI_UDP_IFACE)
	[ "$pinned" = 1 ] && x=(-x FI_SRD_IFACE -x FI_TCP_IFACE -x FI_NET_IFACE \
		-x FI_UDP_IFACE)
	[ -n "${FI_PROVIDER_PATH:-}" ] && x+=(-x FI_PROVIDER_PATH)
	"${envs[@]}" timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe \
		--bind-to none -np 2 --mca btl_tcp_if_include lo \
		--mca oob_tcp_if_include lo --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include "$p" -x "FI_PROVIDER=$p" "${x[@]}" \
		"$osu_dir/pt2pt/$prog" "$@" >"$log" 2>&1 &&
		awk '$1 ~ /^[0-9]+$/ { n++ } END { exit n ? 0 : 1 }' "$log"
}

# osu_record PROV TEST UNIT COLUMN LOG: OSU's "size value..." rows of
# the sizes the fabric section has too
osu_record() {
	awk -v prov="$1" -v test="$2" -v unit="$3" -v col="$4" \
		'$1 ~ /^(8|4096|65536|1048576)$/ {
			printf "mpi %s %s %s %s %s\n", test, $1, prov, $col, unit }' \
		"$5" >>"$res"
}

declare -A osu_unpinned
mpi_run() {
	local p=$1 log pin
	log="$tmp/osu.$(echo "$p" | tr -c 'a-z0-9\n' _).$rep"
	pin=1
	[ -n "${osu_unpinned[$p]:-}" ] && pin=0
	if ! osu_run "$p" "$pin" "$log.lat" osu_latency -m 8:1048576 \
		-i "$((osu_iters / 5))" -x 100; then
		if [ "$pin" = 1 ] && osu_run "$p" 0 "$log.lat" osu_latency \
			-m 8:1048576 -i "$((osu_iters / 5))" -x 100; then
			osu_unpinned[$p]=1
			pin=0
			echo "  $p: mtl ofi failed pinned to lo; run unpinned" \
			     "(the kernel still carries it over loopback)"
		else
			echo "  [$rep] osu_latency over $p failed"
			[ "$p" = srd ] && srd_failures=$((srd_failures + 1))
			return
		fi
	fi
	osu_record "$p" osu_latency us 2 "$log.lat"
	osu_run "$p" "$pin" "$log.bw" osu_bw -m 65536:1048576 \
		-i "$((osu_iters / 100))" -x 5 &&
		osu_record "$p" osu_bw MB/s 2 "$log.bw"
	osu_run "$p" "$pin" "$log.mr" osu_mbw_mr -m 8:8 -i "$osu_iters" -x 100 &&
		osu_record "$p" osu_mbw_mr Mmsg/s 3 "$log.mr"
}

if has scale; then
	for rep in $(seq 1 "$reps"); do scale_run; done
fi
if has mpi; then
	if ! command -v mpirun >/dev/null || [ ! -x "$osu_dir/pt2pt/osu_latency" ]; then
		echo "mpi: skipped (needs mpirun and the OSU micro-benchmarks" \
		     "in $osu_dir; -O DIR)"
		sections=${sections//mpi/}
	else
		# -i: osu_mbw_mr windows; osu_latency a fifth, osu_bw a hundredth
		[ "$quick" = 1 ] && osu_iters=2000 || osu_iters=5000
		for rep in $(seq 1 "$reps"); do
			echo "mpi round $rep of $reps"
			for prov in $provs; do
				[ "$prov" = "srd+key" ] || mpi_run "$prov"
			done
		done
		# osu_mbw_mr prints messages/s; the table shows millions
		awk '$1 == "mpi" && $2 == "osu_mbw_mr" { $5 = $5 / 1e6 } { print }' \
			"$res" >"$res.tmp" && mv "$res.tmp" "$res"
	fi
fi

# ---- veth: a real MTU between two namespaces ----------------------------
# veth_pair LOG TIMEOUT PROGRAM ARGS...: server in B, client in A, every
# provider pinned to the bed's eth0.  Each side's CPU time (its
# children's user + system ticks, after they exit) goes to LOG.cpu.
veth_pair() {
	local log=$1 tmo=$2 prog=$3 spid rc src
	shift 3
	port=$((port + 1))
	local -a envs=(env FI_SRD_IFACE=eth0 FI_TCP_IFACE=eth0 FI_NET_IFACE=eth0
		FI_UDP_IFACE=eth0)
	(vbed exec b "${envs[@]}" SFT_OOB_ADDR="$(vbed addr b)" \
		"${bind_s[@]}" timeout -k 3 "$tmo" "$bindir/$prog" "$@" -s \
		-P "$port" >"$log.server" 2>&1
	 rc=$?
	 awk '{ print $16 + $17 }' "/proc/$BASHPID/stat" >"$log.cpu.server"
	 exit $rc) &
	spid=$!
	sleep 0.3
	(vbed exec a "${envs[@]}" "${bind_c[@]}" timeout -k 3 "$tmo" \
		"$bindir/$prog" "$@" -P "$port" "$(vbed addr b)" >"$log" 2>&1
	 rc=$?
	 awk '{ print $16 + $17 }' "/proc/$BASHPID/stat" >"$log.cpu"
	 exit $rc)
	rc=$?
	wait "$spid"
	src=$?
	[ "$rc" = 0 ] && [ "$src" = 0 ]
}

# veth_run SECTION TEST PROV ARGS...: one sft_perf run on the bed
veth_run() {
	local sec=$1 test=$2 prov=$3 key unit log p
	shift 3
	log="$tmp/$sec.$test.$(echo "$prov" | tr -c 'a-z0-9\n' _).$rep"
	perf_metric "$test"
	prov_env "$prov"
	if ! veth_pair "$log" 90 sft_perf -p "$p" -t 80 "$@"; then
		echo "  [$rep] $sec $test over $prov failed: $(grep -h -m1 FAIL \
			"$log" "$log.server" 2>/dev/null | head -n1)"
		[ "$prov" = srd ] && srd_failures=$((srd_failures + 1))
	fi
	record "$sec" "$test" "$prov" "$unit" "$key" "$log"
	[ "$test" = cpu ] || return 0
	# CPU ns per KiB: both processes' ticks over the bytes of the run
	# (size x window x windows, from the RESULT line)
	awk -v sec="$sec" -v prov="$prov" -v hz="$(getconf CLK_TCK)" \
	    -v ct="$(cat "$log.cpu" 2>/dev/null)" \
	    -v st="$(cat "$log.cpu.server" 2>/dev/null)" '
	$1 == "RESULT" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		bytes = f["size"] * f["window"] * f["iters"]
		if (bytes > 0 && ct != "" && st != "")
			printf "%s cpu_per_kib %s %s %.1f ns/KiB\n", sec,
				f["size"], prov, (ct + st) / hz * 1e9 / (bytes / 1024)
	}' "$log" >>"$res"
}

# iperf3_run SECTION: one TCP stream B <- A for 3 s (5 with -q off)
iperf3_run() {
	local sec=$1 log="$tmp/$1.iperf3.$rep" secs=5
	[ "$quick" = 1 ] && secs=2
	port=$((port + 1))
	vbed exec b timeout 30 iperf3 -s -1 -p "$port" >"$log.server" 2>&1 &
	local spid=$!
	sleep 0.3
	if vbed exec a timeout 30 iperf3 -c "$(vbed addr b)" -p "$port" \
		-t "$secs" -f k >"$log" 2>&1; then
		awk -v sec="$sec" '/receiver/ {
			for (i = 1; i <= NF; i++) if ($i == "Kbits/sec") v = $(i - 1)
		} END { if (v != "") printf "%s bw 1048576 iperf3 %.1f MB/s\n", sec, v * 1000 / 8 / 1e6 }' \
			"$log" >>"$res"
	else
		echo "  [$rep] iperf3 on the bed failed: $(tail -n1 "$log")"
	fi
	wait "$spid" 2>/dev/null
}

# gso_floor_run SECTION MTU: raw UDP on the bed, 16 MTU-sized datagrams
# per UDP_SEGMENT send into a UDP_GRO socket, each datagram in two
# pieces: the kernel's cost of what srd's wire does with its default 16
# paths and a full window (sft_udp_floor -G), as "udp_gso" in the bw
# table's 1 MiB row
gso_floor_run() {
	local sec=$1 seg=$(($2 - 28)) log="$tmp/$1.udp_gso.$rep"
	if veth_pair "$log" 60 sft_udp_floor -o bw -S "$seg" -G 16 -T 2; then
		awk -v sec="$sec" '$1 == "RESULT" && $2 == "floor" {
			for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			printf "%s bw 1048576 udp_gso %s MB/s\n", sec, f["mbps"] }' \
			"$log.server" >>"$res"
	else
		echo "  [$rep] sft_udp_floor -G on the bed failed:" \
		     "$(grep -h -m1 FAIL "$log" "$log.server" | head -n1)"
	fi
}

veth_provs=
for prov in $provs; do
	case "$prov" in srd|srd+key|net|"tcp;ofi_rxm") veth_provs+="$prov " ;; esac
done
if has veth; then
	if [ "$(id -u)" != 0 ]; then
		echo "veth: skipped (network namespaces need root)"
		sections=${sections//veth/}
	fi
fi
if has veth; then
	have_iperf3=0
	command -v iperf3 >/dev/null && have_iperf3=1
	[ "$have_iperf3" = 1 ] || echo "veth: no iperf3 (apt-get install" \
		"iperf3): no kernel TCP reference"
	for mtu in $veth_mtus; do
		vbed down >/dev/null 2>&1
		if ! vbed up -m "$mtu" >"$tmp/bed.$mtu" 2>&1; then
			echo "veth: bed at MTU $mtu failed: $(tail -n1 "$tmp/bed.$mtu")"
			srd_failures=$((srd_failures + 1))
			continue
		fi
		sec="veth$mtu"
		for rep in $(seq 1 "$reps"); do
			echo "$sec round $rep of $reps"
			for prov in $veth_provs; do
				veth_run "$sec" bw "$prov" -o bw -S 64k,1m,16m -W 64 \
					-I "$bw_iters"
			done
			[ "$have_iperf3" = 1 ] && iperf3_run "$sec"
			gso_floor_run "$sec" "$mtu"
			for prov in $veth_provs; do
				veth_run "$sec" lat "$prov" -o lat -S 8 -I "$lat_iters"
			done
			for prov in $veth_provs; do
				veth_run "$sec" rate "$prov" -o bw -S 8 -W 256 \
					-I $((bw_iters * 10))
			done
			for prov in $veth_provs; do
				case "$prov" in srd|srd+key|net) ;; *) continue ;; esac
				veth_run "$sec" cpu "$prov" -o bw -S 1m -W 64 \
					-I "$bw_iters"
			done
		done
	done
	vbed down >/dev/null 2>&1
fi

# ---- report ---------------------------------------------------------
# Medians per (section, test, size, prov); ratios srd/peer; for latency
# a ratio below 1 is better, for rates above 1.
report() {
	sort -k1,1 -k2,2 -k3,3n -k4,4 "$res" | awk -v provs="$provs" '
	function flush(   n, i, j, t, v, med, lo, hi) {
		if (key == "") return
		n = cnt
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (vals[j] + 0 < vals[i] + 0) { t = vals[i]; vals[i] = vals[j]; vals[j] = t }
		med = (n % 2) ? vals[(n + 1) / 2] : (vals[n / 2] + vals[n / 2 + 1]) / 2
		lo = vals[1]; hi = vals[n]
		printf "PERF section=%s test=%s size=%s prov=%s median=%g min=%g max=%g unit=%s n=%d\n", \
			sec, test, size, prov, med, lo, hi, unit, n
		cnt = 0; delete vals
	}
	{
		k = $1 " " $2 " " $3 " " $4
		if (k != key) { flush(); key = k; sec = $1; test = $2; size = $3; prov = $4; unit = $6 }
		vals[++cnt] = $5
	}
	END { flush() }'
}

report >"$tmp/perf"

# A table per section/test: one row per size, a column per provider
# (median [min-max]), then srd's ratio to each peer.
awk -v provs="$provs" '
BEGIN { np = split(provs, P, " ") }
{
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	t = f["section"] " " f["test"]
	if (!(t in seen)) { seen[t] = 1; order[++nt] = t; unit[t] = f["unit"]; tn[t] = f["test"]; sn[t] = f["section"] }
	if (!((t, f["size"]) in sz)) { sz[t, f["size"]] = 1; sizes[t] = sizes[t] " " f["size"] }
	med[t, f["size"], f["prov"]] = f["median"]
	rng[t, f["size"], f["prov"]] = sprintf("%g-%g", f["min"], f["max"])
	has[t, f["prov"]] = 1
}
END {
	for (o = 1; o <= nt; o++) {
		t = order[o]
		printf "\n== %s (%s; median [min-max] of the repeats)\n", t, unit[t]
		cols = ""
		for (i = 1; i <= np; i++) if ((t, P[i]) in has) cols = cols " " P[i]
		if ((t, "floor") in has) cols = cols " floor"
		if ((t, "iperf3") in has) cols = cols " iperf3"
		if ((t, "udp_gso") in has) cols = cols " udp_gso"
		nc = split(cols, C, " ")
		printf "%-9s", "size"
		for (i = 1; i <= nc; i++) printf " %24s", C[i]
		for (i = 1; i <= nc; i++) if (C[i] != "srd" && C[i] != "floor") printf " %12s", "srd/" C[i]
		printf "\n"
		ns = split(sizes[t], S, " ")
		for (s = 1; s <= ns; s++) {
			printf "%-9s", S[s]
			for (i = 1; i <= nc; i++) {
				v = ((t, S[s], C[i]) in med) ? sprintf("%.4g [%s]", med[t, S[s], C[i]], rng[t, S[s], C[i]]) : "-"
				printf " %24s", v
			}
			for (i = 1; i <= nc; i++) {
				if (C[i] == "srd" || C[i] == "floor") continue
				a = med[t, S[s], "srd"]; b = med[t, S[s], C[i]]
				if (a != "" && b + 0 > 0) {
					printf " %12.2f", a / b
					r = sprintf("%.3f", a / b)
					ratios = ratios sprintf("RATIO section=%s test=%s size=%s srd/%s=%s\n", sn[t], tn[t], S[s], C[i], r)
				} else printf " %12s", "-"
			}
			printf "\n"
		}
	}
	printf "\n%s", ratios
}' "$tmp/perf"
echo
cat "$tmp/perf"

# ---- targets ------------------------------------------------------------
med() {	# med SECTION TEST SIZE PROV
	awk -v s="$1" -v t="$2" -v z="$3" -v p="$4" '
	{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	  if (f["section"] == s && f["test"] == t && f["size"] == z && f["prov"] == p) print f["median"] }' \
		"$tmp/perf" | head -n1
}
target() {	# target NAME VALUE OP GOAL
	local name=$1 v=$2 op=$3 goal=$4 ok
	if [ -z "$v" ]; then
		echo "TARGET name=$name value=none goal=$op$goal NOT-MEASURED"
		return
	fi
	ok=$(awk -v v="$v" -v g="$goal" -v op="$op" 'BEGIN {
		print ((op == "<=" && v <= g) || (op == ">=" && v >= g)) ? "MET" : "MISSED" }')
	printf 'TARGET name=%s value=%.3f goal=%s%s %s\n' "$name" "$v" "$op" "$goal" "$ok"
}
ratio() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a != "" && b + 0 > 0) printf "%.4f", a / b }'; }

echo
if has fabric; then
	s8=$(med fabric lat_msg 8 srd)
	target lat8_vs_floor "$(ratio "$s8" "$(med floor lat 8 floor)")" "<=" 1.15
	target lat8_vs_net "$(ratio "$s8" "$(med fabric lat_msg 8 net)")" "<=" 1.0
	s1m=$(med fabric bw 1048576 srd)
	target bw1m_vs_floor "$(ratio "$s1m" "$(med floor bw 65472 floor)")" ">=" 0.85
	target bw1m_vs_net "$(ratio "$s1m" "$(med fabric bw 1048576 net)")" ">=" 1.0
	target bw1m_vs_rxd "$(ratio "$s1m" "$(med fabric bw 1048576 'udp;ofi_rxd')")" ">=" 10
	target rate8_vs_net "$(ratio "$(med fabric rate 8 srd)" "$(med fabric rate 8 net)")" ">=" 1.2
fi
if has mpi && [ -s "$tmp/perf" ]; then
	target osu_lat8_vs_net "$(ratio "$(med mpi osu_latency 8 srd)" "$(med mpi osu_latency 8 net)")" "<=" 1.0
	target osu_bw1m_vs_net "$(ratio "$(med mpi osu_bw 1048576 srd)" "$(med mpi osu_bw 1048576 net)")" ">=" 1.0
	target osu_mbwmr8_vs_net "$(ratio "$(med mpi osu_mbw_mr 8 srd)" "$(med mpi osu_mbw_mr 8 net)")" ">=" 1.0
fi
for mtu in $veth_mtus; do
	has veth || break
	sec="veth$mtu"
	[ -n "$(med "$sec" bw 1048576 srd)" ] || continue
	for z in 65536 1048576; do
		target "${sec}_bw${z}_vs_net" "$(ratio "$(med "$sec" bw "$z" srd)" \
			"$(med "$sec" bw "$z" net)")" ">=" 1.0
		target "${sec}_bw${z}_vs_rxm" "$(ratio "$(med "$sec" bw "$z" srd)" \
			"$(med "$sec" bw "$z" 'tcp;ofi_rxm')")" ">=" 1.0
	done
	target "${sec}_bw1m_vs_iperf3" "$(ratio "$(med "$sec" bw 1048576 srd)" \
		"$(med "$sec" bw 1048576 iperf3)")" ">=" 0.8
	target "${sec}_lat8_vs_net" "$(ratio "$(med "$sec" lat 8 srd)" \
		"$(med "$sec" lat 8 net)")" "<=" 1.0
done
[ "$srd_failures" = 0 ] || { echo "srd runs failed: $srd_failures"; exit 1; }
exit 0
