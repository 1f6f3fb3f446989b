// SPDX-License-Identifier: GPL-2.0
/* nodefd.bpf.c - BPF LSM programs that judge opens and walks through proc magic links */

/*
 * How a magic-link open is told apart from an ordinary one
 * --------------------------------------------------------
 * Every symlink a path walk follows passes the inode_follow_link hook
 * before the link is read.  A proc magic link is a symlink on procfs whose
 * ->get_link is proc_pid_get_link (fd/N, exe, cwd, root; fd/N also under
 * task/<tid>/) or proc_map_files_get_link; which one it is comes from the
 * proc inode's proc_get_link.  From the proc inode we reach the holder
 * (its struct pid) and, for fd/N, the holder's fd table entry: the
 * original struct file, with its f_mode, f_flags and f_path.
 *
 * The hook records this in task-local storage together with the identity
 * of the walk: the nameidata, and the position and hash of the link's
 * name in it.  file_open then knows an open came through the link only if
 * current->nameidata is that walk, its last component is still that name
 * and the file opened is the target.  A walk that stats or follows a link
 * and a later open of the same file by name cannot be confused with it:
 * the later walk has its own last component, hashed against another
 * parent, and no link to set the state for it; the state is also cleared
 * when it is used and whenever a procfs link nodefd does not cover is
 * followed.  Only opens that passed a covered link carry the state, so
 * nothing else is ever refused.
 *
 * Decisions
 * ---------
 * The trailing link of an open (LOOKUP_OPEN, nothing after the name) is
 * judged in file_open, on the file actually opened: upgrade and append
 * against the original file, ancestors and reach on the file's own path.
 * If the holder's fd no longer points at the opened file (dup2 between
 * the link and the open), the holder's fd table is read again; if it
 * still does not match, the open is refused (fail closed).
 *
 * Every other walk through a magic link (a middle component, chdir(),
 * stat(), an O_PATH or O_NODE open, linkat(AT_SYMLINK_FOLLOW)) is judged
 * at the link on ancestors and reach, and refused there.  That decision is
 * made on the holder's fd table as the hook reads it; a dup2 that lands
 * between the hook and the kernel's own read of the table is not seen
 * (see docs/design.md).
 *
 * Objects on no user-visible mount (pipes, sockets, anonymous inodes,
 * memfd) have no ancestors to search and no place relative to a root:
 * only upgrade and append apply to them.  An O_TMPFILE file that was
 * never linked is judged by the directory it was made in; a file that was
 * unlinked is outside every root.
 *
 * Costs
 * -----
 * file_open, which every open(2) runs: two loads (current->nameidata and
 * its count of symlinks followed); a walk that followed a symlink adds a
 * task storage lookup, and nothing else unless it was a covered link.
 * inode_follow_link, which every symlink follow runs: one superblock magic
 * compare.  A covered link: a policy lookup (one hash lookup per cgroup
 * level until an entry is found) and, for ancestors and reach, one step
 * per directory up to the opener's root, bounded by NODEFD_MAX_DEPTH
 * (reached: refused and counted), each step a mode check, plus a binary
 * search of the opener's groups and a pass over the ACL's entries when
 * the directory is not the opener's and has group permission bits.
 *
 * Return values: only 0 or a negative errno (a positive value from
 * file_open oopses Linux 6.1).
 */

#include "vmlinux.h"	/* bpf/kernel_types.h, or VMLINUX_H (see the Makefile) */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "nodefd.h"
#include "compat.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EACCES 13
#define PROC_SUPER_MAGIC 0x9fa0

#define S_IXUSR 00100
#define S_IXGRP 00010
#define S_IXOTH 00001
#define S_IRWXG 00070

#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define FMODE_EXEC 0x20
#define FMODE_PATH 0x4000

#define O_TRUNC 00001000
#define O_APPEND 00002000
#define O_NODE 040000000

#define LOOKUP_OPEN 0x0100
#define SB_POSIXACL (1 << 16)
#define MNT_NS_INTERNAL ((void *)-22L)
#define ACL_NOT_CACHED ((void *)-1L)

#define CAP_DAC_OVERRIDE 1
#define CAP_DAC_READ_SEARCH 2

#define ACL_USER_OBJ 0x01
#define ACL_USER 0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP 0x08
#define ACL_MASK 0x10
#define ACL_OTHER 0x20

#define PATH_COMPONENTS 16

/* The functions that tell the magic links apart (text symbols, in every kallsyms). */
extern const void proc_pid_get_link __ksym;
extern const void proc_map_files_get_link __ksym;
extern const void proc_fd_link __ksym;
extern const void proc_exe_link __ksym;
extern const void proc_cwd_link __ksym;
extern const void proc_root_link __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nodefd_config);
} settings SEC(".maps");

/*
 * Policies: cgroup id -> struct nodefd_policy, in a hash map that is never changed once it is
 * in use. nodefdctl builds a whole new one and swaps it into entry 0 of cgroup_policy in one
 * update, so that an open sees the old policy or the new one, never a mix.
 */
struct policy_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, NODEFD_MAX_POLICIES);
	__type(key, __u64);
	__type(value, struct nodefd_policy);
} policy_empty SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct policy_map);
} cgroup_policy SEC(".maps") = {
	.values = { [0] = &policy_empty },
};

/* What inode_follow_link learnt, for the file_open of the same walk. */
struct task_state {
	__u64 nd;		/* struct nameidata * of the walk */
	__u64 last_name;	/* nd->last.name at the link */
	__u64 last_hash_len;	/* nd->last.hash_len at the link */
	__u64 dentry;		/* target f_path, as read at the link */
	__u64 mnt;
	__u64 holder;		/* struct pid * of the holder */
	__u32 holder_tgid;
	__s32 fd;		/* fd number for NODEFD_KIND_FD, else -1 */
	__u32 orig_mode;
	__u32 orig_flags;
	__u64 syscall;		/* ARMED_PATH_OP: the system call the walk was made for */
	__u8 armed;		/* enum armed */
	__u8 kind;
	__u8 has_origin;	/* orig_mode/orig_flags describe an open file */
	__u8 loose;		/* ARMED_OPEN by "/" or "/." after the link: match by target */
	__u8 pad[4];
};

