#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_stat_check.sh: what "make check" runs for the srd_stat command
# (fabtests/scripts/srd_stat.sh) on loopback:
#  1. an endpoint pair (prov/srd/test/srd_stat_pair) sends 10 messages of
#     3000 bytes with FI_SRD_STATS_DIR set; while both stay open, srd_stat
#     --json gives one valid JSON object per endpoint (srd_json_check:
#     strict, no python) whose counters say what was sent: 10 messages
#     out and in, at least 30000 bytes each way, one active peer with 16
#     paths, no drops; the table shows every group (endpoint, drops,
#     wire, message layer, peers, paths);
#  2. once the pair closes its endpoints, their snapshots are gone;
#  3. a pair killed with SIGKILL leaves snapshots that srd_stat marks
#     STALE and --clean removes (and leaves a live process's alone);
#  4. a snapshot of an unknown format is refused, naming the format;
#     --version names the formats read.
# Prints PASS/FAIL per check; exit 0, 1 on a failure, 77 (SKIP) when the
# provider or the helpers are not built.  Every wait is bounded.
set -u

here=$(cd "$(dirname "$0")" && pwd)
stat="$here/srd_stat.sh"
bld=${SRD_TEST_BUILDDIR:-$here/../../build}
pair="$bld/prov/srd/test/srd_stat_pair"
jcheck="$bld/prov/srd/test/srd_json_check"
count=10 size=3000

if [ ! -e "${FI_PROVIDER_PATH:-.}/libsrd-fi.so" ] || [ ! -x "$pair" ] ||
   [ ! -x "$jcheck" ]; then
	echo "SKIP: libsrd-fi.so (FI_PROVIDER_PATH), srd_stat_pair or srd_json_check not built"
	exit 77
fi
export FI_SRD_IFACE=${FI_SRD_IFACE:-lo}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/srd_stat_check.XXXXXX") || exit 1
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	exec 3>&- 4>&- 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
pass() { echo "PASS $*"; }
fail() {
	echo "FAIL $1"
	shift
	for f in "$@"; do [ -e "$f" ] && sed 's/^/    /' "$f" | head -60; done
	fails=$((fails + 1))
}

# start_pair DIR FD: the pair in the background with its stdin on a fifo
# held open through FD (closing FD makes it close its endpoints); waits
# (at most 20 s) for its "ready"; sets $ppid_.
start_pair() {
	local dir=$1 fd=$2 i
	mkdir -p "$dir"
	rm -f "$tmp/ctl$fd"
	mkfifo "$tmp/ctl$fd"
	FI_SRD_STATS_DIR=$dir FI_SRD_STATS_INTERVAL_MS=10 \
		"$pair" "$count" "$size" <"$tmp/ctl$fd" >"$dir.out" 2>&1 &
	ppid_=$!
	pids+=("$ppid_")
	eval "exec $fd>\"$tmp/ctl$fd\""
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready' "$dir.out" && return 0
		kill -0 "$ppid_" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# jget FLAT PID EP KEYPATH: the value of a leaf of the JSON object of
# endpoint EP of process PID in srd_json_check's flattened output.
jget() {
	awk -F= -v pid="$2" -v ep="$3" -v key="$4" '
		{ split($1, a, "."); n = a[1] }
		$1 == n ".pid" { P[n] = $2 } $1 == n ".ep" { E[n] = $2 }
		{ k = substr($1, length(n) + 2); V[n, k] = $2; N[n] = 1 }
		END { for (n in N) if (P[n] == pid && E[n] == ep &&
				      ((n, key) in V)) print V[n, key] }' "$1"
}

# --- 1. a live pair: JSON and table -----------------------------------
d1="$tmp/live"
if ! start_pair "$d1" 3; then
	fail "the pair did not get ready" "$d1.out"
	exit 1
fi
pid=$ppid_
# the snapshots follow within FI_SRD_STATS_INTERVAL_MS; wait (5 s at
# most) until both show every message
for ((i = 0; i < 100; i++)); do
	"$stat" --json "$d1" >"$tmp/j" 2>"$tmp/jerr"
	"$jcheck" "$tmp/j" >"$tmp/flat" 2>>"$tmp/jerr" &&
	[ "$(jget "$tmp/flat" "$pid" 0 'msg_peers[0].tx_msg_id')" = "$count" ] &&
	[ "$(jget "$tmp/flat" "$pid" 1 'msg_peers[0].rx_msg_id')" = "$count" ] &&
		break
	sleep 0.05
done
if "$jcheck" -q "$tmp/j" 2>>"$tmp/jerr" && [ "$(wc -l <"$tmp/j")" = 2 ]; then
	pass "json: two endpoints, one valid JSON object each"
else
	fail "json: not two valid objects" "$tmp/j" "$tmp/jerr"
fi
bad=()
want() {	# want EP KEY OP VALUE
	local v
	v=$(jget "$tmp/flat" "$pid" "$1" "$2")
	if [ -z "$v" ]; then
		bad+=("ep $1 $2 missing")
	elif ! awk -v v="$v" -v w="$4" -v op="$3" 'BEGIN {
		if (op == "=") exit !(v == w); if (op == ">=") exit !(v + 0 >= w + 0)
		exit 1 }'; then
		bad+=("ep $1 $2=$v, want $3 $4")
	fi
}
total=$((count * size))
want 0 format = 2
want 0 provider = srd
want 0 stale = false
want 0 complete = true
want 0 paths = 16
want 0 msg_peers[0].tx_msg_id = "$count"
want 0 endpoint.tx_pkts ">=" "$count"
want 0 endpoint.tx_bytes ">=" "$total"
want 0 endpoint.peers = 1
want 0 peers[0].state = ACTIVE
want 0 peers[0].tx_bytes ">=" "$total"
want 0 peers[0].inflight = 0
want 0 'peers[0].paths[15].id' = 15
want 1 msg_peers[0].rx_msg_id = "$count"
want 1 endpoint.rx_pkts ">=" "$count"
want 1 endpoint.rx_bytes ">=" "$total"
want 1 msg.unexp_msgs = 0
want 1 msg.posted_msg = 0
for k in rx_drop_malformed rx_drop_unknown rx_drop_conn rx_drop_window \
	 rx_drop_token rx_drop_auth rx_drop_version rx_drop_nogrh; do
	want 0 "drops.$k" = 0
	want 1 "drops.$k" = 0
