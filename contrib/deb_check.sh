#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# deb_check.sh [OUTDIR]: srd's Debian packages end to end, as CI runs them
# (a stage of contrib/test.sh):
#   1. debian/changelog's upstream version is configure.ac's;
#   2. dpkg-buildpackage -us -uc -b in a copy of the tree (the files git
#      tracks or would track), so the tree stays clean; nocheck: make
#      check is a stage of its own;
#   3. lintian: no error or warning left that debian/*.lintian-overrides
#      does not explain;
#   4. what the packages hold: the expected paths and nothing in /usr/bin
#      but srd_stat, and a libsrd-fi.so that NEEDs no libibverbs;
#   5. a clean root: an overlay over / whose writes go to a tmpfs, /proc,
#      /sys and /dev bound in, /tmp (this copy) and this tree hidden, and
#      any libsrd-fi.so already in libfabric's provider directory (a
#      "make install") removed; there dpkg -i the three packages (their
#      dependencies must be installed), check dpkg -L, run
#      debian/tests/smoke (fi_info -p srd, Debian's fi_pingpong, an
#      installed sft pair, srd_stat, the man page, the header), then
#      dpkg --purge and check that no file of theirs is left.
# OUTDIR, if given, receives the .debs, the .changes and lintian's report.
# Needs root (mount, chroot): exit 77 (a skip) otherwise.  Everything it
# mounts is unmounted, and its directory removed, on every way out.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
top=$PWD
out=${1:-}
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: deb_check.sh needs root (overlay mount, chroot)"
	exit 77
fi
for t in dpkg-buildpackage dh lintian; do
	command -v $t >/dev/null ||
		{ echo "deb_check.sh: $t missing (contrib/deps.sh)"; exit 1; }
done
jobs=$(nproc 2>/dev/null || echo 2)
tmp=$(mktemp -d /tmp/srd-deb.XXXXXX) || exit 1
root=$tmp/root

cleanup() {
	if [ -d "$root" ]; then
		umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null
	fi
	umount "$tmp/ovl" 2>/dev/null || umount -l "$tmp/ovl" 2>/dev/null
	# never remove through a mount that is still there (/dev, /sys)
	if grep -q " $tmp/" /proc/mounts; then
		echo "deb_check.sh: $tmp still has mounts; left in place" >&2
	else
		rm -rf --one-file-system "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*"; exit 1; }

# 1. one version
conf=$(sed -n 's/^AC_INIT(\[srd\], *\[\([0-9.]*\)\].*/\1/p' configure.ac)
deb=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ -n "$conf" ] && [ "${deb%-*}" = "$conf" ] ||
	fail "debian/changelog is $deb, configure.ac's version $conf"
echo "version $conf (configure.ac), package $deb"

# 2. build in a copy
src=$tmp/build/libfabric-srd-$conf
mkdir -p "$src" || exit 1
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -co --exclude-standard -z |
		tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$top" --exclude='./build*' --exclude=./.git -cf - . |
		tar -C "$src" -xf -
fi || fail "copying the tree"
start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$jobs" \
	dpkg-buildpackage -us -uc -b -Pnocheck) >"$tmp/build.log" 2>&1 ||
	{ tail -40 "$tmp/build.log"; fail "dpkg-buildpackage"; }
echo "dpkg-buildpackage -us -uc -b: $((SECONDS - start)) s"
changes=$tmp/build/libfabric-srd_${deb}_$(dpkg --print-architecture).changes
debs=()
for p in libfabric-srd libfabric-srd-dev srd-tools; do
	f=$(ls "$tmp/build/${p}_${deb}_"*.deb 2>/dev/null) ||
		fail "no package $p"
	debs+=("$f")
done

# 3. lintian: an error or warning fails (read from the report: lintian
# 2.116 exits 2 for --fail-on with --show-overrides); the overridden
# tags are shown (O:) with the reasons debian/*.lintian-overrides gives
start=$SECONDS
lintian --pedantic --display-info --show-overrides "$changes" \
	>"$tmp/lintian.txt" 2>&1
lrc=$?
grep -v "^running with root privileges" "$tmp/lintian.txt"
nbad=$(grep -c '^[EW]: ' "$tmp/lintian.txt")
echo "lintian: rc $lrc, $nbad errors or warnings," \
	"$(grep -c '^[IP]: ' "$tmp/lintian.txt") info or pedantic tags," \
	"$(grep -c '^O: ' "$tmp/lintian.txt") overridden, $((SECONDS - start)) s"