/*
 * What a walk that ended on a magic link left for the hook that acts on its result: an open
 * (file_open, which matches the walk by its nameidata), or another operation on the path,
 * truncate(2) or linkat(2) (path_truncate, path_link, which match it by the system call and
 * the target: the walk is over by then).
 */
enum armed {
	ARMED_NONE = 0,
	ARMED_OPEN = 1,
	ARMED_PATH_OP = 2,
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NODEFD_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Scratch for building an event's path: twice the size, so masked offsets never overflow. */
struct scratch {
	char buf[2 * NODEFD_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* The opener's credentials, as the permission checks need them. */
struct opener {
	__u64 groups;		/* struct group_info * */
	__u64 ids;		/* fsuid << 32 | fsgid */
	__u64 user_ns;		/* struct user_namespace * of the credentials */
	int ngroups;
	int dac_search;		/* passes every directory: CAP_DAC_* in the initial user ns */
	int dac_ns;		/* CAP_DAC_* in another user ns: over what it maps */
};

static __always_inline void opener_init(struct opener *o, struct task_struct *task)
{
	/* task is a BTF pointer: plain loads, no helper calls. */
	const struct cred *cred = task->cred;
	unsigned int level = cred->user_ns->level;
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
	/*
	 * capable_wrt_inode_uidgid(): a DAC capability counts in the credentials' own user
	 * namespace, over inodes whose owner and group that namespace maps; the initial one maps
	 * every id.
	 */
	o->dac_search = o->dac_ns = 0;
	if (caps & ((1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH))) {
		o->dac_search = level == 0;
		o->dac_ns = level != 0;
	}
}

/*
 * kuid_has_mapping()/kgid_has_mapping(): is kernel id @id inside one of @map's extents?
 * Extents hold global (kernel) ids in lower_first, however deep the namespace.
 */
#define UID_GID_MAP_MAX_BASE_EXTENTS 5
#define UID_GID_MAP_MAX_EXTENTS 340

__noinline int nodefd_id_mapped(__u64 map_ptr, __u32 id)
{
	struct uid_gid_map *map = (void *)map_ptr;
	__u32 n = BPF_CORE_READ(map, nr_extents);
	struct uid_gid_extent e, *rev;
	unsigned int lo = 0, hi = n;

	if (n <= UID_GID_MAP_MAX_BASE_EXTENTS) {
		for (int i = 0; i < UID_GID_MAP_MAX_BASE_EXTENTS; i++) {
			if (i >= n)
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
enum search { SEARCH_OK, SEARCH_DENIED, SEARCH_UNKNOWN };

/*
 * in_group_p(): the fsgid, or one of the supplementary groups. The kernel keeps them sorted
 * (groups_sort() before set_groups()) and looks a gid up with a binary search, groups_search();
 * so does this, over all of them: NGROUPS_MAX is 65536, 17 halvings.
 */
__noinline int nodefd_in_group(__u64 groups, int ngroups, __u32 fsgid, __u32 gid)
{
	struct group_info *gi = (void *)groups;
	unsigned int lo = 0, hi = ngroups > 0 ? ngroups : 0;
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

/* One ACL walk; bpf_loop keeps the verifier from following every path through it. */
struct acl_walk {
	__u64 base;
	__u64 groups;
	__u64 ids;
	int ngroups;
	unsigned int count;
	__u32 owner_gid;
	int user_perm;
	int mask_perm;
	int other_perm;
	int group_found;
	int group_ok;
	int unknown;
};

static long acl_step(__u32 i, void *ctx)
{
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
		if (e.e_uid.val == a->ids >> 32 && a->user_perm < 0)
			a->user_perm = e.e_perm;
		break;
	case ACL_GROUP_OBJ:
	case ACL_GROUP:
		gid = e.e_tag == ACL_GROUP_OBJ ? a->owner_gid : e.e_gid.val;
		if (nodefd_in_group(a->groups, a->ngroups, (__u32)a->ids, gid)) {
			a->group_found = 1;
			if (e.e_perm & 1)
				a->group_ok = 1;
		}
		break;
	case ACL_MASK:
		a->mask_perm = e.e_perm;
		break;
	case ACL_OTHER:
		a->other_perm = e.e_perm;
		break;
	}
	return 0;
}

/* posix_acl_permission() for MAY_EXEC, the owner case already handled. */
__noinline int nodefd_acl_search(__u64 acl_ptr, __u64 groups, int ngroups, __u64 ids,
				 __u32 owner_gid)
{
	struct posix_acl *acl = (void *)acl_ptr;
	struct acl_walk a = {
		.base = acl_ptr + bpf_core_field_offset(struct posix_acl, a_entries),
		.groups = groups,
		.ids = ids,
		.ngroups = ngroups,
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

/* One walk from a target up to the opener's root, for the ancestors and reach rules. */
struct walk {
	struct opener o;
	struct dentry *d;
	struct mount *m;
	struct dentry *mnt_root;	/* m's root dentry */
	unsigned long sb_flags;		/* m's superblock flags */
	struct dentry *root_d;
	struct dentry *refused;	/* directory that refused search, or NULL */
	bool reached_root;
	bool done;
	bool unknown_acl;
};

static __always_inline void walk_enter(struct walk *w, struct mount *m)
{
	w->m = m;
	w->mnt_root = BPF_CORE_READ(m, mnt.mnt_root);
	w->sb_flags = BPF_CORE_READ(m, mnt.mnt_sb, s_flags);
}

static long walk_step(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	struct dentry *d = w->d, *p;
	struct inode *inode;
	struct posix_acl *acl;
	__u32 uid, gid;
	__u16 mode;
	int s;

	/*
	 * The root's dentry, on whatever mount: a process that unshared its mount namespace has
	 * copies of the mounts its files were opened on, and what counts is that the file lies
	 * in the directory tree below its root, not which copy of a mount shows it.
	 */
	if (d == w->root_d) {
		w->reached_root = true;
		w->done = true;
		return 1;
	}
	if (d == w->mnt_root) {
		struct mount *m = w->m, *pm = BPF_CORE_READ(m, mnt_parent);

		/* Top of the mount tree. The covered mountpoint itself is never searched. */
		if (pm == m) {
			w->done = true;
			return 1;
		}
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		walk_enter(w, pm);
		return 0;
	}
	p = BPF_CORE_READ(d, d_parent);
	if (!p || p == d) {
		/* A disconnected dentry: it leads to no root. */
		w->done = true;
		return 1;
	}
	w->d = p;
	if (w->o.dac_search)
		return 0;

	/* generic_permission(p, MAY_EXEC): owner bits, ACL, then group or other bits. */
	inode = BPF_CORE_READ(p, d_inode);
	mode = BPF_CORE_READ(inode, i_mode);
	uid = BPF_CORE_READ(inode, i_uid.val);
	/* A capability in a user namespace, over a directory whose owner and group it maps. */
	if (w->o.dac_ns &&
	    nodefd_id_mapped(w->o.user_ns + bpf_core_field_offset(struct user_namespace, uid_map),
			     uid) &&
	    nodefd_id_mapped(w->o.user_ns + bpf_core_field_offset(struct user_namespace, gid_map),
			     BPF_CORE_READ(inode, i_gid.val)))
		return 0;
	if (uid == w->o.ids >> 32) {
		if (mode & S_IXUSR)
			return 0;
		s = SEARCH_DENIED;
		goto refused;
	}
	if ((w->sb_flags & SB_POSIXACL) && (mode & S_IRWXG)) {
		acl = BPF_CORE_READ(inode, i_acl);
		/* Not cached: with no method to fetch it (tmpfs) the kernel would cache "none". */
		if (acl == ACL_NOT_CACHED) {
			if (inode_acl_method(inode)) {
				s = SEARCH_UNKNOWN;
				goto refused;
			}
			acl = NULL;
		}
		if (acl) {
			s = nodefd_acl_search((__u64)acl, w->o.groups, w->o.ngroups, w->o.ids,
					      BPF_CORE_READ(inode, i_gid.val));
			if (s == SEARCH_OK)
				return 0;
			goto refused;
		}
	}
	/* Group and other agree on search: no need to look at the groups (as the kernel does). */
	if ((mode ^ (mode >> 3)) & S_IXOTH) {
		gid = BPF_CORE_READ(inode, i_gid.val);
		if (nodefd_in_group(w->o.groups, w->o.ngroups, (__u32)w->o.ids, gid))
			mode >>= 3;
	}
	if (mode & S_IXOTH)
		return 0;
	s = SEARCH_DENIED;
refused:
	w->refused = p;
	w->unknown_acl = s == SEARCH_UNKNOWN;
	w->done = true;
	return 1;
}

/* Outcome of the ancestors and reach rules for one target. */
struct reach {
	__u8 ancestors_reason;	/* enum nodefd_reason, valid if ancestors_fail */
	__u8 reach_reason;
	bool ancestors_fail;
	bool reach_fail;
	struct dentry *refused;
};

/* d_tmpfile() names the dentry "#<ino>" and never hashes it. */
__noinline int nodefd_is_tmpfile(__u64 dentry)
{
	struct dentry *d = (void *)dentry;
	__u64 ino = BPF_CORE_READ(d, d_inode, i_ino);
	char name[24], digits[20];
	int n = 0, len;

	len = bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(d, d_name.name));
	if (len < 3 || name[0] != '#')
		return 0;
	for (int i = 0; i < 20; i++) {
		digits[i] = '0' + ino % 10;
		ino /= 10;
		n++;
		if (!ino)
			break;
	}
	if (len - 2 != n)
		return 0;
	for (int i = 0; i < 20; i++) {
		if (i >= n)
			break;
		if (name[1 + (i & 15)] != digits[(n - 1 - i) & 15])
			return 0;
	}
	return 1;
}

static __always_inline void check_reach(struct reach *r, const struct opener *o,
					struct task_struct *task, struct dentry *d,
					struct vfsmount *vm, const struct nodefd_config *cfg)
{
	struct mount *m = (void *)vm - bpf_core_field_offset(struct mount, mnt);
	struct fs_struct *fs = task->fs;
	struct mnt_namespace *ns = task->nsproxy->mnt_ns;
	struct inode *root_inode;
	struct walk w = {
		.o = *o,
		.d = d,
		.root_d = fs->root.dentry,
	};
	bool confined;
	long n;

	root_inode = w.root_d->d_inode;
	confined = !(ns->ns.inum == cfg->init_mnt_ns && root_inode &&
		     root_inode->i_ino == cfg->init_root_ino &&
		     root_inode->i_sb->s_dev == cfg->init_root_dev);

	/*
	 * Hashed, or the root of its mount; an unhashed one lost its name, and is outside every
	 * root a confined task has. For an unconfined task (reach does not apply) and for an
	 * O_TMPFILE never linked, the walk starts at the directory it was in.
	 */
	if (confined && !BPF_CORE_READ(d, d_hash.pprev) && BPF_CORE_READ(d, d_parent) != d &&
	    !nodefd_is_tmpfile((__u64)d)) {
		r->reach_fail = true;
		r->reach_reason = NODEFD_REASON_UNLINKED;
		return;
	}
	walk_enter(&w, m);

	n = bpf_loop(NODEFD_MAX_DEPTH, walk_step, &w, 0);
	if (n < 0 || !w.done) {
		count(NODEFD_CNT_DEPTH_LIMIT);
		r->ancestors_fail = r->reach_fail = true;
		r->ancestors_reason = r->reach_reason = NODEFD_REASON_DEPTH;
		return;
	}
	if (w.refused) {
		r->ancestors_fail = true;
		r->ancestors_reason = w.unknown_acl ? NODEFD_REASON_UNKNOWN_ACL : NODEFD_REASON_RULE;
		r->refused = w.refused;
		/* The walk stopped early: reach is still owed an answer. */
		if (confined) {
			w.refused = NULL;
			w.done = false;
		}
	}
	if (!confined)
		return;
	if (!w.done) {
		/* Finish the walk for reach alone: every directory counts as searchable. */
		w.o.dac_search = 1;
		n = bpf_loop(NODEFD_MAX_DEPTH, walk_step, &w, 0);
		if (n < 0 || !w.done) {
			count(NODEFD_CNT_DEPTH_LIMIT);
			r->reach_fail = true;
			r->reach_reason = NODEFD_REASON_DEPTH;
			return;
		}
	}
	if (!w.reached_root) {
		r->reach_fail = true;
		r->reach_reason = NODEFD_REASON_RULE;
	}
}

/* The nearest policy from the task's cgroup up: one hash lookup per level. */
struct policy_walk {
	void *policies;
	int level;
	const struct nodefd_policy *found;
};

static long policy_step(__u32 i, void *ctx)
{
	struct policy_walk *pw = ctx;
	__u64 id;

	if (pw->level - (int)i < 0)
		return 1;
	id = bpf_get_current_ancestor_cgroup_id(pw->level - i);
	pw->found = bpf_map_lookup_elem(pw->policies, &id);
	return pw->found ? 1 : 0;
}

static __always_inline const struct nodefd_policy *policy_of(struct task_struct *task)
{
	struct policy_walk pw = { .level = task->cgroups->dfl_cgrp->level };
	__u32 zero = 0;

	pw.policies = bpf_map_lookup_elem(&cgroup_policy, &zero);
	if (!pw.policies)
		return NULL;
	/* Every level, however deep a delegated subtree nests: the nearest policy counts. */
	bpf_loop(NODEFD_MAX_CGROUP_LEVELS, policy_step, &pw, 0);
	return pw.found;	/* NULL: no policy anywhere, every rule enforced */
}

/* Everything a decision needs to say in an event. */
struct ctx {
	struct task_struct *task;
	const struct nodefd_policy *policy;
	bool canary;
	__u8 hook;
	__u8 kind;
	__u32 holder_tgid;
	__s32 fd;
	__u32 orig_mode;
	__u32 orig_flags;
	__u32 req_mode;
	__u32 req_flags;
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct file *file;	/* the file being opened, for bpf_d_path; NULL at the link */
};

/*
 * The path of a dentry from the global root, built in the per-CPU scratch buffer, for the
 * events of the link hook, where bpf_d_path is not allowed: the names from the target up,
 * across mounts, as far as PATH_COMPONENTS go (the top ones are then left out).
 */
__noinline int nodefd_path_of(__u64 dentry, __u64 vfsmount)
{
	__u64 names[PATH_COMPONENTS];
	struct dentry *d = (void *)dentry;
	struct mount *m = (void *)(vfsmount - bpf_core_field_offset(struct mount, mnt));
	struct scratch *s;
	__u32 zero = 0, pos = 0;
	int n = 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return -1;
	for (int i = 0; i < PATH_COMPONENTS; i++) {
		struct dentry *p;

		if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
			struct mount *pm = BPF_CORE_READ(m, mnt_parent);

			if (pm == m)
				break;
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = pm;
			continue;
		}
		p = BPF_CORE_READ(d, d_parent);
		if (!p || p == d)
			break;
		names[n & (PATH_COMPONENTS - 1)] = (__u64)BPF_CORE_READ(d, d_name.name);
		n++;
		d = p;
	}
	for (int i = PATH_COMPONENTS - 1; i >= 0; i--) {
		long len;

		if (i >= n)
			continue;
		s->buf[pos & (NODEFD_PATH_MAX - 1)] = '/';
		pos++;
		len = bpf_probe_read_kernel_str(&s->buf[pos & (NODEFD_PATH_MAX - 1)],
						NODEFD_PATH_MAX,
						(void *)names[i & (PATH_COMPONENTS - 1)]);
		if (len > 0)
			pos += len - 1;
		if (pos >= NODEFD_PATH_MAX - 1)
			break;
	}
	if (!n)
		s->buf[pos++ & (NODEFD_PATH_MAX - 1)] = '/';
	s->buf[pos & (NODEFD_PATH_MAX - 1)] = '\0';
	return 0;
}

static __always_inline void event_path(struct nodefd_event *ev, struct ctx *c)
{
	struct scratch *s;
	__u32 zero = 0;

	/* bpf_d_path is allowed in file_open: the path as the opener's root sees it. */
	/* f_path is const since 6.11; bpf_d_path only reads it. */
	if (c->file && bpf_d_path((struct path *)&c->file->f_path, ev->path, sizeof(ev->path)) > 0)
		return;
	if (!c->dentry || nodefd_path_of((__u64)c->dentry, (__u64)c->mnt))
		return;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (s)
		bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), s->buf);
}

static __always_inline void emit(struct ctx *c, __u8 rule, __u8 action, __u8 reason,
				 struct dentry *ancestor)
{
	struct nodefd_event *ev;

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(NODEFD_CNT_EVENTS_DROPPED);
		return;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = bpf_get_current_cgroup_id();
	ev->pid = bpf_get_current_pid_tgid() >> 32;
	ev->tid = (__u32)bpf_get_current_pid_tgid();
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->holder_pid = c->holder_tgid;
	ev->holder_fd = c->fd;
	ev->orig_flags = c->orig_flags;
	ev->orig_mode = c->orig_mode;
	ev->req_flags = c->req_flags;
	ev->req_mode = c->req_mode;
	ev->rule = rule;
	ev->action = action;
	ev->kind = c->kind;
	ev->reason = reason;
	ev->hook = c->hook;
	ev->pad[0] = ev->pad[1] = ev->pad[2] = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->path[0] = '\0';
	event_path(ev, c);
	ev->ancestor[0] = '\0';
	if (ancestor)
		bpf_probe_read_kernel_str(ev->ancestor, sizeof(ev->ancestor),
					  BPF_CORE_READ(ancestor, d_name.name));
	bpf_ringbuf_submit(ev, 0);
}

/* Apply the policy to one failed rule: true if the access is refused. */
static __always_inline bool verdict(struct ctx *c, __u8 rule, __u8 reason, struct dentry *ancestor)
{
	__u8 mode = c->canary || !c->policy ? NODEFD_MODE_ENFORCE : c->policy->rule_mode[rule & 3];

	if (mode == NODEFD_MODE_ENFORCE) {
		count(NODEFD_CNT_DENIED + (rule & 3));
		emit(c, rule, NODEFD_MODE_ENFORCE, reason, ancestor);
		return true;
	}
	if (mode == NODEFD_MODE_AUDIT) {
		count(NODEFD_CNT_AUDITED + (rule & 3));
		emit(c, rule, NODEFD_MODE_AUDIT, reason, ancestor);
	}
	return false;
}

static __always_inline bool rule_on(struct ctx *c, __u8 rule)
{
	return c->canary || !c->policy || c->policy->rule_mode[rule & 3] != NODEFD_MODE_OFF;
}

/* Ancestors and reach for c->dentry/c->mnt: 0 or -EACCES. */
static __always_inline int judge_place(struct ctx *c, const struct nodefd_config *cfg)
{
	struct reach r = {};
	struct opener o;
	struct vfsmount *vm = c->mnt;
	struct mount *m;
	bool refuse = false;
	void *ns;

	if (!rule_on(c, NODEFD_RULE_ANCESTORS) && !rule_on(c, NODEFD_RULE_REACH))
		return 0;
	/* Pipes, sockets, anonymous inodes, memfd: no place to judge. */
	m = (void *)vm - bpf_core_field_offset(struct mount, mnt);
	ns = BPF_CORE_READ(m, mnt_ns);
	if (ns == MNT_NS_INTERNAL)
		return 0;
	opener_init(&o, c->task);
	check_reach(&r, &o, c->task, c->dentry, c->mnt, cfg);
	if (r.ancestors_fail && rule_on(c, NODEFD_RULE_ANCESTORS))
		refuse |= verdict(c, NODEFD_RULE_ANCESTORS, r.ancestors_reason, r.refused);
	if (r.reach_fail && rule_on(c, NODEFD_RULE_REACH))
		refuse |= verdict(c, NODEFD_RULE_REACH, r.reach_reason, NULL);
	return refuse ? -EACCES : 0;
}

static __always_inline struct task_struct *pid_task_of(struct pid *pid)
{
	struct hlist_node *first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first);

	if (!first)
		return NULL;
	return (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
}

static __always_inline struct file *fd_file(struct task_struct *t, unsigned int fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_core_read(&f, sizeof(f), &fds[fd]);
	return f;
}

static __always_inline void origin_from_file(struct task_state *st, struct file *f)
{
	st->dentry = (__u64)BPF_CORE_READ(f, f_path.dentry);
	st->mnt = (__u64)BPF_CORE_READ(f, f_path.mnt);
	st->orig_mode = BPF_CORE_READ(f, f_mode);
	st->orig_flags = BPF_CORE_READ(f, f_flags);
	st->has_origin = 1;
}

/*
 * Upgrade and append for an access c->req_mode/c->req_flags asks of a file whose original
 * open was c->orig_mode/c->orig_flags: 0 or -EACCES. O_TRUNC counts as writing.
 */
static __always_inline int judge_access(struct ctx *c)
{
	__u32 orig, req;
	int err = 0;

	orig = c->orig_mode & (FMODE_READ | FMODE_WRITE);
	if (c->policy && (c->policy->flags & NODEFD_POLICY_PATH_READ) && !c->canary &&
	    ((c->orig_mode & FMODE_PATH) || (c->orig_flags & O_NODE)))
		orig |= FMODE_READ;
	req = c->req_mode & (FMODE_READ | FMODE_WRITE);
	/*
	 * execve() reads what it runs; the file's own exec bit is what counts. It marks its open
	 * with __FMODE_EXEC in f_flags.
	 */
	if (c->req_flags & FMODE_EXEC)
		req &= ~FMODE_READ;
	if (c->req_flags & O_TRUNC)
		req |= FMODE_WRITE;
	if ((req & ~orig) && rule_on(c, NODEFD_RULE_UPGRADE) &&
	    verdict(c, NODEFD_RULE_UPGRADE, NODEFD_REASON_RULE, NULL))
		err = -EACCES;
	/* Truncating destroys what an append-only writer may not touch, O_APPEND or not. */
	if ((orig & FMODE_WRITE) && (c->orig_flags & O_APPEND) && (req & FMODE_WRITE) &&
	    (!(c->req_flags & O_APPEND) || (c->req_flags & O_TRUNC)) &&
	    rule_on(c, NODEFD_RULE_APPEND) && verdict(c, NODEFD_RULE_APPEND, NODEFD_REASON_RULE, NULL))
		err = -EACCES;
	return err;
}

/* The system call being made: its number, and a user pointer that tells two calls apart. */
static __always_inline __u64 current_syscall(struct task_struct *task)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(task);

	if (!regs)
		return 0;
	return BPF_CORE_READ(regs, orig_ax) << 48 ^ BPF_CORE_READ(regs, di) ^
	       BPF_CORE_READ(regs, si);
}

/*
 * What follows a link's name in the path: nothing (TAIL_NONE), only slashes and "." components
 * (TAIL_SAME: the walk ends on the link's target all the same), or more (TAIL_MORE). Read in
 * one piece of TAIL_PEEK bytes; a longer run of slashes and dots counts as more.
 */
enum { TAIL_NONE, TAIL_SAME, TAIL_MORE };
#define TAIL_PEEK 16

static __always_inline int tail_kind(const char *p)
{
	char buf[TAIL_PEEK] = {};
	bool slash = false;

	if (bpf_probe_read_kernel_str(buf, sizeof(buf), p) < 0)
		return TAIL_MORE;	/* unreadable: not known to end here, judged at the link */
	if (!buf[0])
		return TAIL_NONE;
	for (int i = 0; i < TAIL_PEEK; i++) {
		if (!buf[i])
			return TAIL_SAME;
		if (buf[i] == '/') {
			slash = true;
			continue;
		}
		/* "." right after a slash, followed by a slash or the end. */
		if (buf[i] == '.' && slash && (i + 1 >= TAIL_PEEK || !buf[(i + 1) & (TAIL_PEEK - 1)] ||
					      buf[(i + 1) & (TAIL_PEEK - 1)] == '/')) {
			slash = false;
			continue;
		}
		return TAIL_MORE;
	}
	return TAIL_MORE;
}

SEC("lsm/inode_follow_link")
int BPF_PROG(nodefd_inode_follow_link, struct dentry *dentry, struct inode *inode, bool rcu,
	     int ret)
{
	struct task_struct *task;
	struct nodefd_config *cfg;
	struct task_state *st;
	struct proc_inode *pi;
	struct nameidata *nd;
	struct task_struct *holder;
	const void *get_link, *proc_get_link;
	struct ctx c = {};
	__u32 zero = 0;
	__u8 kind;
	int tail;

	if (ret)
		return ret;
	if (inode->i_sb->s_magic != PROC_SUPER_MAGIC)
		return 0;

	task = bpf_get_current_task_btf();
	get_link = inode->i_op->get_link;
	pi = (void *)inode - bpf_core_field_offset(struct proc_inode, vfs_inode);
	if (get_link == &proc_pid_get_link) {
		proc_get_link = BPF_CORE_READ(pi, op.proc_get_link);
		if (proc_get_link == &proc_fd_link)
			kind = NODEFD_KIND_FD;
		else if (proc_get_link == &proc_exe_link)
			kind = NODEFD_KIND_EXE;
		else if (proc_get_link == &proc_cwd_link)
			kind = NODEFD_KIND_CWD;
		else if (proc_get_link == &proc_root_link)
			kind = NODEFD_KIND_ROOT;
		else
			kind = NODEFD_KIND_NONE;
	} else if (get_link == &proc_map_files_get_link) {
		kind = NODEFD_KIND_MAP_FILES;
	} else {
		kind = NODEFD_KIND_NONE;
	}

	cfg = bpf_map_lookup_elem(&settings, &zero);
	c.canary = cfg && cfg->canary_tgid && cfg->canary_tgid == bpf_get_current_pid_tgid() >> 32;
	if (kind == NODEFD_KIND_NONE || !cfg || (!cfg->enabled && !c.canary)) {
		/* Not ours, or off: whatever an earlier link left must not apply to this walk. */
		st = bpf_task_storage_get(&task_state, task, 0, 0);
		if (st)
			st->armed = 0;
		return 0;
	}

	c.task = task;
	c.hook = NODEFD_HOOK_FOLLOW;
	c.kind = kind;
	c.fd = -1;
	count(NODEFD_CNT_CHECKED);

	st = bpf_task_storage_get(&task_state, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(NODEFD_CNT_NOMEM);
		c.policy = policy_of(task);
		return verdict(&c, NODEFD_RULE_REACH, NODEFD_REASON_NOMEM, NULL) ? -EACCES : 0;
	}
	st->armed = 0;
	st->kind = kind;
	st->has_origin = 0;
	st->fd = -1;
	st->dentry = st->mnt = 0;
	st->orig_mode = st->orig_flags = 0;

	st->holder = (__u64)BPF_CORE_READ(pi, pid);
	holder = pid_task_of((struct pid *)st->holder);
	st->holder_tgid = holder ? BPF_CORE_READ(holder, tgid) : 0;
	if (holder) {
		if (kind == NODEFD_KIND_FD) {
			struct file *f;

			st->fd = BPF_CORE_READ(pi, fd);
			f = fd_file(holder, st->fd);
			if (f)
				origin_from_file(st, f);
		} else if (kind == NODEFD_KIND_EXE) {
			struct file *f = BPF_CORE_READ(holder, mm, exe_file);

			if (f)
				origin_from_file(st, f);
		} else if (kind == NODEFD_KIND_CWD || kind == NODEFD_KIND_ROOT) {
			struct fs_struct *fs = BPF_CORE_READ(holder, fs);

			if (kind == NODEFD_KIND_CWD) {
				st->dentry = (__u64)BPF_CORE_READ(fs, pwd.dentry);
				st->mnt = (__u64)BPF_CORE_READ(fs, pwd.mnt);
			} else {
				st->dentry = (__u64)BPF_CORE_READ(fs, root.dentry);
				st->mnt = (__u64)BPF_CORE_READ(fs, root.mnt);
			}
		} else {
			/*
			 * map_files: finding the vma needs the holder's mm locked. The
			 * link inode's mode was set from the mapped file's f_mode when it
			 * was looked up; the target is judged at the open.
			 */
			__u16 imode = BPF_CORE_READ(inode, i_mode);

			st->orig_mode = ((imode & 0400) ? FMODE_READ : 0) |
					((imode & 0200) ? FMODE_WRITE : 0);
			st->has_origin = 1;
		}
	}

	nd = task->nameidata;
	if (!nd)
		return 0;	/* not a path walk (cannot happen: the hook is called from one) */
	st->nd = (__u64)nd;
	st->last_name = (__u64)nd->last.name;
	st->last_hash_len = BPF_CORE_READ(nd, last.hash_len);
	/* hash_len is len << 32 | hash (hashlen_len()): what follows the link's name. */
	tail = tail_kind((void *)(st->last_name + (st->last_hash_len >> 32)));
	/* Matched by its target at the open, so only with a target known: else judged here. */
	if (tail == TAIL_SAME && !st->dentry)
		tail = TAIL_MORE;
	st->loose = tail == TAIL_SAME;

	c.holder_tgid = st->holder_tgid;
	c.fd = st->fd;
	c.orig_mode = st->orig_mode;
	c.orig_flags = st->orig_flags;

	/* The trailing link of an open: everything is judged on the file opened. */
	if ((nd->flags & LOOKUP_OPEN) && tail != TAIL_MORE) {
		st->armed = ARMED_OPEN;
		return 0;
	}

	/* A walk that goes on through the link, or no open at the end of it. */
	c.policy = policy_of(task);
	if (!st->dentry) {
		if (kind == NODEFD_KIND_MAP_FILES)
			return 0;	/* the kernel refuses map_files walks to all but admins */
		c.dentry = NULL;
		return verdict(&c, NODEFD_RULE_REACH, NODEFD_REASON_NO_ORIGIN, NULL) ? -EACCES : 0;
	}
	c.dentry = (struct dentry *)st->dentry;
	c.mnt = (struct vfsmount *)st->mnt;
	if (judge_place(&c, cfg))
		return -EACCES;
	/*
	 * The walk ends on the link's target without an open (truncate, linkat, stat, ...): a
	 * hook on what the system call then does to it judges the access.
	 */
	if (tail != TAIL_MORE) {
		st->armed = ARMED_PATH_OP;
		st->syscall = current_syscall(task);
	}
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(nodefd_file_open, struct file *file, int ret)
{
	struct task_struct *task;
	struct nodefd_config *cfg;
	struct task_state *st;
	struct nameidata *nd;
	struct ctx c = {};
	__u32 zero = 0;
	int err;

	if (ret)
		return ret;
	/*
	 * The fast path, which every open(2) pays: an open whose walk followed no symlink at all
	 * (the walk counts them for ELOOP) did not come through a magic link.
	 */
	task = bpf_get_current_task_btf();
	nd = task->nameidata;
	if (!nd || !nd->total_link_count)
		return 0;
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st || st->armed == ARMED_NONE)
		return 0;

	/*
	 * Is this the open the link was followed for? The same walk, ending on the link's own
	 * name; or, when only "/" or "/." followed the link, on the link's target. A link that
	 * "/." follows is a middle component, walked before the open's intent is known, so it
	 * was armed as a path operation: the same system call and the target tell.
	 */
	if ((__u64)nd != st->nd)
		return 0;
	if (st->loose) {
		if ((__u64)BPF_CORE_READ(file, f_path.dentry) != st->dentry ||
		    (st->armed == ARMED_PATH_OP && st->syscall != current_syscall(task)))
			return 0;
	} else if (st->armed != ARMED_OPEN || (__u64)nd->last.name != st->last_name ||
		   BPF_CORE_READ(nd, last.hash_len) != st->last_hash_len) {
		return 0;
	}
	st->armed = ARMED_NONE;

	cfg = bpf_map_lookup_elem(&settings, &zero);
	if (!cfg)
		return 0;
	c.canary = cfg->canary_tgid && cfg->canary_tgid == bpf_get_current_pid_tgid() >> 32;
	if (!cfg->enabled && !c.canary)
		return 0;

	c.task = task;
	c.policy = policy_of(task);
	c.hook = NODEFD_HOOK_OPEN;
	c.kind = st->kind;
	c.holder_tgid = st->holder_tgid;
	c.fd = st->fd;
	c.file = file;
	/* Read, not loaded: the global functions take them as plain numbers. */
	c.dentry = BPF_CORE_READ(file, f_path.dentry);
	c.mnt = BPF_CORE_READ(file, f_path.mnt);
	c.req_mode = file->f_mode;
	c.req_flags = file->f_flags;

	/*
	 * An fd or exe link always has an original file. If it was not found at the link, or is
	 * not the file opened (dup2 between the link and the open), read the holder again; if
	 * that does not give the file opened either, refuse (fail closed).
	 */
	if ((st->kind == NODEFD_KIND_FD || st->kind == NODEFD_KIND_EXE) &&
	    (!st->has_origin || (__u64)c.dentry != st->dentry || (__u64)c.mnt != st->mnt)) {
		struct task_struct *holder = pid_task_of((struct pid *)st->holder);
		struct file *f = NULL;

		count(NODEFD_CNT_RACE);
		if (holder && st->kind == NODEFD_KIND_FD)
			f = fd_file(holder, st->fd);
		else if (holder)
			f = BPF_CORE_READ(holder, mm, exe_file);
		if (f)
			origin_from_file(st, f);
		if (!f || (__u64)c.dentry != st->dentry || (__u64)c.mnt != st->mnt) {
			c.orig_mode = st->orig_mode;
			c.orig_flags = st->orig_flags;
			return verdict(&c, NODEFD_RULE_UPGRADE,
				       f ? NODEFD_REASON_RACE : NODEFD_REASON_NO_ORIGIN, NULL) ?
				       -EACCES : 0;
		}
	}
	c.orig_mode = st->orig_mode;
	c.orig_flags = st->orig_flags;

	err = st->has_origin ? judge_access(&c) : 0;
	if (judge_place(&c, cfg))
		err = -EACCES;
	return err;
}

/*
 * The walk of the system call now acting on @d ended on a magic link: its state, used up, or
 * NULL. The walk is over when these hooks run, so it is matched by the system call (number and
 * first arguments) and the target.
 */
static __always_inline struct task_state *path_op_origin(struct task_struct *task, __u64 d)
{
	struct task_state *st = bpf_task_storage_get(&task_state, task, 0, 0);

	if (!st || st->armed != ARMED_PATH_OP || st->dentry != d ||
	    st->syscall != current_syscall(task))
		return NULL;
	st->armed = ARMED_NONE;
	return st;
}

/* Fills @c for a path operation of @hook on @dentry/@mnt; false when nodefd is off. */
static __always_inline bool path_op_ctx(struct ctx *c, struct task_struct *task, __u8 hook,
					__u64 dentry, __u64 mnt, const struct nodefd_config **cfgp)
{
	__u32 zero = 0;
	const struct nodefd_config *cfg = bpf_map_lookup_elem(&settings, &zero);

	if (!cfg || !cfg->enabled)
		return false;
	count(NODEFD_CNT_CHECKED);
	c->task = task;
	c->policy = policy_of(task);
	c->hook = hook;
	c->dentry = (struct dentry *)dentry;
	c->mnt = (struct vfsmount *)mnt;
	*cfgp = cfg;
	return true;
}

static __always_inline void ctx_origin(struct ctx *c, const struct task_state *st)
{
	c->kind = st->kind;
	c->holder_tgid = st->holder_tgid;
	c->fd = st->fd;
	c->orig_mode = st->orig_mode;
	c->orig_flags = st->orig_flags;
}

/*
 * truncate("/proc/self/fd/N") destroys the file's data as open(O_TRUNC) does: the same upgrade
 * and append rules, on the file the link came from (ancestors and reach were judged at it).
 */
SEC("lsm/path_truncate")
int BPF_PROG(nodefd_path_truncate, const struct path *path, int ret)
{
	const struct nodefd_config *cfg;
	struct task_struct *task;
	struct task_state *st;
	struct ctx c = {};
	__u64 d;

	if (ret)
		return ret;
	task = bpf_get_current_task_btf();
	d = (__u64)BPF_CORE_READ(path, dentry);
	st = path_op_origin(task, d);
	if (!st || !st->has_origin)
		return 0;
	if (!path_op_ctx(&c, task, NODEFD_HOOK_TRUNCATE, d, (__u64)BPF_CORE_READ(path, mnt), &cfg))
		return 0;
	ctx_origin(&c, st);
	c.req_mode = FMODE_WRITE;
	c.req_flags = O_TRUNC;
	return judge_access(&c);
}

/*
 * linkat(fd, "", newdir, name, AT_EMPTY_PATH) gives the file behind fd a new name, the same
 * thing linkat(AT_FDCWD, "/proc/self/fd/<fd>", ..., AT_SYMLINK_FOLLOW) does through the magic
 * link. Up to 6.9 it needs CAP_DAC_READ_SEARCH; since 6.10 any caller may do it with an fd it
 * opened itself. The new name is then open to whatever the file's own mode allows, so it is
 * judged as the walk through the link is: the source must be reachable now.
 *
 * The hook sees only the dentries; whether this link is fd-based comes from the system call's
 * own arguments (x86-64 and ia32 linkat), and the fd must hold exactly the source. An
 * io_uring worker has no such arguments to read: every link it makes is judged.
 *
 * Either way, an O_TMPFILE file that was never linked has no name to be reached by: a name
 * given to it opens it as its mode allows, so the fd it came from must have been open for
 * writing (as the O_TMPFILE open itself always is).
 */
#define NR_LINKAT_X86_64 265
#define NR_LINKAT_IA32 303
#define USER32_CS 0x23
#define AT_EMPTY_PATH 0x1000
#define PF_IO_WORKER 0x00000010

static __always_inline struct file *linkat_fd(struct task_struct *task, __u64 old_dentry, int *fdp)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(task);
	unsigned long nr, dfd, flags;
	struct file *f;

	if (!regs)
		return NULL;
	nr = BPF_CORE_READ(regs, orig_ax);
	/* cs is a u16 in a union with a u64 since 6.9 (FRED): only its low 16 bits count. */
	if ((BPF_CORE_READ(regs, cs) & 0xffff) == USER32_CS) {
		if (nr != NR_LINKAT_IA32)
			return NULL;
		dfd = BPF_CORE_READ(regs, bx);
		flags = BPF_CORE_READ(regs, di);
	} else {
		if (nr != NR_LINKAT_X86_64)
			return NULL;
		dfd = BPF_CORE_READ(regs, di);
		flags = BPF_CORE_READ(regs, r8);
	}
	if (!(flags & AT_EMPTY_PATH) || (int)dfd < 0)
		return NULL;
	f = fd_file(task, (int)dfd);
	if (!f || (__u64)BPF_CORE_READ(f, f_path.dentry) != old_dentry)
		return NULL;
	*fdp = (int)dfd;
	return f;
}

SEC("lsm/path_link")
int BPF_PROG(nodefd_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	const struct nodefd_config *cfg;
	struct task_struct *task;
	struct task_state *st = NULL;
	struct file *f = NULL;
	struct ctx c = {};
	bool tmpfile;
	__u64 d = 0;
	int err = 0;

	if (ret)
		return ret;
	task = bpf_get_current_task_btf();
	/* A copy, not the trusted argument: the global functions take it as a plain number. */
	bpf_probe_read_kernel(&d, sizeof(d), &ctx[0]);
	c.fd = -1;
	f = linkat_fd(task, d, &c.fd);
	if (!f) {
		st = path_op_origin(task, d);
		if (!st && !(task->flags & PF_IO_WORKER))
			return 0;	/* a link by name: never judged */
	}
	/* A link never crosses mounts: the source is on the new directory's mount. */
	if (!path_op_ctx(&c, task, NODEFD_HOOK_LINK, d, (__u64)BPF_CORE_READ(new_dir, mnt), &cfg))
		return 0;
	tmpfile = !BPF_CORE_READ(old_dentry, d_inode, i_nlink) && nodefd_is_tmpfile(d);
	if (f) {
		c.kind = NODEFD_KIND_FD;
		c.holder_tgid = task->tgid;
		c.orig_mode = BPF_CORE_READ(f, f_mode);
		c.orig_flags = BPF_CORE_READ(f, f_flags);
	} else if (st) {
		ctx_origin(&c, st);
	}
	if (tmpfile && (f || (st && st->has_origin))) {
		c.req_mode = FMODE_WRITE;
		err = judge_access(&c);
	}
	/* Through the link, ancestors and reach were judged at it. */
	if (!st && judge_place(&c, cfg))
		err = -EACCES;
	return err;
}
