#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/patches.sh: the series (O_NODE, the LSM hook at a magic link's jump and its
# kselftest) applies to Debian's linux-source-6.1 as it is today, one patch at a time, and
# passes the kernel's own checkpatch.pl.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$tree" --strip-components=1 \
	linux-source-6.1/fs linux-source-6.1/include linux-source-6.1/security \
	linux-source-6.1/MAINTAINERS linux-source-6.1/tools/testing/selftests/Makefile \
	linux-source-6.1/arch/alpha/include \
	linux-source-6.1/arch/parisc/include linux-source-6.1/arch/sparc/include \
	linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
	linux-source-6.1/scripts/const_structs.checkpatch

for p in kernel-config/patches/*.patch; do
	check "$(basename "$p") applies with patch -p1" \
		patch -d "$tree" -p1 --batch --forward --fuzz=0 --no-backup-if-mismatch -s -i "$PWD/$p"
	check "$(basename "$p") passes checkpatch.pl" \
		sh -c 'cd / && perl "$1" --no-tree --quiet - <"$2"' sh "$tree/scripts/checkpatch.pl" "$PWD/$p"
done
done_testing
