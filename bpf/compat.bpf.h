/* SPDX-License-Identifier: GPL-2.0 */
/* compat.bpf.h - older shapes of the kernel structures that changed since 6.1 */
#ifndef __NODEFD_COMPAT_BPF_H
#define __NODEFD_COMPAT_BPF_H

/*
 * CO-RE flavours: libbpf drops the "___suffix" when it matches a local type against the
 * kernel's, so a read through one of these is relocated to the kernel's own struct. Each use
 * is guarded with bpf_core_field_exists() on a flavour, so that on any kernel only the branch
 * that matches it is kept, and the source compiles against a header generated from any of them.
 *
 *   what                    6.1                        6.12
 *   inode ACL fetch method  i_op->get_acl              i_op->get_inode_acl (6.2)
 *   effective capabilities  cap_effective.cap[2] (u32) cap_effective.val (u64, 6.3):
 *                           read as 8 bytes, no flavour needed (little-endian)
 *   file->f_path            struct path                const struct path (6.11): cast
 */

struct inode_operations___v61 {
	void *get_acl;
} __attribute__((preserve_access_index));

struct inode_operations___v62 {
	void *get_inode_acl;
} __attribute__((preserve_access_index));

/*
 * The method the kernel's check_acl() fetches an uncached ACL with: ->get_acl up to 6.1,
 * ->get_inode_acl since 6.2, where ->get_acl is a dentry-based method for setxattr and
 * friends that a filesystem may have without the other.
 */
static __always_inline void *inode_acl_method(struct inode *inode)
{
	const void *iop = BPF_CORE_READ(inode, i_op);

	if (bpf_core_field_exists(struct inode_operations___v62, get_inode_acl))
		return BPF_CORE_READ((struct inode_operations___v62 *)iop, get_inode_acl);
	return BPF_CORE_READ((struct inode_operations___v61 *)iop, get_acl);
}

#endif /* __NODEFD_COMPAT_BPF_H */
