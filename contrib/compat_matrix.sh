#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# compat_matrix.sh PREFIX...: builds srd (provider, unit tests, the sft
# programs) with -Werror against each libfabric named, one PREFIX per
# version: a libfabric install, or just a copy of a release's include/
# directory (PREFIX/include/rdma/fabric.h).  For a headers-only PREFIX
# the build links against the system libfabric, which is enough to prove
# it compiles and links; running needs a matching runtime
# (--with-libfabric=PREFIX).  configure's verdict (the API the headers
# declare, the features found) is printed per version.
#
# A local check (CI has only Debian's 1.17 and cannot fetch): get the
# headers from libfabric's public source, e.g.
#   git -C libfabric archive v2.0.0 include | tar -x -C /tmp/lf-2.0.0
# then: contrib/compat_matrix.sh /tmp/lf-1.18.0 /tmp/lf-2.0.0 ...
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null) || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
ok=0 bad=0
for prefix in "$@"; do
	prefix=$(cd "$prefix" && pwd) || { bad=$((bad + 1)); continue; }
	dir=$(mktemp -d /tmp/srd-compat.XXXXXX)
	if [ -f "$prefix/lib/pkgconfig/libfabric.pc" ]; then
		how=(--with-libfabric="$prefix")
	else
		how=(CPPFLAGS="-I$prefix/include")
	fi
	start=$(date +%s)
	if (cd "$dir" && "$top/configure" -q "${how[@]}" \
		CFLAGS="-O2 -g -Werror" >log 2>&1 &&
	    make -j"$jobs" >>log 2>&1 &&
	    make -j"$jobs" check TESTS= >>log 2>&1); then
		api=$(sed -n 's/^#define SRD_FI_HEADERS_API "\(.*\)"$/\1/p' "$dir/config.h")
		feats=$(grep -E '^#define HAVE_(DECL|STRUCT)_FI_[A-Z_]* 1' "$dir/config.h" |
			sed -E 's/^#define HAVE_(DECL_|STRUCT_)?//; s/ 1$//' | tr '\n' ' ')
		warn=$(grep -c 'warning:' "$dir/log")
		echo "OK   $prefix: API $api, ${warn} warnings, $(( $(date +%s) - start )) s; features: ${feats:-none}"
		ok=$((ok + 1))
		rm -rf "$dir"
	else
		echo "FAIL $prefix (log: $dir/log)"
		grep -E 'error|warning' "$dir/log" | head -10 | sed 's/^/  | /'
		bad=$((bad + 1))
	fi
done
echo "$ok built, $bad failed"
[ $bad -eq 0 ]
