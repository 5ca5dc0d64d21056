#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# layers_check.sh: what the build's include paths cannot see.
#  1. No file of prov/srd/src includes a project header by a path
#     ("../fi/srd.h"): the per-layer include paths (Makefile.am) are the
#     only way in, so a layer cannot reach one above it.
#  2. libsrd-fi.so exports fi_prov_ini alone and contains nothing of the
#     test library (the in-memory network, the wire seam).
# Needs SRD_TEST_BUILDDIR (make check sets it) or a build/ beside the tree.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=${SRD_TEST_BUILDDIR:-$top/build}
so=$build/.libs/libsrd-fi.so
fail=0

bad=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' \
	"$top"/prov/srd/src/*/*.[ch] 2>/dev/null)
if [ -n "$bad" ]; then
	echo "FAIL: includes by path (use the layer's include paths):"
	echo "$bad"
	fail=1
fi

[ -f "$so" ] || { echo "FAIL: no $so (build first)"; exit 1; }
exports=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }')
if [ "$exports" != "fi_prov_ini" ]; then
	echo "FAIL: libsrd-fi.so exports more than fi_prov_ini:"
	echo "$exports"
	fail=1
fi
test_syms=$(nm "$so" | grep -E 'srd_memnet|srd_wire_mem|srd_test_wire_open|__wrap_|__real_')
if [ -n "$test_syms" ]; then
	echo "FAIL: libsrd-fi.so contains test-only code:"
	echo "$test_syms" | head
	fail=1
fi
[ $fail -eq 0 ] && echo "PASS: no include by path in prov/srd/src; libsrd-fi.so exports only fi_prov_ini and holds no test code ($(nm "$so" | wc -l) symbols)"
exit $fail
