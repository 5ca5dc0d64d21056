#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sft_ecmp.sh [-p PROVIDER] [-o CASES] [-t SECONDS] [-v]
#
# Runs sft programs across the ECMP test bed of srd_ecmp_bed.sh (hosts
# A, A2.. -> R1 ==K links== R2 -> B; servers and receivers in B, clients
# and senders in the A-side hosts).  Every case builds its own bed (name
# "sftecmp<pid>") and the bed is always removed on exit.  Cases (-o, comma
# separated, default all):
#
#   faults     the bed's faultcmds, which srd_fault_bench.sh runs at its
#              faults: the two commands of each kind, run with eval, do
#              what they name in both routers (l2 black-holed, l3 down,
#              l1 at 20 Mbit/s) and "none" changes nothing; the bed's
#              undo commands (unblackhole, linkup, rate) restore each;
#              faultreap stops the routers' tools that took them, and
#              fails when one had exited; a bad kind, link, rate or
#              argument count is refused and starts no tool.
#   integrity  under LOSS1 and LOSS2 % (default 1, 5) loss on every link
#              (every IPv4 packet, TCP too): sft_pingpong of one
#              INTEG_PP_SIZE (64m) message each way, and sft_bw of
#              100,000 64-byte tagged messages (window 1000 x 100);
#              the programs check every byte.
#   spray      K=4, lossless, every link limited to SPRAY_RATE (100) Mbit/s,
#              FI_SRD_PATHS=SPRAY_PATHS (64): sft_bw of SPRAY_MB (96) MiB
#              in 1 MiB messages.  From the routers' counters: each link's
#              share of the A->B bytes, and from their flow records the
#              UDP source ports (paths) per link.  Passes if the client
#              used >= SPRAY_PATHS source ports and every link carried
#              >= SPRAY_MIN_SHARE (15) % of the bytes.  The hash maps ports
#              to links unevenly (with 32 ports some link gets <= 4 of
#              them about one run in five, and the weighting did not
#              always make up 12.5 % -> 15 %; with 64, <= 8 about one run
#              in twenty); the provider must even the bytes out by
#              weighting its paths (by RTT: a link with more ports
#              queues).  How far bytes moved from the port shares is
#              printed.  SPRAY_STRICT=0 only prints the 15 % check.
#   failover   K=4, lossless, every link limited to FAIL_RATE (200)
#              Mbit/s: sft_bw of FAIL_MB (256) MiB without fault, then
#              again, black-holing (silent drop, routes unchanged) the
#              link that carried most bytes over the transfer's first
#              FAIL_AFTER (1) s, with the bed's faultcmds (a line to a
#              tool in each router).  Must complete; the black hole must
#              have dropped packets of the transfer (it fails if the
#              transfer was over before it); prints both times.  (The
#              rate keeps the transfer going for seconds whatever the
#              CPU: unlimited, 384 MiB crossed at ~580 MB/s before the
#              bed's counters under load saw 32 MB cross.)
#   incast     K=4, every host link limited to INCAST_RATE (200) Mbit/s, 4
#              A-side hosts: 4 sft_incast senders (INCAST_MSGS x
#              INCAST_SIZE, 256 x 64k) into one receiver in B.  All must
#              complete; with srd, the provider's "transport:" line at
#              endpoint close (FI_LOG_LEVEL=info) gives packets sent and
#              retransmitted per sender: retransmits must stay below
#              INCAST_MAX_RETX_PCT (50) % of the packets sent.
#   deadpeer   FI_SRD_PEER_TIMEOUT=PEER_TIMEOUT_MS (2000): an sft_bw
#              client streams to a server that is killed (-9) once 20 MB
#              have crossed R1; the client must exit non-zero through the
#              provider (an error completion, not the OOB socket) within
#              the peer timeout plus DEAD_SLACK (3) s.
#   restart    as deadpeer, with sft_incast whose receiver binds the
#              provider to a fixed address and port (-A 10.88.2.2:7471):
#              after the kill a new receiver starts on the same provider
#              address and OOB port and a new sender streams to it.  The
#              new pair must pass (the old sender's packets must not reach
#              the new receiver as its own) and the old sender must fail
#              within the peer timeout plus DEAD_SLACK.
#
# Each program runs under timeout(1); its own watchdog (-t) is set a bit
# shorter.  FI_SRD_IFACE, FI_TCP_IFACE and FI_NET_IFACE are set to the
# hosts' interface (eth0); FI_PROVIDER_PATH and other FI_* settings pass
# through.  Binaries: $SFT_BINDIR, else as sft_loss.sh finds them;
# sft_incast is built into a temporary directory with gcc when it is not
# there.  -t bounds the whole run (default 280 s); a case that would not
# fit in what is left fails.  -v prints the programs' output of passing
# runs too (failing runs always print it).
#
# Prints "PASS case ..." / "FAIL case ..." / "SKIP case ..." with figures
# and the time each case took, then a summary.  Exit 0 if all ran cases
# passed, 1 if any failed, 77 if not root or tools are missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
prov=srd
cases=faults,integrity,spray,failover,incast,deadpeer,restart
total=280
verbose=0

