#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_stat: prints the counters that srd endpoints keep in FI_SRD_STATS_DIR
# (installed as srd_stat; in the source tree fabtests/scripts/srd_stat.sh).
#
#   srd_stat [-i SECONDS] [-n COUNT] [-j|--json] [-b|--brief] DIR|FILE...
#   srd_stat --clean DIR|FILE...
#   srd_stat -V|--version | -h|--help
#
# Each endpoint opened with FI_SRD_STATS_DIR=DIR rewrites DIR/srd-PID-N.stats
# every FI_SRD_STATS_INTERVAL_MS while it makes progress, and removes it
# when it closes.  This prints, per file: the endpoint (packets, resends,
# push-back, paths, peers; with -i the rates since the previous sample),
# the drops by reason, the wire, the message layer (posted, unexpected and
# reordered messages against their bounds), each peer's message state,
# each peer it sends to (state, congestion window, RTTs) and each path to
# it.  A snapshot whose process is gone is marked STALE; --clean removes
# those.  -j prints JSON Lines instead: one object per endpoint per look.
# fi_srd(7) STATISTICS says what every counter means.
#
# Exit status: 0; 1 if a snapshot could not be read (unknown format) or,
# with --clean, one could not be removed; 2 for a usage error.
# Needs bash and a POSIX awk (mawk or gawk), nothing else.
set -u

# The release; "make install" puts the version in place of the
# placeholder.  Run from the source tree, configure.ac says it.
SRD_VERSION=${SRD_VERSION:-@PACKAGE_VERSION@}
# The snapshot formats this reads (the first line: "srd-stats FORMAT ...").
SRD_STAT_FORMATS="2"

prog=srd_stat
here=$(cd "$(dirname "$0")" && pwd)
case "$SRD_VERSION" in
*@*)
	SRD_VERSION=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' \
		      "$here/../../configure.ac" 2>/dev/null)
	SRD_VERSION=${SRD_VERSION:-unknown}
	;;
esac

interval=
count=0
json=0
clean=0
paths=1

usage() {
	cat >&2 <<EOF
usage: $prog [-i SECONDS] [-n COUNT] [-j|--json] [-b|--brief] DIR|FILE...
       $prog --clean DIR|FILE...
       $prog -V|--version
  DIR           a FI_SRD_STATS_DIR: every srd-*.stats file in it
  -i SECONDS    look again every SECONDS (default: once), with rates
  -n COUNT      stop after COUNT looks
  -j, --json    JSON Lines: one object per endpoint per look
  -b, --brief   no line per path (the table only)
  -p            per-path lines (the default; kept for old command lines)
  --clean       remove the snapshots of processes that are gone
  -V, --version the version and the snapshot formats read
EOF
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case "$1" in
	-i) [ $# -ge 2 ] || usage; interval=$2; shift 2 ;;
	-n) [ $# -ge 2 ] || usage; count=$2; shift 2 ;;
	-j|--json) json=1; shift ;;
	-b|--brief) paths=0; shift ;;
	-p) paths=1; shift ;;
	--clean) clean=1; shift ;;
	-V|--version)
		echo "$prog (srd) $SRD_VERSION; snapshot formats: $SRD_STAT_FORMATS"
		exit 0 ;;
	-h|--help) usage 0 ;;
	--) shift; break ;;
	-*) echo "$prog: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
