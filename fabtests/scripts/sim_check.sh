#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sim_check.sh: what "make check" runs of the fabric simulator
# (fabtests/sim/srd_sim) on small fabrics, asserting properties that hold
# for the fixed seeds (runs are deterministic, in virtual time):
#   - the same seed gives the same table, another seed a different one;
#   - every message of a permutation, an all-to-all and a 32:1 incast is
#     delivered, none twice (srd_sim exits non-zero on a duplicate);
#   - a black-holed spine link loses no message when the transport
#     sprays, and is left for good ("re-routed after" is a time); with
#     one path the flows hashed onto it stay stuck (lost > 0): the check
#     fails if the fault does nothing;
#   - spraying beats one path per flow on a permutation (ECMP collisions);
#   - a permutation on open sessions (--warm-us) counts only its own
#     messages and takes less time than a cold one; one without hashing
#     (--ecmp spread) delivers every message.
# The full scenarios and their report: fabtests/sim/srd_sim_report.sh.
set -u
build=${SRD_TEST_BUILDDIR:-.}
sim=$build/fabtests/sim/srd_sim
if [ ! -x "$sim" ]; then
	echo "FAIL: $sim not built"
	exit 1
fi
rc=0
fail() { echo "FAIL: $*"; rc=1; }
# column N (1-based, after the leading |) of the table row matching RE
col() { awk -F'|' -v re="$2" -v n="$1" '$0 ~ re { gsub(/ /, "", $(n + 1)); print $(n + 1); exit }' <<<"$3"; }
# the table without its wall-clock and memory columns
table() { grep '^| [0-9a-z]' <<<"$1" | awk -F'|' '{ for (i = 2; i <= NF - 3; i++) printf "%s|", $i; print "" }'; }

echo "== permutation, 64 hosts, seed 7, twice; and seed 8"
a=$("$sim" perm --sizes 64 --msgs 8 --seed 7) || fail "perm run (seed 7)"
b=$("$sim" perm --sizes 64 --msgs 8 --seed 7) || fail "perm rerun (seed 7)"
c=$("$sim" perm --sizes 64 --msgs 8 --seed 8) || fail "perm run (seed 8)"
echo "$a" | grep '^|'
[ "$(table "$a")" = "$(table "$b")" ] || fail "the same seed gave different results"
[ "$(table "$a")" != "$(table "$c")" ] || fail "another seed gave the same results"
for m in spray16 single; do
	[ "$(col 12 "$m" "$a")" = 0 ] || fail "perm $m lost messages"
done
spray=$(col 6 spray16 "$a"); single=$(col 6 single "$a")
awk -v s="${spray% %}" -v o="${single% %}" 'BEGIN { exit !(s + 0 > o + 0) }' ||
	fail "spraying ($spray of the limit) did not beat one path ($single)"

echo "== the same on open sessions (--warm-us), and without ECMP hashing"
w=$("$sim" perm --sizes 64 --msgs 8 --seed 7 --spray-only --warm-us 50) ||
	fail "warm perm run"
s=$("$sim" perm --sizes 64 --msgs 8 --seed 7 --spray-only --warm-us 50 \
	--ecmp spread) || fail "perm run without hashing"
echo "$w" | grep '^| [0-9]'
echo "$s" | grep '^| [0-9]'
for r in "$w" "$s"; do
	[ "$(col 12 spray16 "$r")" = 0 ] || fail "lost messages"
	# the warm-up messages are in no count and no bound
	[ "$(col 3 spray16 "$r")" = "$(col 3 spray16 "$a")" ] ||
		fail "message count differs from the cold run's"
	[ "$(col 5 spray16 "$r")" = "$(col 5 spray16 "$a")" ] ||
		fail "ideal time differs from the cold run's"
done
# the handshake's two round trips are out of the warm run's time
cold=$(col 4 spray16 "$a"); warm=$(col 4 spray16 "$w")
[ "$warm" -lt "$cold" ] ||
	fail "warm run ($warm us) not shorter than cold ($cold us)"

echo "== all-to-all, 32 hosts"
a=$("$sim" a2a --sizes 32 --seed 3) || fail "a2a run"
echo "$a" | grep '^|'
for m in spray16 single; do
	[ "$(col 12 "$m" "$a")" = 0 ] || fail "a2a $m lost messages"
	[ "$(col 3 "$m" "$a")" = 992 ] || fail "a2a $m: not 32 x 31 messages"
done

echo "== incast 32:1, 64 hosts"
a=$("$sim" incast --hosts 64 --sizes 32 --msg-kb 64 --seed 5) || fail "incast run"
echo "$a" | grep '^|'
for m in spray16 single; do
	[ "$(col 11 "$m" "$a")" = 0 ] || fail "incast $m lost messages"
done

echo "== black hole on a spine link, 64 hosts"
a=$("$sim" fail --hosts 64 --msgs 16 --fault blackhole --fail-at-us 50 \
	--end-ms 20 --seed 2) || fail "fail run"
echo "$a" | grep '^|'
[ "$(col 4 spray16 "$a")" = 0 ] || fail "spraying lost messages to a black hole"
[ "$(col 6 spray16 "$a")" != never ] || fail "spraying never left the black hole"
[ "$(col 4 single "$a")" != 0 ] || fail "the black hole did not stop a single-path flow (fault not applied?)"
[ "$(col 14 spray16 "$a")" != 0 ] || fail "the dead link dropped nothing"
exit $rc
