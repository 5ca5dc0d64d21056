#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sft_pair.sh [-t TIMEOUT] [-c ARG]... -- PROGRAM ARGS...
#
# Runs one sft_* test as a server/client pair on 127.0.0.1:
#   server: PROGRAM ARGS -s -P PORT
#   client: PROGRAM ARGS [ARG...] -P PORT 127.0.0.1
# (each -c adds one ARG to the client's line alone, after ARGS: a later
# option wins, so "-c -W -c 4" gives the client another window than the
# server; ARGS must then end in options, not a positional argument).
# PORT is a free TCP port for the out-of-band address exchange.  Both
# sides run under timeout(1).  Exit 0 only if both sides exit 0; 77 if a
# side skipped (and none failed); 1 otherwise.  Output is printed with a
# [server] / [client] prefix once both sides are done.
set -u

usage() {
	echo "usage: $0 [-t TIMEOUT_SECONDS] [-c CLIENT_ARG]... -- PROGRAM ARGS..." >&2
	exit 2
}

tmo=120
cli_extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	-t) [ $# -ge 2 ] || usage; tmo=$2; shift 2 ;;
	-c) [ $# -ge 2 ] || usage; cli_extra+=("$2"); shift 2 ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
# a bare name that is not on the PATH: the program installed beside this
# script ($libexecdir/srd holds both)
case $1 in
*/*) ;;
*) command -v "$1" >/dev/null || [ ! -x "$(dirname "$0")/$1" ] ||
	set -- "$(dirname "$0")/$1" "${@:2}" ;;
esac

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/sft_pair.XXXXXX") || exit 1
srv_pid=
cli_pid=

cleanup() {
	local p
	for p in $srv_pid $cli_pid; do
		kill -TERM "$p" 2>/dev/null
	done
	rm -rf "$tmpdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_busy() {
	ss -ltnH "sport = :$1" 2>/dev/null | grep -q .
}

# Hand out ports from a shared counter (under flock) in 20000-31999,
# skipping any that something already listens on.
pick_port() {
	local cnt p
	cnt="${TMPDIR:-/tmp}/sft_pair.port.$(id -u)"
	exec 9>>"$cnt.lock"
	flock -w 10 9 || true
	p=$(cat "$cnt" 2>/dev/null)
	case "$p" in ''|*[!0-9]*) p=$((20000 + ($$ * 7 + RANDOM) % 12000)) ;; esac
	for _ in $(seq 1 200); do
		p=$((p + 1))
		[ "$p" -ge 32000 ] && p=20000
		port_busy "$p" || break
	done
	echo "$p" >"$cnt"
	exec 9>&-
	echo "$p"
}

port=$(pick_port)

timeout -k 5 "$tmo" "$@" -s -P "$port" >"$tmpdir/server" 2>&1 &
srv_pid=$!

# Wait (at most 15 s) until the server listens on the OOB port.
for _ in $(seq 1 150); do
	port_busy "$port" && break
	kill -0 "$srv_pid" 2>/dev/null || break
	sleep 0.1
done

srv_rc=
cli_rc=
if port_busy "$port"; then
	timeout -k 5 "$tmo" "$@" "${cli_extra[@]}" -P "$port" 127.0.0.1 \
		>"$tmpdir/client" 2>&1 &
	cli_pid=$!
else
	echo "server never listened on port $port" >"$tmpdir/client"
	cli_rc=none
fi

# Poll both; once one side has failed or skipped, give the other 5 s
# to notice and then stop it (only our own children, by PID).
grace=0
while :; do
	if [ -z "$srv_rc" ] && ! kill -0 "$srv_pid" 2>/dev/null; then
		wait "$srv_pid"; srv_rc=$?; srv_pid=
	fi
	if [ -z "$cli_rc" ] && ! kill -0 "$cli_pid" 2>/dev/null; then
		wait "$cli_pid"; cli_rc=$?; cli_pid=
	fi
	[ -n "$srv_rc" ] && [ -n "$cli_rc" ] && break
	if [ "${srv_rc:-0}" != 0 ] || [ "${cli_rc:-0}" != 0 ]; then
		grace=$((grace + 1))
		if [ "$grace" -gt 50 ]; then
			for p in $srv_pid $cli_pid; do
				kill -TERM "$p" 2>/dev/null
			done
		fi
	fi
	sleep 0.1
done

sed 's/^/[server] /' "$tmpdir/server"
sed 's/^/[client] /' "$tmpdir/client" 2>/dev/null
echo "[pair] port $port: server rc=$srv_rc client rc=$cli_rc"

if [ "$srv_rc" = 0 ] && [ "$cli_rc" = 0 ]; then
	exit 0
fi
if [ "$srv_rc" = 77 ] || [ "$cli_rc" = 77 ]; then
	# a skip on one side; the other side passed, skipped or was stopped
	ok=1
	for rc in "$srv_rc" "$cli_rc"; do
		case "$rc" in 0|77|124|137|143|none) ;; *) ok=0 ;; esac
	done
	[ "$ok" = 1 ] && exit 77
fi
[ "$srv_rc" = 124 ] || [ "$cli_rc" = 124 ] && echo "[pair] timed out after ${tmo}s"
exit 1
