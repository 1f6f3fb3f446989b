/* SPDX-License-Identifier: GPL-2.0 */
/* perm.bpf.h - the kernel's permission model for searching a directory, as generic_permission() */
#ifndef __NODEFD_PERM_BPF_H
#define __NODEFD_PERM_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "nodefd.h"
#include "compat.bpf.h"
#include "common.bpf.h"

#define CAP_DAC_OVERRIDE 1
#define CAP_DAC_READ_SEARCH 2

#define ACL_USER_OBJ 0x01
#define ACL_USER 0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP 0x08
#define ACL_MASK 0x10
#define ACL_OTHER 0x20

/* The opener's credentials, as the permission checks need them. */
struct opener {
	__u64 groups;		/* struct group_info * */
	__u64 ids;		/* fsuid << 32 | fsgid */
	__u64 user_ns;		/* struct user_namespace * of the credentials */
	int ngroups;
	__u8 dac_search;	/* passes every directory: CAP_DAC_* in the initial user ns */
	__u8 dac_ns;		/* CAP_DAC_* in another user ns: over what it maps */
	/*
	 * Not the current task's credentials (an fd's f_cred): the ACL walk reads the current
	 * task's, so a directory whose ACL counts for them is not known (SEARCH_UNKNOWN).
	 */
	__u8 foreign;
};

/*
 * capable_wrt_inode_uidgid(): a DAC capability counts in the credentials' own user namespace,
 * over inodes whose owner and group that namespace maps; the initial one maps every id.
 */
static __always_inline void opener_caps(struct opener *o, __u64 caps, unsigned int level)
{
	o->dac_search = o->dac_ns = 0;
	if (caps & ((1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH))) {
		o->dac_search = level == 0;
		o->dac_ns = level != 0;
	}
}

static __always_inline void opener_init(struct opener *o, struct task_struct *task)
{
	/* task is a BTF pointer: plain loads, no helper calls. */
	const struct cred *cred = task->cred;
	unsigned int level = (unsigned int)cred->user_ns->level;
	__u64 caps = 0;

	/*
	 * kernel_cap_t is two u32 (cap[0] low) up to 6.2 and one u64 since 6.3: the same eight
	 * bytes on a little-endian machine, so one read of the whole field serves both.
	 */
	bpf_core_read(&caps, sizeof(caps), &cred->cap_effective);

	/* Read, not loaded: the global functions take the groups as a plain number. */
	o->groups = (__u64)BPF_CORE_READ(cred, group_info);
	o->ngroups = cred->group_info->ngroups;
	o->ids = (__u64)cred->fsuid.val << 32 | cred->fsgid.val;
	o->user_ns = (__u64)BPF_CORE_READ(cred, user_ns);
	o->foreign = 0;
	opener_caps(o, caps, level);
}

/* The same for credentials @cred that are not the current task's: every field read. */
static __always_inline void opener_of_cred(struct opener *o, const struct cred *cred)
{
	__u64 caps = 0;

	bpf_core_read(&caps, sizeof(caps), &cred->cap_effective);
	o->groups = (__u64)BPF_CORE_READ(cred, group_info);
	o->ngroups = BPF_CORE_READ(cred, group_info, ngroups);
	o->ids = (__u64)BPF_CORE_READ(cred, fsuid.val) << 32 | BPF_CORE_READ(cred, fsgid.val);
	o->user_ns = (__u64)BPF_CORE_READ(cred, user_ns);
	o->foreign = 1;
	opener_caps(o, caps, (unsigned int)BPF_CORE_READ(cred, user_ns, level));
}

/*
 * kuid_has_mapping()/kgid_has_mapping(): is kernel id @id inside one of @map's extents?
 * Extents hold global (kernel) ids in lower_first, however deep the namespace.
 */
#define UID_GID_MAP_MAX_BASE_EXTENTS 5
#define UID_GID_MAP_MAX_EXTENTS 340