if [ -n "$out" ]; then
	mkdir -p "$out" && cp "${debs[@]}" "$changes" "$tmp/lintian.txt" "$out/"
fi
[ $lrc -eq 0 ] && [ "$nbad" -eq 0 ] || fail "lintian"

# 4. contents
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
provdir=/usr/lib/$triplet/libfabric
list() { dpkg-deb -c "$1" | awk '{ print substr($6, 2) }' | grep -v '/$'; }
expect() {	# expect DEB PATH...
	local d=$1 p
	shift
	for p in "$@"; do
		list "$d" | grep -qx "$p" || fail "$(basename "$d") lacks $p"
	done
}
expect "${debs[0]}" "$provdir/libsrd-fi.so" /usr/share/man/man7/fi_srd.7.gz
expect "${debs[1]}" /usr/include/rdma/fi_ext_srd.h \
	"/usr/lib/$triplet/pkgconfig/srd.pc"
expect "${debs[2]}" /usr/bin/srd_stat /usr/share/man/man1/srd_stat.1.gz \
	/usr/libexec/srd/sft_pingpong \
	/usr/libexec/srd/sft_pair.sh /usr/libexec/srd/sft_lib.sh
for d in "${debs[@]}"; do
	bad=$(list "$d" | grep -v '^/usr/\(lib\|include\|libexec/srd\|share\)/' |
	      grep -vx /usr/bin/srd_stat)
	[ -z "$bad" ] || fail "$(basename "$d") installs $bad"
	echo "$(basename "$d"): $(list "$d" | wc -l) files"
done
mkdir -p "$tmp/x" && dpkg-deb -x "${debs[0]}" "$tmp/x" || exit 1
readelf -d "$tmp/x$provdir/libsrd-fi.so" | grep NEEDED | grep -q ibverbs &&
	fail "the packaged libsrd-fi.so NEEDs libibverbs"
echo "libsrd-fi.so NEEDs: $(readelf -d "$tmp/x$provdir/libsrd-fi.so" |
	sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"

# 5. a clean root
start=$SECONDS
mkdir -p "$tmp/ovl" "$root" &&
mount -t tmpfs -o size=1g,mode=0755 srd-deb "$tmp/ovl" &&
mkdir "$tmp/ovl/upper" "$tmp/ovl/work" &&
mount -t overlay srd-deb-root -o "lowerdir=/,upperdir=$tmp/ovl/upper,workdir=$tmp/ovl/work" "$root" &&
mount -t proc proc "$root/proc" &&
mount --bind /sys "$root/sys" &&
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" &&
mount -t tmpfs -o mode=1777 srd-deb-tmp "$root/tmp" ||
	fail "setting up the overlay root"
case $top in
/tmp/*) ;;
*) mount -t tmpfs -o size=1m srd-deb-hide "$root$top" ||
	fail "hiding $top" ;;
esac
[ -e "$root$top/configure.ac" ] && fail "$top is visible in the root"
rm -f "$root$provdir/libsrd-fi.so"
mkdir "$root/srd-debs" &&
cp "${debs[@]}" "$top/debian/tests/smoke" "$root/srd-debs/" || exit 1
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root LANG=C.UTF-8 "$@"; }
in_root sh -c 'dpkg -i /srd-debs/*.deb' >"$tmp/dpkg.log" 2>&1 ||
	{ cat "$tmp/dpkg.log"; fail "dpkg -i (dependencies installed?)"; }
echo "installed in the clean root: $(in_root dpkg-query -W \
	-f='${Package} ${Version}, ' libfabric-srd libfabric-srd-dev srd-tools)"
in_root dpkg -L libfabric-srd libfabric-srd-dev srd-tools |
	sort -u >"$tmp/files" || exit 1
for p in "$provdir/libsrd-fi.so" /usr/bin/srd_stat \
	 /usr/libexec/srd/sft_pingpong /usr/include/rdma/fi_ext_srd.h; do
	grep -qx "$p" "$tmp/files" || fail "dpkg -L does not list $p"
done
in_root timeout 300 /srd-debs/smoke || fail "the installed packages"
in_root dpkg --purge srd-tools libfabric-srd-dev libfabric-srd \
	>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg --purge"; }
left=0
while read -r f; do
	if [ -f "$root$f" ] || [ -L "$root$f" ]; then
		echo "left after purge: $f"
		left=1
	fi
done <"$tmp/files"
[ $left -eq 0 ] || fail "files left after dpkg --purge"
echo "purged: none of their $(wc -l <"$tmp/files") paths' files left" \
	"($((SECONDS - start)) s in the clean root)"
echo "PASS"