if [ -n "$interval" ] && ! [[ "$interval" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
	echo "$prog: -i wants seconds" >&2
	usage
fi
[[ "$count" =~ ^[0-9]+$ ]] || { echo "$prog: -n wants a count" >&2; usage; }

myhost=$(uname -n)
rc=0

# The snapshot files named by the arguments (directories: srd-*.stats).
files() {
	local a f
	for a in "$@"; do
		if [ -d "$a" ]; then
			for f in "$a"/srd-*.stats; do
				[ -e "$f" ] && echo "$f"
			done
		elif [ -e "$a" ]; then
			echo "$a"
		else
			echo "$prog: $a: no such file or directory" >&2
		fi
	done
}

# pid_gone PID START: true when no process PID started at START (clock
# ticks since boot, field 22 of /proc/PID/stat; 0: unknown) exists here.
pid_gone() {
	local pid=$1 start=$2 stat rest
	case "$pid" in ''|*[!0-9]*) return 1 ;; esac
	if [ -d /proc/self ]; then
		stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 0
		[ "$start" = 0 ] && return 1
		rest=${stat##*) }
		# shellcheck disable=SC2086
		set -- $rest
		[ $# -ge 20 ] && [ "${20}" != "$start" ]
		return
	fi
	# no /proc: kill says "No such process" (not "not permitted")
	kill -0 "$pid" 2>/dev/null && return 1
	kill -0 "$pid" 2>&1 | grep -qi "no such"
}

# head_get LINE KEY: the value of KEY=... in a snapshot's first line.
head_get() {
	local w
	for w in $1; do
		case "$w" in "$2="*) echo "${w#*=}"; return ;; esac
	done
}

# snap_check FILE FIRSTLINE: 0 when this reads the snapshot's format,
# else says why not on stderr.
snap_check() {
	local f=$1 first=$2 fmt fm
	case "$first" in
	"srd-stats "*) ;;
	"srd ep "*)
		echo "$prog: $f: snapshot format 1 (from an older srd, without the format line); this $prog reads format $SRD_STAT_FORMATS" >&2
		return 1 ;;
	*)
		echo "$prog: $f: not an srd stats snapshot (no \"srd-stats\" line)" >&2
		return 1 ;;
	esac
	fmt=$(set -- $first; echo "${2:-}")
	for fm in $SRD_STAT_FORMATS; do
		[ "$fmt" = "$fm" ] && return 0
	done
	echo "$prog: $f: snapshot format $fmt (from srd $(head_get "$first" version)); this $prog ($SRD_VERSION) reads format $SRD_STAT_FORMATS" >&2
	return 1
}

# stale_of FIRSTLINE: "1" when the writer is gone, "0" when it runs (or
# lives on another host, where this cannot tell).
stale_of() {
	local host pid start
	host=$(head_get "$1" host)
	pid=$(head_get "$1" pid)
	start=$(head_get "$1" start)
	if [ -n "$host" ] && [ "$host" != "?" ] && [ "$host" != "$myhost" ]; then
		echo 0
	elif pid_gone "$pid" "${start:-0}"; then
		echo 1
	else
		echo 0
	fi
}

# clean_tmp DIR: half-written snapshots (srd-PID-N.stats.tmp) of
# processes gone from this host.
clean_tmp() {
	local f pid first host
	for f in "$1"/srd-*.stats.tmp; do
		[ -e "$f" ] || continue
		pid=${f##*/srd-}
		pid=${pid%%-*}
		first=$(head -n 1 "$f" 2>/dev/null)
		host=$(head_get "$first" host)
		[ -z "$host" ] || [ "$host" = "$myhost" ] || continue
		pid_gone "$pid" "$(head_get "$first" start)" || continue
		rm -f "$f" && echo "removed $f (pid $pid gone, half written)"
	done
}

clean() {
	local f first a
	while read -r f; do
		first=$(head -n 1 "$f" 2>/dev/null) || continue
		case "$first" in
		"srd-stats "*) ;;	# every format: pid=, start=, host=
		"srd ep "*) # format 1 had no host: the PID from the name
			a=${f##*/srd-}
			first="pid=${a%%-*}" ;;
		*) continue ;;
		esac
		[ "$(stale_of "$first")" = 1 ] || continue
		if rm -f "$f" "$f.tmp"; then
			echo "removed $f (pid $(head_get "$first" pid) gone)"
		else
			rc=1
		fi
	done < <(files "$@")
	for a in "$@"; do
		[ -d "$a" ] && clean_tmp "$a"
	done
}

