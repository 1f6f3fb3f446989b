// SPDX-License-Identifier: GPL-2.0
/* kconst.c - the kernel's #define values nodefd reads, for the kernel it loads on */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/btf.h>

#include "kconst.h"

#define KV(major, minor) ((unsigned int)(major) << 16 | (unsigned int)(minor) << 8)
#define OFF(field) offsetof(struct nodefd_kconst, field), sizeof(((struct nodefd_kconst *)0)->field)

/*
 * Each value by kernel release: an era holds from its release on, until the next era's. A
 * boundary is the first release whose own source has the new value (tests/host/kconst.sh
 * checks every value against each tested kernel's source). A name the kernel's BTF has as an
 * enumerator is taken from there first.
 */
static const struct kconst_def defs[] = {
	{ "ACL_NOT_CACHED", "include/linux/fs.h", OFF(acl_not_cached),
	  { { 0, (__u64)-1 } } },
	{ "ACL_DONT_CACHE", "include/linux/fs.h", OFF(acl_dont_cache),
	  { { 0, (__u64)-3 } } },
	/* ERR_PTR(-EINVAL) */
	{ "MNT_NS_INTERNAL", "fs/mount.h", OFF(mnt_ns_internal),
	  { { 0, (__u64)-22 } } },
	/* "VFS: repack LOOKUP_ bit flags" renumbered them all. */
	{ "LOOKUP_PARENT", "include/linux/namei.h", OFF(lookup_parent),
	  { { 0, 0x0010 }, { KV(6, 15), 1 << 10 } } },
	{ "LOOKUP_OPEN", "include/linux/namei.h", OFF(lookup_open),
	  { { 0, 0x0100 }, { KV(6, 15), 1 << 16 } } },
	{ "LOOKUP_EMPTY", "include/linux/namei.h", OFF(lookup_empty),
	  { { 0, 0x4000 }, { KV(6, 15), 1 << 3 } } },
	{ "ND_JUMPED", "fs/namei.c", OFF(nd_jumped),
	  { { 0, 4 } } },
	{ "FMODE_READ", "include/linux/fs.h", OFF(fmode_read),
	  { { 0, 0x1 } } },
	{ "FMODE_WRITE", "include/linux/fs.h", OFF(fmode_write),
	  { { 0, 0x2 } } },
	{ "FMODE_EXEC", "include/linux/fs.h", OFF(fmode_exec),
	  { { 0, 0x20 } } },
	{ "FMODE_PATH", "include/linux/fs.h", OFF(fmode_path),
	  { { 0, 0x4000 } } },
	{ "SB_POSIXACL", "include/linux/fs.h include/linux/fs/super_types.h", OFF(sb_posixacl),
	  { { 0, 1 << 16 } } },
	/* "VFS: repack DENTRY_ flags" made them an enum, which BTF has, and moved this one. */
	{ "DCACHE_MOUNTED", "include/linux/dcache.h", OFF(dcache_mounted),
	  { { 0, 0x00010000 }, { KV(6, 15), 1 << 15 } } },
	{ "TS_COMPAT", "arch/x86/include/asm/thread_info.h", OFF(ts_compat),
	  { { 0, 0x0002 } } },
	{ "PF_IO_WORKER", "include/linux/sched.h", OFF(pf_io_worker),
	  { { 0, 0x00000010 } } },
};

const struct kconst_def *kconst_defs(size_t *n)
{
	*n = sizeof(defs) / sizeof(defs[0]);
	return defs;
}

int kconst_btf_enum(const struct btf *btf, const char *name, long long *value)
{
	__u32 n = (__u32)btf__type_cnt(btf);

	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_is_enum(t)) {
			const struct btf_enum *e = btf_enum(t);

			for (__u16 i = 0; i < btf_vlen(t); i++)
				if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name)) {
					*value = e[i].val;
					return 0;
				}
		} else if (btf_is_enum64(t)) {
			const struct btf_enum64 *e = btf_enum64(t);

			for (__u16 i = 0; i < btf_vlen(t); i++)
				if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name)) {
					*value = (long long)btf_enum64_value(&e[i]);
					return 0;
				}
		}
	}
	return -ENOENT;
}

const char *kconst_value(const struct kconst_def *d, const struct btf *btf, unsigned int version,
			 __u64 *value)
{
	long long v;
	int i;

	if (btf && !kconst_btf_enum(btf, d->name, &v)) {
		*value = (__u64)v;
		return "btf";
	}
	for (i = KCONST_ERAS - 1; i > 0; i--)
		if (d->era[i].since && version >= d->era[i].since)
			break;
	*value = d->era[i].value;
	return "version";
}

void kconst_resolve(const struct btf *btf, unsigned int version, struct nodefd_kconst *k)
{
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		__u64 v;

		kconst_value(&defs[i], btf, version, &v);
		if (defs[i].size == sizeof(__u64))
			memcpy((char *)k + defs[i].offset, &v, sizeof(v));
		else
			*(__u32 *)((char *)k + defs[i].offset) = (__u32)v;
	}
}

int kconst_version_parse(const char *release, unsigned int *version)
{
	unsigned int major, minor;

	if (sscanf(release, "%u.%u", &major, &minor) != 2 || major > 255 || minor > 255)
		return -EINVAL;
	*version = KV(major, minor);
	return 0;
}

int kconst_running_version(unsigned int *version)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	return kconst_version_parse(u.release, version);
}
