#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# verbs_emu_check.sh: what "make check" runs over the verbs wire where no
# RDMA device exists: the provider built with the emulated device
# (libsrdemu-fi.so: UD QPs carried over 127.0.0.1, see
# prov/srd/test/srd_verbs_emu.c) with FI_SRD_WIRE=verbs runs
#   - the RMA and atomic unit tests (srd_test_rma, and srd_test_rma_resp:
#     answers copy read data in buffers of the MTU), on a RoCE v2 port
#     of 4 KiB MTU and an InfiniBand port of 1 KiB MTU (smaller atomics;
#     with SFT_QUICK set, this one only),
#   - the sft suite (quick), endpoints in two processes.
# SKIP (77) when the build has no verbs wire.  It checks the verbs wire's
# code and its place in the provider, not a device: see
# contrib/verbs_hw_check.sh for real hardware.
set -u
emu=${SRD_EMU_PROVIDER_PATH:-}
build=${SRD_TEST_BUILDDIR:-}
if [ -z "$emu" ] || [ ! -e "$emu/libsrdemu-fi.so" ]; then
	echo "SKIP: libsrdemu-fi.so not built (no verbs wire in this build)"
	exit 77
fi
export FI_PROVIDER_PATH=$emu FI_SRD_WIRE=verbs
rc=0
links=("roce 4096" "ib 1024")
# quick (the sanitized run): the InfiniBand port of 1 KiB MTU only
[ -n "${SFT_QUICK:-}" ] && links=("ib 1024")
for link in "${links[@]}"; do
	set -- $link
	for t in srd_test_rma srd_test_rma_resp; do
		echo "== $t over the verbs wire ($1, MTU $2)"
		SRD_EMU_LINK=$1 SRD_EMU_MTU=$2 "$build/prov/srd/test/$t" \
			-j1 2>&1 | tail -3 || rc=1
		[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	done
done
echo "== sft suite over the verbs wire (roce, MTU 4096)"
"$(dirname "$0")/sft_suite.sh" -p srd --quick || rc=1
exit $rc