usage() {
	echo "usage: $0 [-p PROVIDER] [-o CASES] [-t SECONDS] [-v]" >&2
	echo "cases: faults,integrity,spray,failover,incast,deadpeer,restart" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || usage; prov=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || usage; cases=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; total=$2; shift 2 ;;
	-v) verbose=1; shift ;;
	*) usage ;;
	esac
done
case "$total" in ''|*[!0-9]*) usage ;; esac
for c in ${cases//,/ }; do
	case "$c" in
	faults|integrity|spray|failover|incast|deadpeer|restart) ;;
	*) echo "unknown case '$c'" >&2; usage ;;
	esac
done

# tunables (environment)
LOSS1=${LOSS1:-1}
LOSS2=${LOSS2:-5}
INTEG_PP_SIZE=${INTEG_PP_SIZE:-64m}
SPRAY_PATHS=${SPRAY_PATHS:-64}
SPRAY_MB=${SPRAY_MB:-96}
SPRAY_RATE=${SPRAY_RATE:-100}
SPRAY_MIN_SHARE=${SPRAY_MIN_SHARE:-15}
SPRAY_TOL=${SPRAY_TOL:-100}
SPRAY_STRICT=${SPRAY_STRICT:-1}
FAIL_MB=${FAIL_MB:-256}
FAIL_RATE=${FAIL_RATE:-200}
FAIL_AFTER=${FAIL_AFTER:-1}
INCAST_RATE=${INCAST_RATE:-200}
INCAST_MSGS=${INCAST_MSGS:-256}
INCAST_SIZE=${INCAST_SIZE:-64k}
INCAST_MAX_RETX_PCT=${INCAST_MAX_RETX_PCT:-50}
PEER_TIMEOUT_MS=${PEER_TIMEOUT_MS:-2000}
DEAD_SLACK=${DEAD_SLACK:-3}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: sft_ecmp.sh needs root (network namespaces, nftables, tc)"
	exit 77
fi
for tool in ip nft tc timeout awk; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done

bed="$here/srd_ecmp_bed.sh"
[ -x "$bed" ] || { echo "$bed not found" >&2; exit 1; }

# shellcheck source=sft_lib.sh
. "$here/sft_lib.sh"
sft_find_bindir sft_bw sft_pingpong

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sft_ecmp.XXXXXX") || exit 1
name="sftecmp$$"

cleanup() {
	local p j
	trap - EXIT INT TERM
	# our background jobs still running (timeout(1) and programs); what
	# runs in the bed's namespaces goes with "down"
	j=$(jobs -p)
	for p in $j; do
		kill -KILL "$p" 2>/dev/null
	done
	# shellcheck disable=SC2086 # a list of pids
	[ -n "$j" ] && { wait $j; } 2>/dev/null	# no "Killed" notices
	"$bed" -n "$name" down >/dev/null 2>&1 ||
		echo "warning: could not remove bed $name" >&2
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

incast=$bindir/sft_incast
if [ ! -x "$incast" ]; then
	incast=
	src="$here/../src"
	if command -v gcc >/dev/null && [ -f "$src/sft_incast.c" ]; then
		gcc -Wall -Wextra -O2 -pthread -I"$src" -o "$tmp/sft_incast" \
			"$src/sft_incast.c" "$src/sft_common.c" "$src/sft_cq.c" \
			-lfabric >"$tmp/gcc.log" 2>&1 && incast=$tmp/sft_incast
	fi
fi

export FI_SRD_IFACE=eth0 FI_TCP_IFACE=eth0 FI_NET_IFACE=eth0
is_srd=0
case "$prov" in srd|srd\;*) is_srd=1 ;; esac
if [ "$is_srd" = 1 ]; then
	export FI_LOG_LEVEL=${FI_LOG_LEVEL:-info}	# for the "transport:" lines
fi

start=$SECONDS
npass=0
nfail=0
nskip=0
port=20100
B_ADDR=10.88.2.2

left() { echo $((total - (SECONDS - start))); }
now() { echo "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

bed_up() {
	"$bed" -n "$name" down >/dev/null 2>&1
	"$bed" -n "$name" up "$@" >"$tmp/bed.log" 2>&1 || {
		sed 's/^/    /' "$tmp/bed.log"
		return 1
	}
}

# transport lines of the provider in FILE...: "tx retx_timeout retx_fast"
transport() {
	sed -n 's/.*transport: tx \([0-9]*\) pkts [0-9]* bytes, retx \([0-9]*\) timeout \([0-9]*\) fast.*/\1 \2 \3/p' "$@"
}

# retx_summary FILE...: "tx N pkts, retx T+F (P%)" over all lines
retx_summary() {
	transport "$@" | awk '{ tx += $1; rt += $2; rf += $3; n++ }
		END { if (!n) { print "n/a"; exit }
		      printf "tx %d pkts, retx %d timeout + %d fast (%.1f%%)",
			  tx, rt, rf, tx ? 100 * (rt + rf) / tx : 0 }'
}

# libfabric's log without info lines and the usual fi_getinfo noise
errlog() {
	grep -v -e '<info>' -e 'returned -61 (No data available)' \
		-e 'OFI_MRAIL_ADDR_STRC' "$1"
}

show() {	# TAG: print the outputs of run TAG
	local f
	for f in "$tmp/$1".*; do
		[ -f "$f" ] || continue
		case "$f" in *.err) errlog "$f" | grep -q . || continue ;; esac
		echo "    --- ${f##*/}"
		if [ "${f%.err}" != "$f" ]; then
			errlog "$f" | tail -n 20 | sed 's/^/    /'
		else
			tail -n 30 "$f" | sed 's/^/    /'
		fi
	done
}