if [ "$clean" = 1 ]; then
	clean "$@"
	exit $rc
fi

statedir=$(mktemp -d "${TMPDIR:-/tmp}/srd_stat.XXXXXX") || exit 1
trap 'rm -rf "$statedir"' EXIT

# show FILE: one snapshot as a table or a JSON object.
show() {
	local f=$1 snap first stale now
	snap=$(cat "$f" 2>/dev/null) || return 0	# closed meanwhile
	[ -n "$snap" ] || return 0
	first=${snap%%$'\n'*}
	snap_check "$f" "$first" || { rc=1; return 0; }
	stale=$(stale_of "$first")
	now=$(date +%s.%N)
	printf '%s\n' "$snap" |
	awk -v file="$f" -v stale="$stale" -v now="$now" -v json="$json" \
	    -v paths="$paths" -v statef="$statedir/$(printf '%s' "$f" | tr '/' '_')" \
	    -v tool_version="$SRD_VERSION" -f <(awk_prog)
}

# The awk program that reads one snapshot (format 2; keys it does not
# know still appear: in the table on a "+" line, in JSON as they are).
awk_prog() {
	cat <<'AWK'
function kv(i,   p) {
	p = index($i, "=")
	if (!p) { K = $i; V = ""; return }
	K = substr($i, 1, p - 1); V = substr($i, p + 1)
}
# the record in R[], its keys in order in O[1..NO]; U[] marks those shown
function load(from,   i) {
	split("", R); split("", U); NO = 0
	for (i = from ? from : 2; i <= NF; i++) { kv(i); R[K] = V; O[++NO] = K }
}
function g(k) { U[k] = 1; return (k in R) ? R[k] : 0 }
function rest(indent,   i, s) {
	s = ""
	for (i = 1; i <= NO; i++)
		if (!(O[i] in U)) s = s " " O[i] "=" R[O[i]]
	if (s != "") printf "%s+%s\n", indent, s
}
function hb(b) {
	b += 0
	if (b < 1024) return sprintf("%.0f B", b)
	if (b < 1048576) return sprintf("%.1f KiB", b / 1024)
	if (b < 1073741824) return sprintf("%.1f MiB", b / 1048576)
	return sprintf("%.2f GiB", b / 1073741824)
}
function us(ns) { return sprintf("%.1f", ns / 1000) }
function ht(ns) {
	ns += 0
	if (ns < 1e6) return sprintf("%.1f us", ns / 1e3)
	if (ns < 1e9) return sprintf("%.1f ms", ns / 1e6)
	return sprintf("%.1f s", ns / 1e9)
}
function n0(x) { return sprintf("%.0f", x) }
function jstr(s) {
	gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s)
	gsub(/\t/, "\\t", s)
	return "\"" s "\""
}
function jval(v) {
	if (v ~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/) return v
	return jstr(v)
}
# the record as a JSON object, extra already formatted members after
function jrec(extra,   i, s) {
	s = ""
	for (i = 1; i <= NO; i++)
		s = s (s == "" ? "" : ",") jstr(O[i]) ":" jval(R[O[i]])
	if (extra != "") s = s (s == "" ? "" : ",") extra
	return "{" s "}"
}
function jlist(name, items) { return jstr(name) ":[" items "]" }
function jadd(list, item) { return list (list == "" ? "" : ",") item }

BEGIN {
	prev_seq = ""
	if ((getline l < statef) > 0) {
		split(l, P, " ")
		prev_seq = P[1]; prev_time = P[2]; prev_tx = P[3]
		prev_txb = P[4]; prev_rx = P[5]; prev_rxb = P[6]; prev_re = P[7]
	}
	close(statef)
	peers = ""; mpeers = ""; ppaths = ""; other = ""; inpeer = 0
}

