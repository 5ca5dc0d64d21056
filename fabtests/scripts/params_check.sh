#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# params_check.sh [TOP]: the FI_SRD_* parameters the provider defines
# (fi_info -p srd -e, from the one table in prov/srd/src/fi/srd_params.c)
# against the two places that document them: README.md's parameter table
# and fi_srd(7)'s RUNTIME PARAMETERS.  Fails, naming the parameter, when
# one lacks an entry, documents a parameter the provider does not have,
# or gives another default or range.  Needs FI_PROVIDER_PATH to find the build.
set -u
top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
readme=$top/README.md
man=$top/man/fi_srd.7
command -v fi_info >/dev/null || { echo "SKIP: no fi_info"; exit 77; }

# Debian's fi_info is not sanitized: a provider built with
# --enable-sanitize needs the sanitizer runtimes loaded first (as
# contrib/test.sh does for fi_pingpong), and fi_info's own leaks are
# libfabric's, not ours.  Bounded: a provider that hangs fails the check.
so=${FI_PROVIDER_PATH:+$FI_PROVIDER_PATH/libsrd-fi.so}
pre=()
if [ -n "$so" ] && readelf -d "$so" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
	pre=(env LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
	     ASAN_OPTIONS=detect_leaks=0)
fi
fi_info_run() { timeout 60 "${pre[@]}" fi_info "$@"; }

# NAME<TAB>DEFAULT<TAB>RANGE, from the provider
prov=$(fi_info_run -p srd -e 2>/dev/null | awk '
	/^# FI_SRD_[A-Z0-9_]*:/ { name = $2; sub(/:$/, "", name); next }
	name != "" && /\(default: [^)]*\)$/ {
		d = $0; sub(/.*\(default: /, "", d); sub(/\)$/, "", d)
		r = ""
		if (match($0, /\(range: [^)]*\)/)) {
			r = substr($0, RSTART + 8, RLENGTH - 9); gsub(/, */, ",", r) }
		print name "\t" d "\t" r; name = "" }')
[ -n "$prov" ] || { echo "FAIL: fi_info -p srd -e lists no FI_SRD_ parameter"; exit 1; }

# the same, from README's table: | `FI_SRD_X` | default | range | ... |
doc_readme=$(awk -F'|' '$2 ~ /^ `FI_SRD_[A-Z0-9_]*` $/ {
	n = $2; gsub(/[ `]/, "", n); d = $3; gsub(/^ +| +$/, "", d)
	r = $4; gsub(/^ +| +$/, "", r); gsub(/, */, ",", r)
	print n "\t" d "\t" r }' "$readme")

# the same, from the man page: ".TP / .B FI_SRD_X ... Range: R. Default: V"
doc_man=$(awk '
	/^\.SH RUNTIME PARAMETERS/ { in_sec = 1; next }
	/^\.SH / { in_sec = 0 }
	!in_sec { next }
	/^\.TP/ { tp = 1; next }
	tp && /^\.B FI_SRD_/ { name = $2; tp = 0; r = ""; next }
	{ tp = 0 }
	name != "" && /^Range: / {
		r = $0; sub(/^Range: /, "", r); gsub(/\\-/, "-", r)
		sub(/\.$/, "", r); gsub(/, */, ",", r) }
	name != "" && /^Default: / {
		d = $2; gsub(/\\-/, "-", d); sub(/[.,]$/, "", d)
		print name "\t" d "\t" r; name = "" }' "$man")

fail=0
check() {	# check WHERE LIST: every provider parameter there, same default and range
	local where=$1 list=$2 name def range doc ddef drange
	while IFS=$'\t' read -r name def range; do
		doc=$(awk -F'\t' -v n="$name" '$1 == n { print; exit }' <<<"$list")
		IFS=$'\t' read -r _ ddef drange <<<"$doc"
		if [ -z "$doc" ]; then
			echo "FAIL: $name is not documented in $where"
			fail=1
			continue
		fi
		if [ "${ddef%% *}" != "${def%% *}" ] && [ "$ddef" != "$def" ]; then
			echo "FAIL: $name: default $def, but $where says $ddef"
			fail=1
		fi
		if [ "$drange" != "$range" ]; then
			echo "FAIL: $name: range $range, but $where says ${drange:-nothing}"
			fail=1
		fi
	done <<<"$prov"
	while IFS=$'\t' read -r name _; do
		[ -n "$name" ] || continue
		grep -q "^$name"$'\t' <<<"$prov" || {
			echo "FAIL: $where documents $name, which the provider does not define"
			fail=1; }
	done <<<"$list"
}
check README.md "$doc_readme"
check "fi_srd(7)" "$doc_man"
# A value out of range is refused with a warning that names the
# parameter, the value and what is used instead; so is a string that is
# not one of its choices.
refused() {	# refused VAR=VALUE... EXPECTED-TEXT
	local out want=${*: -1}
	out=$(export "${@:1:$#-1}" FI_LOG_LEVEL=warn FI_LOG_PROV=srd; fi_info_run -p srd -l 2>&1 >/dev/null)
	if ! grep -qF "$want" <<<"$out"; then
		echo "FAIL: ${*:1:$#-1} logged no \"$want\":"
		echo "$out" | head -5
		fail=1
	fi
}
refused FI_SRD_PATHS=999 "FI_SRD_PATHS=999 refused (1 to 256); using 16"
refused FI_SRD_RDV_WINDOW=100 "FI_SRD_RDV_WINDOW=100 refused (at least 4096); using 8388608"
refused FI_SRD_WIRE=ib "FI_SRD_WIRE=ib refused (auto,udp,verbs); using auto"
refused FI_SRD_PORT_LOW_RANGE=70000 "FI_SRD_PORT_LOW_RANGE=70000 refused (0 to 65535); using 0"
refused FI_SRD_PORT_LOW_RANGE=40010 FI_SRD_PORT_HIGH_RANGE=40000 \
	"FI_SRD_PORT_LOW_RANGE=40010 FI_SRD_PORT_HIGH_RANGE=40000 refused (low above high); using 0 0 (no port range)"
refused FI_SRD_PORT_HIGH_RANGE=40000 \
	"FI_SRD_PORT_LOW_RANGE=0 FI_SRD_PORT_HIGH_RANGE=40000 refused (the range needs both"
# fi_getinfo says at debug level which interfaces it skips and why.
out=$(export FI_SRD_IFACE=srd_no_such_if FI_LOG_LEVEL=debug FI_LOG_PROV=srd
      fi_info_run -p srd 2>&1 >/dev/null)
if ! grep -qF "interface lo (127.0.0.1:0) skipped: not in FI_SRD_IFACE" <<<"$out"; then
	echo "FAIL: FI_SRD_IFACE leaving lo out is not logged at debug level"
	fail=1
fi
n=$(wc -l <<<"$prov")
[ $fail -eq 0 ] && echo "PASS: $n FI_SRD_* parameters, README.md and fi_srd(7) agree with fi_info -e (defaults and ranges); out-of-range values refused with a warning"
exit $fail
