#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/btf.sh: the BPF source builds against a full header generated from each tested
# kernel's own BTF, as well as against bpf/kernel_types.h. A field that bpf/kernel_types.h
# declares but a kernel does not have (or names differently) would otherwise show only at load
# time, on that kernel; here it fails the build, naming the field.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

work=$(mktemp -d /tmp/nodefd-btf.XXXXXX)
trap 'rm -rf "$work"' EXIT

# vmlinux_of KERNEL: the ELF vmlinux that carries KERNEL's BTF.
vmlinux_of()
{
	local d

	case "$1" in
	onode)
		d=$(vmtest/build-kernel 2>/dev/null) && echo "$d/vmlinux"
		;;
	*)
		# <dir>/root/boot/vmlinuz-<abi> up to 6.x, <dir>/root/usr/lib/modules/<abi>/vmlinuz
		# since 7.x; <dir>/vmlinux either way.
		d=$(vmtest/fetch-stock "$1" 2>/dev/null) && echo "${d%/root/*}/vmlinux"
		;;
	esac
}

# build_against KERNEL: generate its vmlinux.h, build the object with it.
build_against()
{
	local k=$1 vmlinux

	vmlinux=$(vmlinux_of "$k") && [ -r "$vmlinux" ] || { echo "no vmlinux for $k"; return 1; }
	bpftool btf dump file "$vmlinux" format c >"$work/$k.h" || return 1
	echo "$(grep -c '^struct ' "$work/$k.h") structs in the $k header"
	# The kernel is built with -fms-extensions: since 7.x its structs embed anonymous ones by
	# tag, and the header dumped from its BTF says so (struct __filename_head;).
	make --no-print-directory BUILD="$work/$k" VMLINUX_H="$work/$k.h" \
		BPF_EXTRA_CFLAGS="-fms-extensions -Wno-microsoft-anon-tag" "$work/$k/nodefd.bpf.o"
}

check "bpf builds against bpf/kernel_types.h" \
	make --no-print-directory BUILD="$work/min" "$work/min/nodefd.bpf.o"
for k in onode debian12 debian13 debian13-backports sid; do
	check "bpf builds against the $k kernel's own BTF" build_against "$k"
done
done_testing
