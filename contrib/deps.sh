#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# deps.sh: installs the Debian packages srd builds, tests and runs with.
# Idempotent; needs root (or sudo).
set -euo pipefail
pkgs=(build-essential autoconf automake libtool pkg-config
      libfabric-dev libfabric-bin libibverbs-dev libhwloc-dev
      libcriterion-dev libsodium-dev iproute2 nftables procps valgrind
      openmpi-bin libopenmpi-dev bc clang libclang-rt-14-dev iperf3
      debhelper lintian dpkg-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
