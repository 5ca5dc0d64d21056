#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# sft_nccl_net.sh -n PLUGIN.so [-l LIBFABRIC_PREFIX] [-p "srd tcp"] [-T]
#                 [-- HARNESS_ARGS...]
#
# Builds sft_nccl_net.c (cc, libdl only) into a temporary directory and
# runs it once per provider of -p against the NCCL net plugin -n (the
# aws-ofi-nccl build of fabtests/nccl/README.md): first -P (init,
# devices, getProperties), then the two-rank traffic run (two processes;
# -T: two threads of one process).  Sets what the plugin needs on a
# machine without GPUs or EFA: OFI_NCCL_PROTOCOL=SENDRECV, FI_PROVIDER,
# loopback interfaces (FI_SRD_IFACE, FI_TCP_IFACE, unless set), and for
# tcp OFI_NCCL_EXCLUDE_TCP_IF=docker0 (the plugin drops tcp's lo domain
# by default).  -l puts LIBFABRIC_PREFIX/lib first in LD_LIBRARY_PATH
# (the runtime the plugin was built against); FI_PROVIDER_PATH is passed
# on as set (e.g. $PWD/build/.libs for the in-tree srd).  Exits non-zero
# if any run fails.  Not run by CI: it needs the plugin, built by hand.
set -u

here=$(cd "$(dirname "$0")" && pwd)
plugin='' lfprefix='' provs="srd tcp" threads=''

usage() {
	sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while getopts "n:l:p:Th" o; do
	case $o in
	n) plugin=$OPTARG ;;
	l) lfprefix=$OPTARG ;;
	p) provs=$OPTARG ;;
	T) threads=-T ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
[ -n "$plugin" ] || usage
[ -f "$plugin" ] || { echo "$0: no plugin at $plugin" >&2; exit 1; }

tmp=$(mktemp -d /tmp/sft_nccl_net.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -Wall -Wextra -pthread -o "$tmp/sft_nccl_net" \
	"$here/sft_nccl_net.c" -ldl || exit 1

[ -n "$lfprefix" ] &&
	export LD_LIBRARY_PATH="$lfprefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OFI_NCCL_PROTOCOL=SENDRECV
export FI_SRD_IFACE=${FI_SRD_IFACE:-lo} FI_TCP_IFACE=${FI_TCP_IFACE:-lo}

rc=0
for prov in $provs; do
	echo "== $prov (load: $(cut -d' ' -f1-3 /proc/loadavg))"
	excl=${OFI_NCCL_EXCLUDE_TCP_IF:-}
	[ "$prov" = tcp ] && excl=${excl:-docker0}
	for args in "-P" "$threads $*"; do
		# shellcheck disable=SC2086  # $args is a word list
		env FI_PROVIDER="$prov" ${excl:+OFI_NCCL_EXCLUDE_TCP_IF=$excl} \
			timeout 600 "$tmp/sft_nccl_net" -p "$plugin" $args ||
			{ echo "FAIL $prov: sft_nccl_net $args" >&2; rc=1; }
	done
done
exit $rc
