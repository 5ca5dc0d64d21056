#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Regenerates the build system (configure, Makefile.in).
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf -fi