# line 1: srd-stats FORMAT key=value...
NR == 1 {
	load(3); format = $2
	hd = ""
	for (i = 1; i <= NO; i++)
		hd = hd "," jstr(O[i]) ":" jval(R[O[i]])
	age = now - g("time")
	if (!json) {
		printf "%s: srd %s (format %s, protocol %s), pid %s on %s, endpoint %s at %s, %s paths, snapshot %s, %.1f s old%s\n",
		       file, g("version"), format, g("proto"), g("pid"), g("host"),
		       g("ep"), g("addr"), g("paths"), g("seq"), age,
		       stale == 1 ? "  STALE: the process is gone (srd_stat --clean removes it)" : ""
		U["provider"] = U["start"] = U["time"] = U["interval_ms"] = 1
		if (!stale && age > 10 * g("interval_ms") / 1000 + 1)
			printf "  (not rewritten for %.1f s: the program makes no progress calls?)\n", age
		rest("  ")
	}
	seq = g("seq"); stime = g("time") + 0
	next
}

function flush_peer() {
	if (!inpeer) return
	peers = jadd(peers, substr(peer_json, 1, length(peer_json) - 1) "," jlist("paths", ppaths) "}")
	inpeer = 0; ppaths = ""
}

$1 == "ep" {
	load(); ep_json = jrec("")
	tx = g("tx_pkts"); txb = g("tx_bytes"); rx = g("rx_pkts"); rxb = g("rx_bytes")
	re = g("retx_timeout") + g("retx_fast") + g("retx_probe")
	rates()
	if (json) next
	printf "  endpoint   sent %s pkts %s, delivered %s pkts %s; acks %s out %s in\n",
	       n0(tx), hb(txb), n0(rx), hb(rxb), n0(g("tx_acks")), n0(g("rx_acks"))
	printf "             resent %s on timeout, %s on SACK holes, %s as tail probes (%s copies sent); %s timeouts undone, %s timers late\n",
	       n0(g("retx_timeout")), n0(g("retx_fast")), n0(g("retx_probe")), n0(g("retx_sent")),
	       n0(g("rto_spurious")), n0(g("timer_late"))
	printf "             receiver-not-ready %s out %s in; congestion window cuts %s\n",
	       n0(g("rnr_sent")), n0(g("rnr_recv")), n0(g("cc_cuts"))
	printf "             paths %s taken down (%s rails as one), %s up again, %s probes; peers %s known, %s failed, %s reclaimed; %s pings\n",
	       n0(g("path_downs")), n0(g("rail_downs")), n0(g("path_ups")), n0(g("path_probes")),
	       n0(g("peers")), n0(g("peers_failed")), n0(g("peers_reclaimed")), n0(g("pings_sent"))
	printf "             progress thread: looked %s times, stepped %s while the application was away\n",
	       n0(g("progress_looks")), n0(g("progress_steps"))
	rest("             ")
	next
}

$1 == "drops" {
	load(); drops_json = jrec("")
	if (json) next
	printf "  drops      duplicates %s, refused for room %s, malformed %s, unknown sender %s, wrong connection %s,\n",
	       n0(g("rx_dup")), n0(g("rx_refused")), n0(g("rx_drop_malformed")),
	       n0(g("rx_drop_unknown")), n0(g("rx_drop_conn"))
	printf "             beyond the window %s, wrong token %s, no valid MAC %s, other protocol version %s, verbs without GRH %s\n",
	       n0(g("rx_drop_window")), n0(g("rx_drop_token")), n0(g("rx_drop_auth")),
	       n0(g("rx_drop_version")), n0(g("rx_drop_nogrh"))
	rest("             ")
	next
}

$1 == "strangers" {
	load(); strangers_json = jrec("")
	if (json) next
	printf "  strangers  %s cookies sent, %s sent to and %s received from unverified addresses\n",
	       n0(g("hs_cookies")), hb(g("tx_unverified_bytes")), hb(g("rx_unverified_bytes"))
	rest("             ")
	next
}

