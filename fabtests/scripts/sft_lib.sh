# sft_lib.sh: helpers the sft_*/srd_* scripts source ("$here/sft_lib.sh").
# Defines functions only; sets nothing and runs nothing.

# sft_find_bindir PROGRAM...: sets bindir to the directory holding the
# sft programs, or exits 1 naming what is missing.  $SFT_BINDIR if set,
# else the first that has the first PROGRAM of: fabtests/ next to the
# scripts (an in-tree build), build/fabtests (a build directory),
# $prefix/bin (installed scripts live in $prefix/share/PACKAGE), $PATH.
sft_find_bindir() {
	local here d p
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	bindir=${SFT_BINDIR:-}
	if [ -z "$bindir" ]; then
		for d in "$here/.." "$here/../../build/fabtests" \
			 "$here/../../bin" \
			 "$(dirname "$(command -v "$1" 2>/dev/null || echo .)")"; do
			[ -x "$d/$1" ] && { bindir=$(cd "$d" && pwd); break; }
		done
		bindir=${bindir:-$here/..}
	fi
	for p in "$@"; do
		[ -x "$bindir/$p" ] && continue
		echo "$p not found in $bindir (set SFT_BINDIR)" >&2
		exit 1
	done
}

# sft_usage: prints the calling script's header comment (line 2 up to
# "set -u") to stderr and exits 2.
sft_usage() {
	sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}