/**
 * nodefd_id_mapped() - kuid_has_mapping() and kgid_has_mapping()
 * @map_ptr: a user namespace's uid_map or gid_map (struct uid_gid_map *).
 * @id: a kernel id.
 *
 * Return: 1 if one of the map's extents holds @id, else 0.
 */
__noinline int nodefd_id_mapped(__u64 map_ptr, __u32 id)
{
	struct uid_gid_map *map = (void *)map_ptr;
	__u32 n = BPF_CORE_READ(map, nr_extents);
	struct uid_gid_extent e, *rev;
	unsigned int lo = 0, hi = n;

	if (n <= UID_GID_MAP_MAX_BASE_EXTENTS) {
		for (int i = 0; i < UID_GID_MAP_MAX_BASE_EXTENTS; i++) {
			if ((__u32)i >= n)
				break;
			if (bpf_core_read(&e, sizeof(e), &map->extent[i]))
				return 0;
			if (id >= e.lower_first && id - e.lower_first < e.count)
				return 1;
		}
		return 0;
	}
	/* The reverse array is sorted by lower_first: a binary search, as map_id_up() does. */
	rev = BPF_CORE_READ(map, reverse);
	for (int i = 0; i < 9; i++) {	/* 2^9 > UID_GID_MAP_MAX_EXTENTS */
		unsigned int mid;

		if (lo >= hi || hi > UID_GID_MAP_MAX_EXTENTS)
			break;
		mid = lo + (hi - lo) / 2;
		if (bpf_probe_read_kernel(&e, sizeof(e), &rev[mid]))
			return 0;
		if (id < e.lower_first)
			hi = mid;
		else if (id - e.lower_first >= e.count)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/*
 * The permission checks are global functions: the verifier checks each once, not once per
 * directory of every walk that calls it. Their arguments are plain numbers for that reason.
 */
enum search {
	SEARCH_OK,
	SEARCH_DENIED,
	SEARCH_UNKNOWN,		/* the ACL that decides is not known here (fail closed) */
	SEARCH_FS_DECIDES,	/* the filesystem's own ->permission decides (fail closed) */
	SEARCH_IDMAPPED,	/* on an idmapped mount, not mapped here (fail closed) */
};

/*
 * in_group_p(): the fsgid, or one of the supplementary groups. The kernel keeps them sorted
 * (groups_sort() before set_groups()) and looks a gid up with a binary search, groups_search();
 * so does this, over all of them: NGROUPS_MAX is 65536, 17 halvings.
 */
static __always_inline int in_group(__u64 groups, int ngroups, __u32 fsgid, __u32 gid)
{
	struct group_info *gi = (void *)groups;
	unsigned int lo = 0, hi = ngroups > 0 ? (unsigned int)ngroups : 0;
	__u32 g;

	if (gid == fsgid)
		return 1;
	for (int i = 0; i < NODEFD_GROUP_STEPS; i++) {
		unsigned int mid;

		if (lo >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		if (bpf_core_read(&g, sizeof(g), &gi->gid[mid]))
			return 0;
		if (g == gid)
			return 1;
		if (g < gid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/**
 * nodefd_in_group() - in_group(), verified once, for callers with room for another frame
 * @groups: the credentials' struct group_info *.
 * @ngroups: its number of groups.
 * @fsgid: the credentials' fsgid.
 * @gid: the group asked about.
 *
 * Return: 1 if @gid is @fsgid or one of the supplementary groups, else 0.
 */
__noinline int nodefd_in_group(__u64 groups, int ngroups, __u32 fsgid, __u32 gid)
{
	return in_group(groups, ngroups, fsgid, gid);
}

/*
 * One ACL walk; bpf_loop keeps the verifier from following every path through it. The opener
 * is the current task: each step reads its credentials rather than carrying them here.
 */
struct acl_walk {
	__u64 base;
	unsigned int count;
	__u32 owner_gid;
	/*
	 * Small: the ACL walk is the end of the deepest call chain (a program, the place check,
	 * the walk step, this, the step below), and the chain has 512 bytes of stack in all.
	 */
	__s8 user_perm;		/* -1: no entry for the fsuid */
	__s8 mask_perm;		/* -1: no mask */
	__s8 other_perm;
	__u8 group_found;
	__u8 group_ok;
	__u8 unknown;
};

static long acl_step(__u32 i, void *ctx)
{
	const struct cred *cred = bpf_get_current_task_btf()->cred;
	struct acl_walk *a = ctx;
	struct posix_acl_entry e;
	__u32 gid;

	if (i >= a->count)
		return 1;
	if (bpf_probe_read_kernel(&e, sizeof(e), (void *)(a->base + i * sizeof(e)))) {
		a->unknown = 1;
		return 1;
	}
	switch (e.e_tag) {
	case ACL_USER:
		if (e.e_uid.val == cred->fsuid.val && a->user_perm < 0)
			a->user_perm = (__s8)e.e_perm;
		break;
	case ACL_GROUP_OBJ:
	case ACL_GROUP:
		gid = e.e_tag == ACL_GROUP_OBJ ? a->owner_gid : e.e_gid.val;
		/*
		 * A global function, verified once: inline, the search's 17 steps inside the
		 * loop's callback passed the verifier's 1 000 000 instructions on 7.2.
		 */
		if (nodefd_in_group((__u64)BPF_CORE_READ(cred, group_info),
				    cred->group_info->ngroups, cred->fsgid.val, gid)) {
			a->group_found = 1;
			if (e.e_perm & 1)
				a->group_ok = 1;
		}
		break;
	case ACL_MASK:
		a->mask_perm = (__s8)e.e_perm;
		break;
	case ACL_OTHER:
		a->other_perm = (__s8)e.e_perm;
		break;
	}
	return 0;
}

/**
 * nodefd_acl_search() - posix_acl_permission() for MAY_EXEC, the owner case already handled
 * @acl_ptr: the directory's access ACL (struct posix_acl *).
 * @owner_gid: the directory's group, which ACL_GROUP_OBJ stands for.
 *
 * Return: an enum search value for the current task's credentials.
 */
__noinline int nodefd_acl_search(__u64 acl_ptr, __u32 owner_gid)
{
	struct posix_acl *acl = (void *)acl_ptr;
	struct acl_walk a = {
		.base = acl_ptr + bpf_core_field_offset(struct posix_acl, a_entries),
		.count = BPF_CORE_READ(acl, a_count),
		.owner_gid = owner_gid,
		.user_perm = -1,
		.mask_perm = -1,
	};

	if (a.count > NODEFD_MAX_ACL)
		return SEARCH_UNKNOWN;
	bpf_loop(NODEFD_MAX_ACL, acl_step, &a, 0);
	if (a.unknown)
		return SEARCH_UNKNOWN;
	if (a.user_perm >= 0)
		return (a.user_perm & (a.mask_perm < 0 ? 7 : a.mask_perm) & 1) ? SEARCH_OK :
										SEARCH_DENIED;
	if (a.group_ok)
		return (a.mask_perm < 0 || (a.mask_perm & 1)) ? SEARCH_OK : SEARCH_DENIED;
	if (a.group_found)
		return SEARCH_DENIED;
	return (a.other_perm & 1) ? SEARCH_OK : SEARCH_DENIED;
}


#define EXT4_SUPER_MAGIC 0xEF53

/*
 * EXT4_STATE_XATTR, kept in i_flags from bit 32 on 64-bit: 2 on 6.1 (after JDATA and NEW), 1
 * once EXT4_STATE_JDATA went. Its enum has no name, so CO-RE cannot relocate it: nodefdctl
 * reads it from the kernel's BTF before loading; -1 (not found) turns the shortcut off.
 */
const volatile int ext4_state_xattr = -1;

/*
 * ext4_get_acl() reads the ACL from the inode's extended attributes: those in the inode
 * (EXT4_STATE_XATTR, set when the inode is read if it has any) and those in its xattr block
 * (i_file_acl). With neither, it finds none and the kernel caches "no ACL": known without
 * reading it. (A first try took bit 32 + 1 for every kernel: EXT4_STATE_NEW on 6.1.)
 */
static __always_inline bool ext4_has_no_xattrs(struct inode *inode)
{
	struct ext4_inode_info *ei;

	if (ext4_state_xattr < 0 || ext4_state_xattr > 31 ||
	    !bpf_core_type_exists(struct ext4_inode_info) ||
	    BPF_CORE_READ(inode, i_sb, s_magic) != EXT4_SUPER_MAGIC)
		return false;
	ei = (void *)inode - bpf_core_field_offset(struct ext4_inode_info, vfs_inode);
	return !BPF_CORE_READ(ei, i_file_acl) &&
	       !(BPF_CORE_READ(ei, i_flags) & (1UL << (32 + ext4_state_xattr)));
}

/*
 * The ACL that decides search on @inode, whose i_acl is @acl, as check_acl() finds it: *aclp
 * set (NULL: none), or SEARCH_UNKNOWN when it cannot be known from here: not cached yet by a
 * filesystem that would fetch it (the kernel reads it from disk on the first check, which
 * nodefd cannot do), or an overlay inode whose real inode is not known.
 */
static __always_inline int dir_acl(struct inode *inode, struct posix_acl *acl,
				   struct posix_acl **aclp)
{
	/* overlayfs caches no ACL of its own (ACL_DONT_CACHE): it gives the real inode's. */
	if (acl == ACL_DONT_CACHE && BPF_CORE_READ(inode, i_sb, s_magic) == OVERLAYFS_SUPER_MAGIC) {
		inode = ovl_real_inode(inode);
		if (!inode)
			return SEARCH_UNKNOWN;
		if (!(BPF_CORE_READ(inode, i_sb, s_flags) & SB_POSIXACL)) {
			*aclp = NULL;
			return SEARCH_OK;
		}
		acl = BPF_CORE_READ(inode, i_acl);
	}
	if (acl == ACL_NOT_CACHED) {
		/*
		 * With no method to fetch it (tmpfs) the kernel would cache "none", and so would
		 * ext4 for an inode with no extended attributes at all.
		 */
		if (inode_acl_method(inode) && !ext4_has_no_xattrs(inode))
			return SEARCH_UNKNOWN;
		acl = NULL;
	} else if ((long)acl & 1) {
		/*
		 * Odd is "not cached" to the kernel (is_uncached_acl()): ACL_DONT_CACHE, and the
		 * sentinel get_acl() leaves while a task reads the ACL from disk (that task's
		 * address + 1), which is no struct posix_acl.
		 */
		return SEARCH_UNKNOWN;
	}
	*aclp = acl;
	return SEARCH_OK;
}

/*
 * Filesystems that decide permission themselves (->permission: NFS asks the server, FUSE
 * without default_permissions its daemon) cannot be judged from here, except those whose
 * method comes down to generic_permission() for searching a directory.
 */
extern const void kernfs_iop_permission __ksym __weak;
extern const void btrfs_permission __ksym __weak;
extern const void ovl_permission __ksym __weak;

/* Whether inodes with operations @iop are judged here (see above): one read of ->permission. */
static __always_inline bool permission_is_generic(const struct inode_operations *iop)
{
	const void *perm = BPF_CORE_READ(iop, permission);

	return !perm || (&kernfs_iop_permission && perm == &kernfs_iop_permission) ||
	       (&btrfs_permission && perm == &btrfs_permission) ||
	       (&ovl_permission && perm == &ovl_permission);
}

/*
 * What a search check reads of a directory's inode: the head of struct inode as 6.1 and 6.12
 * lay it out, read whole where the running kernel does too.
 */
struct inode_head {
	__u16 mode;
	__u16 opflags;
	__u32 uid;
	__u32 gid;
	__u32 flags;
	__u64 acl;		/* i_acl */
	__u64 default_acl;
	__u64 iop;		/* i_op */
};

/*
 * i_mode, i_uid, i_gid, i_acl and i_op in one read of 40 bytes where they head struct inode
 * as in struct inode_head, a read each otherwise: a bpf_probe_read_kernel() costs about 100
 * instructions whatever its size up to a few tens of bytes, and they were five a directory.
 * Offsets are the running kernel's; the verifier drops the branch not taken.
 */
static __always_inline void inode_head_read(struct inode *inode, struct inode_head *h)
{
	if (bpf_core_field_offset(struct inode, i_mode) == 0 &&
	    bpf_core_field_offset(struct inode, i_uid) == 4 &&
	    bpf_core_field_offset(struct inode, i_gid) == 8 &&
	    bpf_core_field_offset(struct inode, i_acl) == 16 &&
	    bpf_core_field_offset(struct inode, i_op) == 32) {
		bpf_probe_read_kernel(h, sizeof(*h), inode);
		return;
	}
	h->mode = BPF_CORE_READ(inode, i_mode);
	h->uid = BPF_CORE_READ(inode, i_uid.val);
	h->gid = BPF_CORE_READ(inode, i_gid.val);
	h->acl = (__u64)BPF_CORE_READ(inode, i_acl);
	h->iop = (__u64)BPF_CORE_READ(inode, i_op);
}

/*
 * generic_permission(@inode, MAY_EXEC) for the opener @o: owner bits, ACL, group or other
 * bits, then the DAC capabilities (in the initial user namespace over every directory, in
 * another over the ones whose owner and group it maps). @posixacl: the superblock has
 * SB_POSIXACL.
 * @generic_iop: the last inode operations found judged here, of this walk (a walk's
 * directories mostly share one filesystem's), so ->permission is read when they change.
 */
static __always_inline int may_search(const struct opener *o, struct inode *inode,
				      bool posixacl, __u64 *generic_iop)
{
	struct posix_acl *acl = NULL;
	struct inode_head h;
	int s;

	if (o->dac_search)
		return SEARCH_OK;
	inode_head_read(inode, &h);
	if (h.iop != *generic_iop) {
		if (!permission_is_generic((const struct inode_operations *)h.iop))
			return SEARCH_FS_DECIDES;
		*generic_iop = h.iop;
	}
	if (o->dac_ns &&
	    nodefd_id_mapped(o->user_ns + bpf_core_field_offset(struct user_namespace, uid_map),
			     h.uid) &&
	    nodefd_id_mapped(o->user_ns + bpf_core_field_offset(struct user_namespace, gid_map),
			     h.gid))
		return SEARCH_OK;
	if (h.uid == o->ids >> 32)
		return (h.mode & S_IXUSR) ? SEARCH_OK : SEARCH_DENIED;
	if (posixacl && (h.mode & S_IRWXG)) {
		s = dir_acl(inode, (struct posix_acl *)h.acl, &acl);
		if (s != SEARCH_OK)
			return s;
		if (acl)
			return o->foreign ? SEARCH_UNKNOWN : nodefd_acl_search((__u64)acl, h.gid);
	}
	/* Group and other agree on search: no need to look at the groups (as the kernel does). */
	if (((h.mode ^ (h.mode >> 3)) & S_IXOTH) &&
	    nodefd_in_group(o->groups, o->ngroups, (__u32)o->ids, h.gid))
		h.mode >>= 3;
	return (h.mode & S_IXOTH) ? SEARCH_OK : SEARCH_DENIED;
}

#endif /* __NODEFD_PERM_BPF_H */
