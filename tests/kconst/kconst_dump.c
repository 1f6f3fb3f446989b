// SPDX-License-Identifier: GPL-2.0
/*
 * kconst_dump.c - the kernel #define values nodefdctl would give the BPF programs on a kernel
 * of release VERSION (with BTF from an ELF vmlinux, if named): one "NAME VALUE SOURCE HEADERS"
 * line each, VALUE in hex. tests/host/kconst.sh checks each against that kernel's source.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>

#include "kconst.h"

int main(int argc, char **argv)
{
	const struct kconst_def *defs;
	struct btf *btf = NULL;
	unsigned int version;
	size_t n;

	if (argc < 2 || argc > 3 || kconst_version_parse(argv[1], &version)) {
		fprintf(stderr, "usage: kconst_dump VERSION [VMLINUX]\n");
		return 2;
	}
	if (argc == 3) {
		btf = btf__parse_elf(argv[2], NULL);
		if (!btf) {
			fprintf(stderr, "kconst_dump: %s: no BTF: %s\n", argv[2], strerror(errno));
			return 1;
		}
	}
	defs = kconst_defs(&n);
	for (size_t i = 0; i < n; i++) {
		const char *src;
		__u64 v;

		src = kconst_value(&defs[i], btf, version, &v);
		printf("%s 0x%llx %s %s\n", defs[i].name, (unsigned long long)v, src, defs[i].headers);
	}
	btf__free(btf);
	return 0;
}
