#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# verbs_hw_check.sh [BUILD_DIR] [-u UPSTREAM_FABTESTS_BINDIR]
#
# The verbs wire on a real RDMA device (RoCE, InfiniBand, EFA's UD), for
# a machine that has one; prints SKIP with the reason and exits 77 where
# none is usable (this project's build machines and CI have none).  On
# one device port, loopback through the NIC:
#   1. the wire contract tests against the device (srd_test_wire,
#      wire_verbs_hw: datagrams intact on every path, oversize, the fd),
#   2. the RMA and atomic unit tests with FI_SRD_WIRE=verbs,
#   3. the sft suite (two processes) with FI_SRD_WIRE=verbs,
#   4. Debian's fi_pingpong (msg and tagged, data checked; it exchanges
#      names over its own TCP connection),
#   5. with -u, libfabric's own fabtests pairwise (upstream_fabtests.sh -E).
# Select the device with FI_SRD_VERBS_DEVICE (and FI_SRD_VERBS_GID_INDEX).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
upstream=
while [ $# -gt 0 ]; do
	case $1 in
	-u) upstream=$2; shift 2 ;;
	*) build=$(cd "$1" && pwd); shift ;;
	esac
done
export FI_PROVIDER_PATH=${VERBS_HW_PROVIDER_PATH:-$build/.libs} FI_PROVIDER=srd FI_SRD_WIRE=verbs
unset FI_SRD_IFACE
command -v ibv_devices >/dev/null && ibv_devices
if ! out=$(fi_info -p srd 2>&1); then
	echo "SKIP: no usable RDMA port (FI_SRD_WIRE=verbs fi_info -p srd: $out;" \
	     "libibverbs lists $(ls /sys/class/infiniband 2>/dev/null | wc -l)" \
	     "device(s) in /sys/class/infiniband)"
	exit 77
fi
echo "$out" | grep -E "fabric|domain"
passed=0 failed=0
step() {	# name command...
	local name=$1 start rc
	shift
	echo "=== $name"
	start=$(date +%s)
	"$@"
	rc=$?
	echo "=== $name: $([ $rc -eq 0 ] && echo PASS || echo FAIL) ($(( $(date +%s) - start ))s)"
	[ $rc -eq 0 ] && passed=$((passed + 1)) || failed=$((failed + 1))
}
pingpong() {	# msg|tagged
	timeout 120 fi_pingpong -p srd -e rdm -m "$1" -c -S all -I 100 \
		>/tmp/vhw-s.$$ 2>&1 &
	local srv=$! crc src
	sleep 1
	timeout 120 fi_pingpong -p srd -e rdm -m "$1" -c -S all -I 100 127.0.0.1
	crc=$?
	wait $srv
	src=$?
	tail -3 /tmp/vhw-s.$$ | sed 's/^/  server: /'
	rm -f /tmp/vhw-s.$$
	[ $crc -eq 0 ] && [ $src -eq 0 ]
}
contract() {	# all three must run (a SKIP here is a failure)
	local out
	out=$("$build/prov/srd/test/srd_test_wire" --filter 'wire_verbs_hw/*' \
		--verbose 2>&1)
	echo "$out" | grep -E "wire_verbs_hw|Synthesis"
	echo "$out" | grep -q "Tested: 3 | Passing: 3 | Failing: 0"
}
step "wire contract on the device" contract
step "RMA and atomic unit tests over verbs" \
	"$build/prov/srd/test/srd_test_rma" -j1
step "sft suite over verbs" env SFT_BINDIR="$build/fabtests" \
	"$top/fabtests/scripts/sft_suite.sh" -p srd
step "fi_pingpong msg over verbs" pingpong msg
step "fi_pingpong tagged over verbs" pingpong tagged
[ -n "$upstream" ] && step "upstream fabtests over verbs" \
	"$top/fabtests/scripts/upstream_fabtests.sh" "$upstream" -E
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