# wait_procs GRACE PID...: wait for all; once one has exited non-zero,
# give the others GRACE s and then TERM them.  Sets rcs[PID].
declare -A rcs
wait_procs() {
	local grace=$1 p t=0 bad=0 alive
	shift
	for p in "$@"; do unset "rcs[$p]"; done
	while :; do
		alive=0
		for p in "$@"; do
			[ -n "${rcs[$p]:-}" ] && continue
			if kill -0 "$p" 2>/dev/null; then
				alive=1
				continue
			fi
			wait "$p"
			rcs[$p]=$?
			[ "${rcs[$p]}" != 0 ] && bad=1
		done
		[ "$alive" = 0 ] && return
		if [ "$bad" = 1 ]; then
			t=$((t + 1))
			if [ "$t" -gt $((grace * 10)) ]; then
				for p in "$@"; do
					[ -z "${rcs[$p]:-}" ] && kill -TERM "$p" 2>/dev/null
				done
			fi
		fi
		sleep 0.1
	done
}

# pair TAG TMO PROG ARGS...: server in B, client in A; sets srv_rc cli_rc
pair() {
	local tag=$1 tmo=$2 s c
	shift 2
	port=$((port + 1))
	timeout -k 5 "$tmo" "$bed" -n "$name" exec B "$@" -s -P "$port" \
		-t $((tmo - 3)) >"$tmp/$tag.srv" 2>"$tmp/$tag.srv.err" &
	s=$!
	timeout -k 5 "$tmo" "$bed" -n "$name" exec A "$@" -P "$port" \
		-t $((tmo - 3)) "$B_ADDR" >"$tmp/$tag.cli" 2>"$tmp/$tag.cli.err" &
	c=$!
	wait_procs 5 "$s" "$c"
	srv_rc=${rcs[$s]}
	cli_rc=${rcs[$c]}
}

# counters: "l1 r1_tx r2_tx r1_pkts r2_pkts loss bh" per link
counters() { "$bed" -n "$name" counters | grep -v '^#'; }

# r1_tx: "lI BYTES" for each link, the bytes R1 sent onto it, from one
# "ip -s -o link" (counters runs 16 processes for 4 links, 1-3 s on a
# machine that two busy-polling ends keep loaded)
r1_tx() {
	ip -n "$name-r1" -s -o link show | awk '{
		n = $2; sub(/[@:].*/, "", n)
		if (n !~ /^l[0-9]+$/ || !(i = index($0, "TX:"))) next
		r = substr($0, i); j = index(r, "\\")
		split(substr(r, j + 1), f, " "); print n, f[1] }'
}

# a2b_bytes: what R1 has sent onto all the links
a2b_bytes() { r1_tx | awk '{ s += $2 } END { print s + 0 }'; }

# wait_flowing MB SECONDS PID: until R1 has sent MB more MB towards B
# (the transfer runs); fails if PID ends or after SECONDS
wait_flowing() {
	local b0 i
	b0=$(a2b_bytes)
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$3" 2>/dev/null || return 1
		[ $(( $(a2b_bytes) - b0 )) -ge $(($1 * 1000000)) ] && return 0
		sleep 0.1
	done
	return 1
}

# case bookkeeping
result() {	# PASS|FAIL|SKIP CASE TEXT
	echo "$1 $2 $3"
	case "$1" in
	PASS) npass=$((npass + 1)) ;;
	FAIL) nfail=$((nfail + 1)) ;;
	SKIP) nskip=$((nskip + 1)) ;;
	esac
}

need_time() {	# CASE SECONDS: enough time left?
	if [ "$(left)" -lt "$2" ]; then
		result FAIL "$1" "(not started: $(left) s left of ${total} s, needs $2)"
		return 1
	fi
}

mbs_of() {	# FILE: the MB/s column (as the header names it) of the last
		# figure line of sft_bw / sft_pingpong
	awk '$1 == "bytes" { for (i = 1; i <= NF; i++) if ($i == "MB/s") c = i }
	     c && $1 ~ /^[0-9]+$/ && NF >= c { v = $c }
	     END { print (v == "" ? "?" : v) }' "$1"
}

# ---------------------------------------------------------------------------
# the routers' view of the links a fault touches: state, qdisc and the
# black-holed set, both routers
routers_state() {
	local r
	for r in r1 r2; do
		ip -n "$name-$r" -br link show | awk '$1 ~ /^l[0-9]+@/ { print $1, $2 }'
		tc -n "$name-$r" qdisc show | grep ' dev l[0-9]' | sed 's/qdisc [a-z_]* [0-9a-f]*: //'
		ip netns exec "$name-$r" nft list ruleset |
			awk '/set blackholed/ { f = 1 } f && /elements/ { print; exit }
			     f && /}/ { exit }'
	done
}

