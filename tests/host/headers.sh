#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/headers.sh: every header of bpf/ includes what it uses. Each is compiled alone,
# with the BPF flags of the Makefile (warnings are errors), against bpf/kernel_types.h; and the
# check itself is shown to fail on a header that uses a type it does not include.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/vmlinux" "$work/bad"
cp bpf/kernel_types.h "$work/vmlinux/vmlinux.h"
# The Makefile's own flags, so that this test follows them.
flags=$(make -s -n BUILD="$work" "$work/nodefd.bpf.o" 2>/dev/null |
	sed -n 's/^clang \(.*\) -c bpf\/nodefd.bpf.c.*/\1/p')

# alone DIR HEADER: compiles a file that includes only HEADER, from DIR first.
alone()
{
	printf '#include "%s"\n' "$2" >"$work/alone.c"
	# shellcheck disable=SC2086 # the flags are words
	clang $flags -I"$1" -Ibpf -fsyntax-only "$work/alone.c"
}

check "the Makefile's BPF flags are read" test -n "$flags"
for h in bpf/*.h; do
	check "$h compiles alone" alone bpf "$(basename "$h")"
done
printf 'static __always_inline __u32 f(void) { return 0; }\n' >"$work/bad/uses_types.bpf.h"
# The check can fail: a header that uses __u32 and __always_inline and includes nothing.
fails_alone() { ! alone "$@" 2>/dev/null; }
check "a header that includes nothing it uses fails alone" \
	fails_alone "$work/bad" uses_types.bpf.h
done_testing