done
# the 16 paths carry all of the peer's packets
sum=$(awk -F= -v pid="$pid" '
	{ n = substr($1, 1, index($1, ".") - 1) }
	$1 == n ".pid" { P[n] = $2 } $1 == n ".ep" { E[n] = $2 }
	$1 ~ /^[0-9]+\.peers\[0\]\.paths\[[0-9]+\]\.tx_pkts$/ { S[n] += $2 }
	END { for (n in S) if (P[n] == pid && E[n] == 0) print S[n] }' "$tmp/flat")
peerpkts=$(jget "$tmp/flat" "$pid" 0 'peers[0].tx_pkts')
[ -n "$sum" ] && [ "$sum" = "$peerpkts" ] ||
	bad+=("paths' tx_pkts add up to ${sum:-?}, the peer's $peerpkts")
if [ ${#bad[@]} -eq 0 ]; then
	pass "json: $count messages of $size bytes out and in, one active peer, 16 paths, no drops"
else
	fail "json: $(printf '%s; ' "${bad[@]}")" "$tmp/j"
fi

"$stat" "$d1" >"$tmp/table" 2>&1
miss=()
for re in "^$d1/srd-$pid-0.stats: srd " "^  endpoint   sent " "^  drops      " \
	  "^  strangers  " "^  wire       udp" "^  messages   posted receives" \
	  "^  msg peer   127.0.0.1:[0-9]*: next message out $count" \
	  "^  msg peer   127.0.0.1:[0-9]*: next message out 0, next in $count" \
	  "^  peer       127.0.0.1:[0-9]* ACTIVE" "^    path 15 UP"; do
	grep -q -- "$re" "$tmp/table" || miss+=("$re")
done
# nothing in the snapshot that the table leaves out (the "+" lines)
grep -q '^ *+ ' "$tmp/table" && miss+=("keys the table does not name: $(grep '^ *+ ' "$tmp/table" | head -n 3)")
if [ ${#miss[@]} -eq 0 ]; then
	pass "table: endpoint, drops, strangers, wire, message layer, peers and paths"
else
	fail "table: missing $(printf '"%s" ' "${miss[@]}")" "$tmp/table"
fi
# two looks 0.2 s apart: the second gives rates
"$stat" -i 0.2 -n 2 --json "$d1" >"$tmp/j2" 2>&1
if "$jcheck" "$tmp/j2" >"$tmp/flat2" 2>&1 && [ "$(wc -l <"$tmp/j2")" = 4 ] &&
   grep -q '^[23]\.rates\.interval_s=' "$tmp/flat2" &&
   grep -q '^[01]\.rates=null' "$tmp/flat2"; then
	pass "json -i 0.2 -n 2: four objects, rates from the second look on"
else
	fail "json -i 0.2 -n 2" "$tmp/j2" "$tmp/flat2"
fi

# --- 2. closing removes the snapshots ----------------------------------
exec 3>&-
for ((i = 0; i < 100; i++)); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
wait "$pid"
prc=$?
left=$(ls "$d1")
if [ "$prc" = 0 ] && grep -q '^closed' "$d1.out" && [ -z "$left" ]; then
	pass "close: the pair exited 0 and its snapshots are gone"
else
	fail "close: exit $prc, left in $d1: ${left:-nothing}" "$d1.out"
fi

# --- 3. a killed process: STALE, and --clean ------------------------------
d2="$tmp/killed"
if start_pair "$d2" 4; then
	dead=$ppid_
	for ((i = 0; i < 100; i++)); do
		[ -e "$d2/srd-$dead-0.stats" ] && [ -e "$d2/srd-$dead-1.stats" ] && break
		sleep 0.05
	done
	kill -9 "$dead"
	wait "$dead" 2>/dev/null
	exec 4>&-
	# and a live one beside it
	start_pair "$tmp/alive" 5 || fail "the second pair did not get ready" "$tmp/alive.out"
	alive=$ppid_
	for ((i = 0; i < 100; i++)); do
		[ -e "$tmp/alive/srd-$alive-0.stats" ] && break
		sleep 0.05
	done
	# cat, not cp: the provider replaces its snapshot by rename every
	# interval, and cp (coreutils 9) refuses a source replaced while it
	# copies; cat reads the one it opened, whole (each is renamed in
	# complete)
	cat "$tmp/alive/srd-$alive-0.stats" >"$d2/srd-$alive-0.stats"
	"$stat" "$d2" >"$tmp/t2" 2>&1
	"$stat" --json "$d2" >"$tmp/j3" 2>&1
	nstale=$(grep -c "^$d2/srd-$dead-[01].stats: .*STALE" "$tmp/t2")
	"$jcheck" "$tmp/j3" >"$tmp/flat3" 2>&1
	jstale=$(jget "$tmp/flat3" "$dead" 0 stale)$(jget "$tmp/flat3" "$alive" 0 stale)
	if [ "$nstale" = 2 ] && ! grep -q "srd-$alive-0.stats: .*STALE" "$tmp/t2" &&
	   [ "$jstale" = truefalse ]; then
		pass "stale: the killed pair's 2 snapshots are STALE, a live one is not"
	else
		fail "stale: $nstale of 2 marked, json stale=$jstale" "$tmp/t2"
	fi
	"$stat" --clean "$d2" >"$tmp/c" 2>&1
	left=$(ls "$d2")
	if [ "$(grep -c '^removed ' "$tmp/c")" = 2 ] &&
	   [ "$left" = "srd-$alive-0.stats" ]; then
		pass "clean: removed the 2 stale snapshots, kept the live one"
	else
		fail "clean: left ${left:-nothing}" "$tmp/c"
	fi
	exec 5>&-
	wait "$alive"
else
	fail "the pair to kill did not get ready" "$d2.out"
fi

# --- 4. formats and version -----------------------------------------------
d3="$tmp/fmt"
mkdir -p "$d3"
printf 'srd-stats 99 provider=srd version=9.9 pid=1\nend\n' >"$d3/srd-1-0.stats"
"$stat" "$d3" >"$tmp/f" 2>&1
frc=$?
ver=$("$stat" --version)
if [ "$frc" = 1 ] && grep -q "format 99 .*reads format 2" "$tmp/f" &&
   [[ "$ver" =~ ^srd_stat\ \(srd\)\ [0-9a-z.]+\;\ snapshot\ formats:\ 2$ ]]; then
	pass "format: 99 refused (exit 1), --version: $ver"
else
	fail "format: exit $frc, --version: $ver" "$tmp/f"
fi

[ "$fails" = 0 ] && echo "srd_stat_check: all passed" && exit 0
echo "srd_stat_check: $fails failed"
exit 1