case_faults() {
	local t0 why="" c r rc n before pid st
	local -a cmds
	need_time faults 30 || return
	t0=$(now)
	bed_up -k 4 -r 200 || { result FAIL faults "(bed up failed)"; return; }
	# run_cmds KIND ARGS...: eval the commands faultcmds prints; their
	# count in n
	run_cmds() {
		mapfile -t cmds < <("$bed" -n "$name" faultcmds "$@")
		n=${#cmds[@]}
		for c in "${cmds[@]}"; do eval "$c" >/dev/null || why+=" '$c' failed;"; done
	}
	# settled CHECK...: whether CHECK holds within 2 s (the routers'
	# tools apply the lines they are handed as they read them)
	settled() {
		for _ in $(seq 1 40); do
			"$@" && return 0
			sleep 0.05
		done
		return 1
	}
	reap() {	# reap KIND: faultreap after KIND's commands
		"$bed" -n "$name" faultreap 2>/dev/null ||
			why+=" faultreap after $1 failed;"
	}
	# shellcheck disable=SC2317 # the checks below are run by settled
	blackholed() {
		ip netns exec "$name-$1" nft list ruleset | grep -q 'elements = { "l2" }'
	}
	# set down on each side, not only without carrier from the other
	# shellcheck disable=SC2317
	set_down() { ! ip -n "$name-$1" link show l3 | grep -q '[<,]UP[,>]'; }
	# shellcheck disable=SC2317
	at_20() { tc -n "$name-$1" qdisc show dev l1 | grep -q 'rate 20Mbit'; }
	before=$(routers_state)
	run_cmds none 1
	[ "$n" = 2 ] || why+=" none: $n commands;"
	sleep 0.2
	[ "$(routers_state)" = "$before" ] || why+=" none changed the routers;"
	reap none
	run_cmds blackhole 2
	[ "$n" = 2 ] || why+=" blackhole: $n commands;"
	for r in r1 r2; do
		settled blackholed "$r" || why+=" l2 not black-holed in $r;"
	done
	reap blackhole
	"$bed" -n "$name" unblackhole 2 >/dev/null || why+=" unblackhole failed;"
	run_cmds linkdown 3
	[ "$n" = 2 ] || why+=" linkdown: $n commands;"
	for r in r1 r2; do
		settled set_down "$r" || why+=" l3 not set down in $r;"
	done
	reap linkdown
	"$bed" -n "$name" linkup 3 >/dev/null || why+=" linkup failed;"
	run_cmds rate 1 20
	[ "$n" = 2 ] || why+=" rate: $n commands;"
	for r in r1 r2; do
		settled at_20 "$r" || why+=" l1 not at 20 Mbit/s in $r;"
	done
	reap rate
	"$bed" -n "$name" rate 200 >/dev/null || why+=" rate 200 failed;"
	[ "$(routers_state)" = "$before" ] || why+=" the undo commands left the routers changed;"
	[ -z "$(ip netns pids "$name-r1"; ip netns pids "$name-r2")" ] ||
		why+=" faultreap left a process in the routers;"
	# a tool that is gone by the reaping (as when its command failed)
	# is reported
	run_cmds none 1
	if [ "$n" = 2 ]; then
		pid=$(cat "/run/srd_bed/$name/$name-r1.pid")
		kill "$pid"
		# gone, or a zombie that init has not reaped yet
		for _ in $(seq 1 100); do
			read -r _ _ st _ <"/proc/$pid/stat" 2>/dev/null || break
			[ "$st" = Z ] && break
			sleep 0.02
		done
	fi
	"$bed" -n "$name" faultreap 2>/dev/null &&
		why+=" faultreap did not fail with R1's tool gone;"
	for c in "bogus 1:2" "blackhole 99:1" "rate 1 0:1" "rate 1:1" "none 1 5:2" "linkdown:2"; do
		# shellcheck disable=SC2086 # the arguments split on purpose
		"$bed" -n "$name" faultcmds ${c%:*} >"$tmp/faults.out" 2>&1
		rc=$?
		[ "$rc" = "${c#*:}" ] ||
			why+=" faultcmds ${c%:*}: exit $rc, not ${c#*:};"
		grep -q '^printf' "$tmp/faults.out" &&
			why+=" faultcmds ${c%:*} printed commands;"
		[ -z "$(ip netns pids "$name-r1"; ip netns pids "$name-r2")" ] ||
			why+=" faultcmds ${c%:*} started a tool;"
	done
	if [ -z "$why" ]; then
		result PASS faults "(blackhole, linkdown, rate and none, both routers, undone; their tools reaped, a dead one reported; bad arguments refused; $(since "$t0") s)"
	else
		why=${why# }
		result FAIL faults "(${why%;})"
	fi
}

case_integrity() {
	local t0 loss ok=1 d0 d1 tmo=90 pp bw
	need_time integrity 150 || return
	t0=$(now)
	for loss in "$LOSS1" "$LOSS2"; do
		bed_up -k 4 -l "$loss" -L all ||
			{ result FAIL integrity "(bed up failed)"; return; }
		d0=$(counters | awk '{ s += $6 } END { print s + 0 }')
		pair "int$loss.pp" "$tmo" "$bindir/sft_pingpong" -p "$prov" \
			-S "$INTEG_PP_SIZE" -I 1
		pp="pingpong ${INTEG_PP_SIZE}: srv=$srv_rc cli=$cli_rc"
		if [ "$srv_rc" = 0 ] && [ "$cli_rc" = 0 ]; then
			pp+=" $(mbs_of "$tmp/int$loss.pp.cli") MB/s"
		else
			ok=0
			echo "  integrity ${loss}%: sft_pingpong failed"
			show "int$loss.pp"
		fi
		[ "$is_srd" = 1 ] && pp+=" [client $(retx_summary "$tmp/int$loss.pp.cli.err")]"
		pair "int$loss.bw" "$tmo" "$bindir/sft_bw" -p "$prov" -m tagged \
			-S 64 -W 1000 -I 100
		bw="bw 10^5 x 64 B tagged: srv=$srv_rc cli=$cli_rc"
		if [ "$srv_rc" = 0 ] && [ "$cli_rc" = 0 ]; then
			bw+=" $(mbs_of "$tmp/int$loss.bw.cli") MB/s"
		else
			ok=0
			echo "  integrity ${loss}%: sft_bw failed"
			show "int$loss.bw"
		fi
		[ "$is_srd" = 1 ] && bw+=" [client $(retx_summary "$tmp/int$loss.bw.cli.err")]"
		d1=$(counters | awk '{ s += $6 } END { print s + 0 }')
		echo "  loss ${loss}%: $pp; $bw; bed dropped $((d1 - d0)) packets"
		[ "$verbose" = 1 ] && { show "int$loss.pp"; show "int$loss.bw"; }
	done
	if [ "$ok" = 1 ]; then
		result PASS integrity "(loss $LOSS1 % and $LOSS2 %, $(since "$t0") s)"
	else
		result FAIL integrity "($(since "$t0") s)"
	fi
}

case_spray() {
	local t0 iters before after flows ok=1 why="" tol_bad=0 min strict_bad=0
	need_time spray 90 || return
	t0=$(now)
	bed_up -k 4 -r "$SPRAY_RATE" || { result FAIL spray "(bed up failed)"; return; }
	iters=$(( (SPRAY_MB + 15) / 16 ))
	"$bed" -n "$name" flushflows
	before=$(counters)
	export FI_SRD_PATHS=$SPRAY_PATHS
	pair spray 80 "$bindir/sft_bw" -p "$prov" \
		-S 1m -W 16 -I "$iters"
	unset FI_SRD_PATHS
	after=$(counters)
	"$bed" -n "$name" flows >"$tmp/spray.flows"
	if [ "$srv_rc" != 0 ] || [ "$cli_rc" != 0 ]; then
		show spray
		result FAIL spray "(sft_bw: server rc $srv_rc, client rc $cli_rc; $(since "$t0") s)"
		return
	fi
	# per link: bytes R1 sent (A->B), A->B flows of A's address
	join <(echo "$before" | awk '{print $1, $2, $3}' | sort) \
	     <(echo "$after" | awk '{print $1, $2, $3}' | sort) |
		awk '{ print $1, $4 - $2, $5 - $3 }' | sort -V >"$tmp/spray.bytes"
	awk '$1 == "r1" && $3 ~ /^10\.88\.1\.2:/ && $4 ~ /^10\.88\.2\.2:/ { n[$2]++ }
	     END { for (l in n) print l, n[l] }' "$tmp/spray.flows" |
		sort -V >"$tmp/spray.paths"
	flows=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/spray.paths")
	awk -v tol="$SPRAY_TOL" -v minshare="$SPRAY_MIN_SHARE" -v flows="$flows" \
	    -v minfile="$tmp/spray.min" '
		FILENAME == ARGV[1] { p[$1] = $2; next }
		{ l[++n] = $1; b[$1] = $2; r[$1] = $3; tot += $2; rtot += $3 }
		END {
			min = 100
			for (i = 1; i <= n; i++) {
				k = l[i]; s = tot ? 100 * b[k] / tot : 0
				if (s < min) min = s
				ps = flows ? 100 * p[k] / flows : 0
				d = s - ps; if (d < 0) d = -d
				printf "  %s: %6.1f MB A->B = %5.1f %%  (%d of %d paths = %5.1f %%)  B->A %.1f MB%s%s\n",
				    k, b[k] / 1e6, s, p[k] + 0, flows, ps, r[k] / 1e6,
				    (d > tol ? "  [off by more than " tol " points]" : "  [" (s >= ps ? "+" : "-") sprintf("%.1f", d) " points]"),
				    (s < minshare ? "  [below " minshare " %]" : "")
			}
			printf "%.1f\n", min > minfile
		}' "$tmp/spray.paths" "$tmp/spray.bytes" | tee "$tmp/spray.table"
	echo "  sft_bw: $(mbs_of "$tmp/spray.cli") MB/s; client used $flows UDP source ports towards B (FI_SRD_PATHS=$SPRAY_PATHS)"
	[ "$is_srd" = 1 ] && echo "  client $(retx_summary "$tmp/spray.cli.err")"
	[ "$verbose" = 1 ] && show spray
	min=$(cat "$tmp/spray.min")
	if [ "$flows" = 0 ] && [ "$is_srd" = 0 ]; then
		result SKIP spray "($prov sent no UDP: nothing to spray; $(since "$t0") s)"
		return
	fi
	if [ "$flows" -lt "$SPRAY_PATHS" ]; then
		ok=0; why+=" only $flows source ports used;"
	fi
	if [ "$(wc -l <"$tmp/spray.paths")" -lt "$(wc -l <"$tmp/spray.bytes")" ]; then
		ok=0; why+=" a link carried no path;"
	fi
	grep -q 'off by more' "$tmp/spray.table" && { tol_bad=1; ok=0; why+=" byte shares do not follow path shares;"; }
	grep -q 'below' "$tmp/spray.table" && strict_bad=1
	if [ "$strict_bad" = 1 ] && [ "$SPRAY_STRICT" = 1 ]; then
		ok=0; why+=" a link below $SPRAY_MIN_SHARE %;"
	fi
	if [ "$ok" = 1 ]; then
		result PASS spray "(min link share $min %$( [ "$strict_bad" = 1 ] && echo ", below $SPRAY_MIN_SHARE % by the hash of the ports, not checked (SPRAY_STRICT=1)"); $(since "$t0") s)"
	else
		result FAIL spray "(${why% ;} min link share $min %; $(since "$t0") s)"
	fi
	: "$tol_bad"
}

# bw_timed TAG MB [FAULT]: sft_bw of MB MiB; FAULT=1 blackholes the
# link that carried most once FAIL_AT MB have crossed R1.  Sets srv_rc
# cli_rc secs bh_link bh_at
bw_timed() {
	local tag=$1 mb=$2 fault=${3:-0} s c t0 iters
	iters=$(( (mb + 15) / 16 ))
	port=$((port + 1))
	bh_link=
	timeout -k 5 90 "$bed" -n "$name" exec B "$bindir/sft_bw" -p "$prov" \
		-S 1m -W 16 -I "$iters" -s -P "$port" -t 85 \
		>"$tmp/$tag.srv" 2>"$tmp/$tag.srv.err" &
	s=$!
	t0=$(now)
	timeout -k 5 90 "$bed" -n "$name" exec A "$bindir/sft_bw" -p "$prov" \
		-S 1m -W 16 -I "$iters" -P "$port" -t 85 "$B_ADDR" \
		>"$tmp/$tag.cli" 2>"$tmp/$tag.cli.err" &
	c=$!
	bh_live=
	if [ "$fault" = 1 ]; then
		local b0 cmd
		local -a cmds
		b0=$(r1_tx)
		sleep "$FAIL_AFTER"
		bh_link=$(sft_busiest_link <(echo "$b0") <(r1_tx))
		bh_link=${bh_link:-1}
		mapfile -t cmds < <("$bed" -n "$name" faultcmds blackhole "$bh_link")
		# was the client still sending when the fault came?
		kill -0 "$c" 2>/dev/null && bh_live=1
		bh_at=$(since "$t0")
		for cmd in "${cmds[@]}"; do
			eval "$cmd" >/dev/null
		done
	fi
	wait_procs 5 "$s" "$c"
	secs=$(since "$t0")
	srv_rc=${rcs[$s]}
	cli_rc=${rcs[$c]}
	# the black hole's tools (a failed one shows in the drops)
	if [ "$fault" = 1 ]; then
		"$bed" -n "$name" faultreap
	fi
}

case_failover() {
	local t0 base bsecs drops
	need_time failover 120 || return
	t0=$(now)
	bed_up -k 4 -r "$FAIL_RATE" ||
		{ result FAIL failover "(bed up failed)"; return; }
	bw_timed fo.base "$FAIL_MB"
	if [ "$srv_rc" != 0 ] || [ "$cli_rc" != 0 ]; then
		show fo.base
		result FAIL failover "(no-fault run failed: server rc $srv_rc, client rc $cli_rc)"
		return
	fi
	bsecs=$secs
	base=$(mbs_of "$tmp/fo.base.cli")
	bw_timed fo.fault "$FAIL_MB" 1
	drops=$(counters | awk -v l="l$bh_link" '$1 == l { print $7 }')
	echo "  no fault: $bsecs s ($base MB/s); l$bh_link blackholed after $bh_at s: $secs s ($(mbs_of "$tmp/fo.fault.cli") MB/s), ${drops:-0} packets blackholed"
	[ "$is_srd" = 1 ] && echo "  client no fault: $(retx_summary "$tmp/fo.base.cli.err"); with fault: $(retx_summary "$tmp/fo.fault.cli.err")"
	[ "$verbose" = 1 ] && show fo.fault
	if [ "$srv_rc" != 0 ] || [ "$cli_rc" != 0 ]; then
		show fo.fault
		result FAIL failover "(server rc $srv_rc, client rc $cli_rc after $secs s; $(since "$t0") s)"
	elif [ -z "$bh_live" ]; then
		result FAIL failover "(the transfer was over before the black hole at $bh_at s: raise FAIL_MB or lower FAIL_RATE)"
	elif [ "${drops:-0}" = 0 ]; then
		result FAIL failover "(the black hole on l$bh_link at $bh_at s dropped nothing)"
	else
		result PASS failover "(${FAIL_MB} MiB at ${FAIL_RATE} Mbit/s a link: $bsecs s without fault, $secs s with l$bh_link blackholed after $bh_at s; $(since "$t0") s)"
	fi
}

case_incast() {
	local t0 j r s ok=1 host retx pct bad=0 tx rt rf
	local -a snd
	need_time incast 100 || return
	[ -n "$incast" ] || { result SKIP incast "(sft_incast not built)"; return; }
	t0=$(now)
	bed_up -k 4 -a 4 -R "$INCAST_RATE" ||
		{ result FAIL incast "(bed up failed)"; return; }
	port=$((port + 1))
	timeout -k 5 90 "$bed" -n "$name" exec B "$incast" -p "$prov" -s -N 4 \
		-m tagged -S "$INCAST_SIZE" -I "$INCAST_MSGS" -P "$port" -t 85 \
		>"$tmp/incast.rcv" 2>"$tmp/incast.rcv.err" &
	r=$!
	for j in 1 2 3 4; do
		host=A$j
		[ "$j" = 1 ] && host=A
		timeout -k 5 90 "$bed" -n "$name" exec "$host" "$incast" -p "$prov" \
			-m tagged -S "$INCAST_SIZE" -I "$INCAST_MSGS" -P "$port" \
			-t 85 "$B_ADDR" >"$tmp/incast.snd$j" 2>"$tmp/incast.snd$j.err" &
		snd+=("$!")
	done
	wait_procs 5 "$r" "${snd[@]}"
	[ "${rcs[$r]}" = 0 ] || ok=0
	for s in "${snd[@]}"; do [ "${rcs[$s]}" = 0 ] || ok=0; done
	grep -v '^PASS' "$tmp/incast.rcv" | sed 's/^/  /'
	if [ "$is_srd" = 1 ]; then
		for j in 1 2 3 4; do
			read -r tx rt rf < <(transport "$tmp/incast.snd$j.err")
			if [ -z "${tx:-}" ]; then
				echo "  sender A$j: no transport line"
				continue
			fi
			pct=$(awk -v t="$tx" -v r=$((rt + rf)) 'BEGIN { printf "%.1f", t ? 100 * r / t : 0 }')
			echo "  sender A$j: tx $tx pkts, retx $rt timeout + $rf fast = $pct %"
			awk -v p="$pct" -v m="$INCAST_MAX_RETX_PCT" 'BEGIN { exit !(p >= m) }' && bad=1
		done
		retx=$(retx_summary "$tmp"/incast.snd?.err)
		echo "  receiver: $(retx_summary "$tmp/incast.rcv.err")"
	else
		retx="retransmissions not available for $prov"
	fi
	[ "$verbose" = 1 ] && show incast
	if [ "$ok" != 1 ]; then
		show incast
		result FAIL incast "(receiver rc ${rcs[$r]}, senders rc $(for s in "${snd[@]}"; do printf '%s ' "${rcs[$s]}"; done); $(since "$t0") s)"
	elif [ "$bad" = 1 ]; then
		result FAIL incast "(retransmits at or above $INCAST_MAX_RETX_PCT % of packets: senders $retx; $(since "$t0") s)"
	else
		result PASS incast "($(grep '^PASS' "$tmp/incast.rcv" | sed 's/.*aggregate/aggregate/'); senders $retx; $(since "$t0") s)"
	fi
}

case_deadpeer() {
	local t0 s c tk secs limit
	need_time deadpeer 60 || return
	t0=$(now)
	bed_up -k 4 || { result FAIL deadpeer "(bed up failed)"; return; }
	port=$((port + 1))
	export FI_SRD_PEER_TIMEOUT=$PEER_TIMEOUT_MS
	# the server is not under timeout(1): it is killed by PID (ip netns
	# exec runs it in place); its watchdog bounds it otherwise
	"$bed" -n "$name" exec B "$bindir/sft_bw" -p "$prov" -S 1m -W 16 \
		-I 100000 -s -P "$port" -t 40 \
		>"$tmp/dead.srv" 2>"$tmp/dead.srv.err" &
	s=$!
	disown "$s"	# no "Killed" notice; "down" ends it if it outlives us
	timeout -k 5 45 "$bed" -n "$name" exec A "$bindir/sft_bw" -p "$prov" \
		-S 1m -W 16 -I 100000 -P "$port" -t 40 "$B_ADDR" \
		>"$tmp/dead.cli" 2>"$tmp/dead.cli.err" &
	c=$!
	if ! wait_flowing 20 20 "$c"; then
		unset FI_SRD_PEER_TIMEOUT
		show dead
		result FAIL deadpeer "(the transfer did not get going)"
		return
	fi
	kill -KILL "$s"
	tk=$(now)
	wait_procs 1 "$c"
	secs=$(since "$tk")
	unset FI_SRD_PEER_TIMEOUT
	limit=$(awk -v t="$PEER_TIMEOUT_MS" -v s="$DEAD_SLACK" 'BEGIN { print t / 1000 + s }')
	echo "  client: rc ${rcs[$c]} $secs s after the kill (limit $limit s): $(grep -h -E '^(FAIL|PASS)' "$tmp/dead.cli" | head -n1)"
	[ "$verbose" = 1 ] && show dead
	if [ "${rcs[$c]}" = 0 ]; then
		result FAIL deadpeer "(client passed although its server was killed)"
	elif grep -q '^FAIL.*OOB' "$tmp/dead.cli"; then
		result FAIL deadpeer "(client failed on the OOB socket, not through the provider)"
	elif [ "${rcs[$c]}" = 124 ] || [ "${rcs[$c]}" = 137 ]; then
		result FAIL deadpeer "(client hung: killed by timeout(1) after $secs s)"
	elif awk -v a="$secs" -v l="$limit" 'BEGIN { exit !(a > l) }'; then
		result FAIL deadpeer "(client took $secs s to fail, limit $limit s)"
	else
		result PASS deadpeer "(client failed with rc ${rcs[$c]} $secs s after the kill; peer timeout $PEER_TIMEOUT_MS ms; $(since "$t0") s)"
	fi
}

case_restart() {
	local t0 r1 s1 r2 s2 tk secs limit ok=1 why="" ptag
	need_time restart 90 || return
	[ -n "$incast" ] || { result SKIP restart "(sft_incast not built)"; return; }
	t0=$(now)
	bed_up -k 4 || { result FAIL restart "(bed up failed)"; return; }
	port=$((port + 1))
	export FI_SRD_PEER_TIMEOUT=$PEER_TIMEOUT_MS
	ptag="-A $B_ADDR:7471"
	# shellcheck disable=SC2086 # $ptag is two words
	"$bed" -n "$name" exec B "$incast" -p "$prov" -s -N 1 $ptag -m tagged \
		-S 64k -I 1000000 -P "$port" -t 40 \
		>"$tmp/rs.rcv1" 2>"$tmp/rs.rcv1.err" &
	r1=$!
	disown "$r1"
	timeout -k 5 45 "$bed" -n "$name" exec A "$incast" -p "$prov" -m tagged \
		-S 64k -I 1000000 -P "$port" -t 40 "$B_ADDR" \
		>"$tmp/rs.snd1" 2>"$tmp/rs.snd1.err" &
	s1=$!
	if ! wait_flowing 20 20 "$s1" || ! kill -0 "$r1" 2>/dev/null; then
		unset FI_SRD_PEER_TIMEOUT
		show rs
		result FAIL restart "(the first transfer did not get going)"
		return
	fi
	kill -KILL "$r1"
	tk=$(now)
	while kill -0 "$r1" 2>/dev/null; do sleep 0.05; done
	# new receiver: same provider address and OOB port; a new sender
	# shellcheck disable=SC2086
	timeout -k 5 40 "$bed" -n "$name" exec B "$incast" -p "$prov" -s -N 1 \
		$ptag -m tagged -S 64k -I 500 -P "$port" -t 35 \
		>"$tmp/rs.rcv2" 2>"$tmp/rs.rcv2.err" &
	r2=$!
	timeout -k 5 40 "$bed" -n "$name" exec A "$incast" -p "$prov" -m tagged \
		-S 64k -I 500 -P "$port" -t 35 "$B_ADDR" \
		>"$tmp/rs.snd2" 2>"$tmp/rs.snd2.err" &
	s2=$!
	wait_procs 1 "$s1"
	secs=$(since "$tk")
	wait_procs 5 "$r2" "$s2"
	unset FI_SRD_PEER_TIMEOUT
	limit=$(awk -v t="$PEER_TIMEOUT_MS" -v s="$DEAD_SLACK" 'BEGIN { print t / 1000 + s }')
	echo "  old sender: rc ${rcs[$s1]} $secs s after the kill (limit $limit s): $(grep -h -E '^(FAIL|PASS)' "$tmp/rs.snd1" | head -n1)"
	echo "  new pair: receiver rc ${rcs[$r2]}, sender rc ${rcs[$s2]}: $(grep -h '^PASS\|^FAIL' "$tmp/rs.snd2" | head -n1)"
	[ "$is_srd" = 1 ] && echo "  new receiver: $(sed -n 's/.*transport: //p' "$tmp/rs.rcv2.err" | head -n1)"
	[ "$verbose" = 1 ] && show rs
	if [ "${rcs[$s1]}" = 0 ]; then
		ok=0; why+=" old sender passed;"
	elif grep -q '^FAIL.*OOB' "$tmp/rs.snd1"; then
		ok=0; why+=" old sender failed on the OOB socket, not through the provider;"
	elif [ "${rcs[$s1]}" = 124 ] || [ "${rcs[$s1]}" = 137 ]; then
		ok=0; why+=" old sender hung;"
	elif awk -v a="$secs" -v l="$limit" 'BEGIN { exit !(a > l) }'; then
		ok=0; why+=" old sender took $secs s to fail;"
	fi
	if [ "${rcs[$r2]}" != 0 ] || [ "${rcs[$s2]}" != 0 ]; then
		ok=0; why+=" new pair failed;"
	fi
	if [ "$ok" = 1 ]; then
		result PASS restart "(old sender failed after $secs s, new pair on the same address passed; $(since "$t0") s)"
	else
		show rs
		result FAIL restart "(${why% ;} $(since "$t0") s)"
	fi
}

echo "sft_ecmp: provider $prov, binaries $bindir, bed $name, ${total} s"
for c in ${cases//,/ }; do
	echo "== $c"
	"case_$c"
	"$bed" -n "$name" down >/dev/null 2>&1
done
echo "$npass passed, $nfail failed, $nskip skipped in $((SECONDS - start)) s ($prov)"
[ "$nfail" = 0 ]
