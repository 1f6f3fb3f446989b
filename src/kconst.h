/* SPDX-License-Identifier: GPL-2.0 */
/* kconst.h - the kernel's #define values nodefd reads, by kernel release (kconst.c) */
#ifndef __NODEFD_KCONST_H
#define __NODEFD_KCONST_H

#include <stddef.h>
#include <linux/types.h>

#include "nodefd.h"

struct btf;

#define KCONST_ERAS 3

/**
 * struct kconst_def - one #define of the kernel's and its value by release
 * @name: the kernel's name for it.
 * @headers: the files of the kernel's source that define it, separated by
 *	spaces (it moved between them): where tests/host/kconst.sh looks.
 * @offset: its field in struct nodefd_kconst.
 * @size: that field's size.
 * @era: values by release: @since is KV(major, minor), 0 for the first;
 *	an unused era has @since 0 and comes after the used ones.
 */
struct kconst_def {
	const char *name;
	const char *headers;
	size_t offset;
	size_t size;
	struct {
		unsigned int since;
		__u64 value;
	} era[KCONST_ERAS];
};

const struct kconst_def *kconst_defs(size_t *n);

/* The enumerator @name in @btf: 0 with *value set, or -ENOENT. */
int kconst_btf_enum(const struct btf *btf, const char *name, long long *value);

/*
 * @d's value on the kernel of release @version with BTF @btf (NULL: none read): where it
 * came from, "btf" or "version".
 */
const char *kconst_value(const struct kconst_def *d, const struct btf *btf, unsigned int version,
			 __u64 *value);

/* Every value for the kernel of release @version with BTF @btf (may be NULL). */
void kconst_resolve(const struct btf *btf, unsigned int version, struct nodefd_kconst *k);

/* "7.2.13+deb14-cloud-amd64" -> KV(7, 2): 0, or -EINVAL. */
int kconst_version_parse(const char *release, unsigned int *version);

/* The running kernel's release, from uname(2): 0 or -errno. */
int kconst_running_version(unsigned int *version);

#endif /* __NODEFD_KCONST_H */