$1 == "wire" {
	load(); wire_json = jrec("")
	if (json) next
	printf "  wire       %s: sent %s datagrams in %s calls, received %s in %s calls, up to %s per send\n",
	       g("name"), n0(g("tx_dgrams")), n0(g("tx_calls")), n0(g("rx_dgrams")),
	       n0(g("rx_calls")), n0(g("segs_max"))
	rest("             ")
	next
}

$1 == "msg" {
	load(); msg_json = jrec("")
	if (json) next
	printf "  messages   posted receives %s msg %s tagged; unexpected %s msgs (%s msg, %s tagged) %s; held for order %s pkts %s\n",
	       n0(g("posted_msg")), n0(g("posted_tagged")), n0(g("unexp_msgs")),
	       n0(g("unexp_msg")), n0(g("unexp_tagged")), hb(g("unexp_store_bytes")),
	       n0(g("reorder_pkts")), hb(g("reorder_bytes"))
	printf "             charged %s of %s (peak %s), %s of %s messages; RMA answers %s (peak %s) of %s\n",
	       hb(g("unexp_bytes")), hb(g("unexp_max_bytes")), hb(g("unexp_peak_bytes")),
	       n0(g("unexp_msgs")), n0(g("unexp_max_msgs")), n0(g("rma_resps")),
	       n0(g("rma_resps_peak")), n0(g("rma_resp_max"))
	rest("             ")
	next
}

$1 == "msgpeer" {
	load(); mpeers = jadd(mpeers, jrec(""))
	if (json) next
	printf "  msg peer   %s: next message out %s, next in %s; held %s pkts %s; unexpected %s msgs %s; receiving %s\n",
	       g("addr"), n0(g("tx_msg_id")), n0(g("rx_msg_id")), n0(g("held_pkts")),
	       hb(g("reorder_bytes")), n0(g("unexp_msgs")), hb(g("unexp_bytes")),
	       g("rx_active") == 1 ? "yes" : "no"
	rest("             ")
	next
}

$1 == "peer" {
	flush_peer()
	load(); peer_json = jrec(""); inpeer = 1
	peer_bytes = g("tx_bytes") + 0
	if (json) next
	printf "  peer       %s %s: cwnd %s (ssthresh %s), in flight %s/%s pkts %s, queued %s, heard %s ago\n",
	       g("addr"), g("state"), g("cwnd"), g("ssthresh"), n0(g("inflight")),
	       n0(g("window")), hb(g("inflight_bytes")), n0(g("queued")), ht(g("heard_ns"))
	printf "             rtt %s us (var %s), network %s, base %s; rto %s us, stall allowance %s\n",
	       us(g("srtt_ns")), us(g("rttvar_ns")), us(g("net_rtt_ns")),
	       us(g("base_rtt_ns")), us(g("rto_ns")), us(g("rto_stall_ns"))
	printf "             sent %s pkts %s, resent %s timeout %s fast %s probe (%s copies, %s undone), rnr %s, cuts %s, paths down %s/%s\n",
	       n0(g("tx_pkts")), hb(peer_bytes), n0(g("retx_timeout")), n0(g("retx_fast")),
	       n0(g("retx_probe")), n0(g("retx_sent")), n0(g("rto_spurious")), n0(g("rnr_recv")),
	       n0(g("cc_cuts")), n0(g("paths_down")), n0(g("npaths"))
	g("hs_rto_ns"); g("hs_age_ns")
	if (g("state") == "HS_SENT")
		printf "             handshake waiting %s, its timeout %s\n",
		       ht(R["hs_age_ns"]), ht(R["hs_rto_ns"])
	rest("             ")
	next
}

