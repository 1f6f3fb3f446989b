/* SPDX-License-Identifier: GPL-2.0 */
/* compat.bpf.h - older shapes of the kernel structures that changed since 6.1 */
#ifndef __NODEFD_COMPAT_BPF_H
#define __NODEFD_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

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
 *   overlayfs lower layer   ovl_inode.lowerpath        ovl_inode.oe->__lowerstack[0] (6.5)
 *   a mount's id mapping    vfsmount.mnt_userns        vfsmount.mnt_idmap (6.3)
 *   a superblock's mounts   s_mounts, list_heads       s_mounts -> mount.mnt_next_for_sb (6.18)
 *   a path's kernel copy    filename.name              the same, in an anonymous member (7.2)
 *   a kernfs node's parent  kernfs_node.parent         kernfs_node.__parent, RCU (6.15)
 *
 * overlayfs is often a module: its types are in the module's BTF, which libbpf reads when the
 * module is loaded before nodefd. Without it both overlay flavours are absent, the guards are
 * false, and an overlay directory's ACL counts as unknown (fail closed).
 */

/*
 * The kernel's copy of a path. Since 7.2 its name is in an anonymous struct __filename_head,
 * which a header made from BTF cannot declare: read through this flavour, which CO-RE matches
 * into the anonymous member.
 */
struct filename___any {
	const char *name;
} __attribute__((preserve_access_index));

/* Up to 6.14: a kernfs node's (a cgroup directory's) parent, before it became __parent. */
struct kernfs_node___v61 {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

/* 6.15 and later, read through a flavour too: a header made from an older kernel lacks it. */
struct kernfs_node___v615 {
	struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

/* Up to 6.17: a superblock's mounts are a list of list_heads in struct mount. */
struct super_block___v61 {
	struct list_head s_mounts;
} __attribute__((preserve_access_index));

struct mount___v61 {
	struct list_head mnt_instance;
} __attribute__((preserve_access_index));

/* 6.18 and later: a superblock's mounts are a list of struct mount, no longer of list_heads. */
struct super_block___sb_list {
	struct mount *s_mounts;
} __attribute__((preserve_access_index));

struct mount___sb_list {
	struct mount *mnt_next_for_sb;
} __attribute__((preserve_access_index));

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

struct vfsmount___v61 {
	struct user_namespace *mnt_userns;
} __attribute__((preserve_access_index));

struct vfsmount___v63 {
	void *mnt_idmap;
} __attribute__((preserve_access_index));

extern const void nop_mnt_idmap __ksym __weak;

/*
 * is_idmapped_mnt(): is @vm an idmapped mount? Its owners then reach generic_permission()
 * through the mount's id mapping, which nodefd does not apply: the caller treats such a
 * mount's directories as unknown (fail closed). Up to 6.2 the mapping is a user namespace that
 * differs from the superblock's own (a filesystem mounted inside a user namespace carries that
 * namespace in both, and is not idmapped); since 6.3 it is any struct mnt_idmap but the nop one.
 */
static __always_inline bool mount_idmapped(struct vfsmount *vm)
{
	if (bpf_core_field_exists(struct vfsmount___v63, mnt_idmap))
		return &nop_mnt_idmap &&
		       BPF_CORE_READ((struct vfsmount___v63 *)vm, mnt_idmap) != &nop_mnt_idmap;
	if (bpf_core_field_exists(struct vfsmount___v61, mnt_userns))
		return (void *)BPF_CORE_READ((struct vfsmount___v61 *)vm, mnt_userns) !=
		       (void *)BPF_CORE_READ(vm, mnt_sb, s_user_ns);
	return false;
}

struct ovl_path___nodefd {
	struct dentry *dentry;
} __attribute__((preserve_access_index));

struct ovl_entry___nodefd {
	unsigned int __numlower;
	struct ovl_path___nodefd __lowerstack[];
} __attribute__((preserve_access_index));

struct ovl_inode___v61 {
	struct inode vfs_inode;
	struct dentry *__upperdentry;
	struct ovl_path___nodefd lowerpath;
} __attribute__((preserve_access_index));

struct ovl_inode___v65 {
	struct inode vfs_inode;
	struct dentry *__upperdentry;
	struct ovl_entry___nodefd *oe;
} __attribute__((preserve_access_index));

/*
 * ovl_i_path_real(): the inode an overlay inode stands for, the upper one if it was copied up,
 * else the top lower one. NULL if unknown (no overlay BTF, or not yet set up).
 */
static __always_inline struct inode *ovl_real_inode(struct inode *inode)
{
	struct dentry *real = NULL;

	if (bpf_core_field_exists(struct ovl_inode___v65, oe)) {
		struct ovl_inode___v65 *oi =
			(void *)inode - bpf_core_field_offset(struct ovl_inode___v65, vfs_inode);
		struct ovl_entry___nodefd *oe;

		real = BPF_CORE_READ(oi, __upperdentry);
		oe = BPF_CORE_READ(oi, oe);
		if (!real && oe && BPF_CORE_READ(oe, __numlower))
			real = BPF_CORE_READ(oe, __lowerstack[0].dentry);
	} else if (bpf_core_field_exists(struct ovl_inode___v61, lowerpath)) {
		struct ovl_inode___v61 *oi =
			(void *)inode - bpf_core_field_offset(struct ovl_inode___v61, vfs_inode);

		real = BPF_CORE_READ(oi, __upperdentry);
		if (!real)
			real = BPF_CORE_READ(oi, lowerpath.dentry);
	}
	return real ? BPF_CORE_READ(real, d_inode) : NULL;
}

/*
 * 6.2 and later: a kernel address as a read-only typed pointer, whose fields are plain loads
 * (the verifier makes each one load with an exception-table entry; the call itself is
 * rewritten to a move). A bpf_probe_read_kernel() costs about 100 instructions. 6.1 has no
 * such kfunc and refuses a program that calls one even in dead code, so the programs that do
 * are separate ones (their names end in ___cast), loaded where the kernel has it (loader.c).
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#define CAST(type, p)                                                                           \
	((type *)bpf_rdonly_cast((const void *)(p), (__u32)bpf_core_type_id_kernel(type)))

#endif /* __NODEFD_COMPAT_BPF_H */
