#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sft_check.sh: what "make check" runs: the whole sft suite against srd
# on loopback (the environment comes from Makefile.am), SKIP (77) when
# the provider did not build.
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -e "${FI_PROVIDER_PATH:-.}/libsrd-fi.so" ]; then
	echo "SKIP: libsrd-fi.so not found in FI_PROVIDER_PATH"
	exit 77
fi
exec "$here/sft_suite.sh" -p srd ${SFT_QUICK:+--quick}