$1 == "path" {
	load(); ppaths = jadd(ppaths, jrec(""))
	if (json || !paths) next
	g("addr")
	printf "    path %2s %-4s %5.1f%% of bytes, %s pkts %s, resent %s, lost %s, acked %s, rtt %s us, downs %s, score %s\n",
	       g("id"), g("state"), peer_bytes ? 100 * g("tx_bytes") / peer_bytes : 0,
	       n0(g("tx_pkts")), hb(g("tx_bytes")), n0(g("retx")), n0(g("losses")),
	       n0(g("acked")), us(g("srtt_ns")), n0(g("downs")), n0(g("loss_score"))
	rest("             ")
	next
}

$1 == "end" { ended = 1; next }

# a record this version does not know: shown as it is
NF > 0 {
	load()
	if (json)
		other = jadd(other, jstr($1) ":" jrec(""))
	else {
		printf "  %-10s", $1
		rest(" ")
	}
}

# against the previous look at this file (-i), by the snapshots' times
function rates(   dt) {
	rate = ""
	if (prev_seq != "" && prev_seq != seq && stime > prev_time + 0) {
		dt = stime - prev_time
		rate = sprintf("\"interval_s\":%.3f,\"tx_pkts_per_s\":%.1f,\"tx_bytes_per_s\":%.1f,\"rx_pkts_per_s\":%.1f,\"rx_bytes_per_s\":%.1f,\"retx_per_s\":%.1f",
			       dt, (tx - prev_tx) / dt, (txb - prev_txb) / dt,
			       (rx - prev_rx) / dt, (rxb - prev_rxb) / dt, (re - prev_re) / dt)
		if (!json)
			printf "  rates      over %.2f s: sent %.0f pkts/s %.2f MB/s, delivered %.0f pkts/s %.2f MB/s, resent %.0f/s\n",
			       dt, (tx - prev_tx) / dt, (txb - prev_txb) / 1e6 / dt,
			       (rx - prev_rx) / dt, (rxb - prev_rxb) / 1e6 / dt, (re - prev_re) / dt
	} else if (prev_seq != "" && prev_seq == seq && !json)
		printf "  rates      no new snapshot since the last look\n"
}

END {
	flush_peer()
	if (!ended && !json)
		printf "  (no \"end\" line: the snapshot is cut short)\n"
	printf "%s %.9f %.0f %.0f %.0f %.0f %.0f\n", seq, stime, tx, txb, rx, rxb, re > statef
	close(statef)
	if (!json) { print ""; exit }
	printf "{\"tool\":\"srd_stat\",\"tool_version\":%s,\"file\":%s,\"format\":%s,\"stale\":%s,\"complete\":%s,\"age_s\":%.3f%s",
	       jstr(tool_version), jstr(file), format, stale == 1 ? "true" : "false",
	       ended ? "true" : "false", age, hd
	printf ",\"endpoint\":%s,\"drops\":%s,\"strangers\":%s,\"wire\":%s,\"msg\":%s",
	       ep_json == "" ? "null" : ep_json, drops_json == "" ? "null" : drops_json,
	       strangers_json == "" ? "null" : strangers_json,
	       wire_json == "" ? "null" : wire_json, msg_json == "" ? "null" : msg_json
	printf ",%s,%s,\"rates\":%s", jlist("msg_peers", mpeers), jlist("peers", peers),
	       rate == "" ? "null" : "{" rate "}"
	if (other != "") printf ",\"other\":{%s}", other
	printf "}\n"
}
AWK
}

look() {
	local f any=0
	while read -r f; do
		any=1
		show "$f"
	done < <(files "$@")
	if [ "$any" = 0 ] && [ "$json" = 0 ]; then
		echo "no srd-*.stats files in $*"
	fi
}

n=0
while :; do
	look "$@"
	n=$((n + 1))
	[ -n "$interval" ] || break
	[ "$count" -gt 0 ] && [ "$n" -ge "$count" ] && break
	sleep "$interval"
done
exit $rc
