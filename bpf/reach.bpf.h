/* SPDX-License-Identifier: GPL-2.0 */
/* reach.bpf.h - could the opener name the target now: inside its root, every ancestor searchable */
#ifndef __NODEFD_REACH_BPF_H
#define __NODEFD_REACH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "nodefd.h"
#include "compat.bpf.h"
#include "common.bpf.h"
#include "policy.bpf.h"
#include "perm.bpf.h"
#include "mounts.bpf.h"

#define WALK_BINDS (1U << 0)	/* after a refusal: again, onto the opener's bind mounts */
#define WALK_CRED (1U << 1)	/* for credentials that are not the current task's */

/*
 * One walk from a target up to the opener's root: the directories a lookup by name from the
 * root would search, each checked with may_search(), across mounts by their mountpoints.
 */
struct walk {
	struct opener o;
	struct dentry *d;
	struct mount *m;
	struct dentry *mnt_root;	/* m's root dentry */
	struct dentry *root_d;
	__u64 ns;			/* the opener's struct mnt_namespace * */
	struct dentry *refused;		/* directory that refused search, or NULL */
	struct dentry *up;		/* d's parent, read with the step onto d, or NULL */
	__u64 generic_iop;		/* may_search()'s: inode operations judged here */
	__s8 search;			/* enum search of the refusing directory */
	/* Small, the end in 8 bytes: the walk lives in the deepest call chain's second frame. */
	__u8 binds;			/* bind mounts the walk may still step onto */
	__u8 mode : 2;			/* WALK_* of nodefd_check_place() */
	__u8 up_mounted : 1;		/* with up, read with it: d is a mountpoint */
	__u8 posixacl : 1;		/* m's superblock has SB_POSIXACL */
	__u8 idmapped : 1;		/* m is an idmapped mount */
	__u8 reached_root : 1;
	__u8 done : 1;
	__u8 reach_after : 1;		/* after a refusal, go on for reach with search granted */
	__u8 crossed : 1;		/* climbed from a mount to the one it is mounted on */
	__u8 at_mountpoint : 1;		/* d is the mountpoint the walk just climbed to */
	__u8 hidden : 1;		/* a mount of the opener's covers d */
	__u16 part_start;		/* the loop's index where this part of the walk began */
	__u16 index;			/* the loop's index now */
};

static __always_inline void walk_enter(struct walk *w, struct mount *m)
{
	w->m = m;
	w->mnt_root = BPF_CORE_READ(m, mnt.mnt_root);
	w->posixacl = !!(BPF_CORE_READ(m, mnt.mnt_sb, s_flags) & SB_POSIXACL);
	w->idmapped = mount_idmapped((void *)m + bpf_core_field_offset(struct mount, mnt));
}

/*
 * Is the opener's root PID 1's root directory (on whatever mount)? A task in a mount
 * namespace of its own (PrivateTmp=) but not chrooted. 1 or 0.
 */
static __noinline int root_is_init_root(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct nodefd_config *cfg = bpf_map_lookup_elem(&settings, &zero_key);
	struct inode *root_inode = task->fs->root.dentry->d_inode;

	return cfg && root_inode && root_inode->i_ino == cfg->init_root_ino &&
	       root_inode->i_sb->s_dev == cfg->init_root_dev;
}

/*
 * Read the head of a dentry in one go (d_flags to d_inode, 56 bytes, in a function of its
 * own), or its parent and inode (32 bytes) and its flags apart, inline? Set by nodefdctl: one
 * read from 6.2 on (bpf_rdonly_cast() is its mark), two on 6.1, where they cost less (make
 * bench, by name at depth 64: 434 instructions a directory against 488 on Debian 12; 409
 * against 441 on Debian 13).
 */
const volatile __u8 dentry_head_read = 1;

/*
 * @d's inode, with its parent in @w->up and whether something is mounted on it in
 * @w->up_mounted, which the next step needs, in one read of the dentry's head. A function of
 * its own: its buffer is not in the frame of the walk's callback, which is on the deepest call
 * chain.
 */
static __noinline struct inode *dentry_head(struct walk *w, struct dentry *d)
{
	__u64 h[7];

	bpf_core_read(h, sizeof(h), d);
	w->up = (struct dentry *)h[3];
	w->up_mounted = !!((__u32)h[0] & DCACHE_MOUNTED);
	return (struct inode *)h[6];
}

/*
 * Or without the flags: parent and inode in one read of 32 bytes, in the callback's frame (the
 * step reads the flags apart). Where d_flags heads struct dentry and d_parent and d_inode
 * follow 24 bytes apart (6.1 to 7.3).
 */
static __always_inline struct inode *dentry_up(struct walk *w, struct dentry *d)
{
	__u64 h[4];

	if (bpf_core_field_offset(struct dentry, d_flags) == 0 &&
	    bpf_core_field_offset(struct dentry, d_parent) == 24 &&
	    bpf_core_field_offset(struct dentry, d_inode) == 48) {
		if (dentry_head_read)
			return dentry_head(w, d);
		bpf_core_read(h, sizeof(h), &d->d_parent);
		w->up = (struct dentry *)h[0];
		return (struct inode *)h[3];
	}
	/* Another layout: the flags too, for the step that reads them from here. */
	w->up = BPF_CORE_READ(d, d_parent);
	w->up_mounted = !!(BPF_CORE_READ(d, d_flags) & DCACHE_MOUNTED);
	return BPF_CORE_READ(d, d_inode);
}

/*
 * The walk is at the opener's root directory @w->d on @w->m: is that its root? On the root's
 * own mount, yes. On a mount of another namespace (the opener unshared its own since the file
 * was opened there), yes: the copies show the same tree. The root may also be another mount
 * of the opener's namespace that shows the same directory, a bind mount of it, as after
 * `mount --bind / /x; chroot /x`. Then only if the walk never came up from a mount below. A
 * bind that is not recursive shows none of them. One that is shows copies this walk did not
 * climb (a file below them is refused: docs/design.md, Fail-closed points). If not, the walk
 * goes on up: that mount may itself be mounted below the root (systemd's
 * /run/systemd/unit-root, a recursive bind of /).
 */
static __noinline bool at_root(struct walk *w)
{
	struct task_struct *task = bpf_get_current_task_btf();
	void *root_m = (void *)task->fs->root.mnt - bpf_core_field_offset(struct mount, mnt);
	struct mount *m = w->m;

	return (void *)m == root_m || (__u64)BPF_CORE_READ(m, mnt_ns) != w->ns || !w->crossed;
}

static long walk_step(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	struct dentry *d = w->d, *p;
	int s;

	/*
	 * The loop's index, not a count of our own, which would keep the verifier going. Kept
	 * in the walk, where it costs the callback's frame no room.
	 */
	w->index = (__u16)i;
	if (i - w->part_start >= NODEFD_MAX_DEPTH)
		return 1;	/* not done: too deep */
	/*
	 * The root's dentry, on whatever mount: a process that unshared its mount namespace has
	 * copies of the mounts its files were opened on, and what counts is that the file lies
	 * in the directory tree below its root, not which copy of a mount shows it.
	 */
	if (d == w->root_d && at_root(w)) {
		w->reached_root = true;
		w->done = true;
		return 1;
	}
	if (w->binds && d != w->mnt_root) {
		__u64 bind = nodefd_bind_of((__u64)w->m, w->ns, (__u64)d);

		if (bind) {
			w->binds--;
			w->at_mountpoint = 0;
			walk_enter(w, (struct mount *)bind);
			return 0;	/* d is its root: on to its mountpoint */
		}
	}
	/*
	 * Something mounted on d hides it, and all below it, from the names. The mountpoint the
	 * walk climbed to is covered by the mount it came from, which is the one a lookup enters.
	 * A mount of another namespace (the opener unshared its own since the file was opened
	 * there, or the file is a container's) stands for the one of the opener's namespace that
	 * shows the same directory, if there is one.
	 */
	if (!w->at_mountpoint &&
	    (dentry_head_read && w->up ? w->up_mounted :
					 !!(BPF_CORE_READ(d, d_flags) & DCACHE_MOUNTED))) {
		struct mount *m = w->m;
		__u64 own = (__u64)m;

		/* m in a local: a CO-RE read of w->m would relocate struct walk. */
		if ((__u64)BPF_CORE_READ(m, mnt_ns) != w->ns)
			own = nodefd_mount_alias(own, w->ns, (__u64)w->mnt_root);
		if (own && nodefd_covered(own, (__u64)d)) {
			w->hidden = 1;
			w->done = true;
			return 1;
		}
	}
	if (d == w->mnt_root) {
		struct mount *m = w->m, *pm = BPF_CORE_READ(m, mnt_parent);

		/* A mount of another namespace: go on where the opener's shows the directory. */
		if ((__u64)BPF_CORE_READ(m, mnt_ns) != w->ns) {
			__u64 alias = nodefd_mount_alias((__u64)m, w->ns, (__u64)d);

			if (alias) {
				walk_enter(w, (struct mount *)alias);
				return 0;
			}
		}
		/* Top of the mount tree. The covered mountpoint itself is never searched. */
		if (pm == m) {
			/*
			 * A detached mount (umount -l) is no one's by name, and no more outside a
			 * root that is PID 1's than an unconfined task's reopen of it is.
			 */
			if (w->mode != WALK_CRED && !BPF_CORE_READ(m, mnt_ns) && root_is_init_root())
				w->reached_root = true;
			w->done = true;
			return 1;
		}
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->up = NULL;
		w->crossed = 1;
		w->at_mountpoint = 1;
		walk_enter(w, pm);
		return 0;
	}
	p = w->up ? w->up : BPF_CORE_READ(d, d_parent);
	if (!p || p == d) {
		/* A disconnected dentry: it leads to no root. */
		w->done = true;
		return 1;
	}
	w->d = p;
	w->at_mountpoint = 0;
	if (w->idmapped && !w->o.dac_search) {
		w->up = NULL;	/* p's parent not read: the next step (a second walk) reads it */
		s = SEARCH_IDMAPPED;
	} else {
		s = may_search(&w->o, dentry_up(w, p), w->posixacl, &w->generic_iop);
	}
	if (s == SEARCH_OK)
		return 0;
	w->refused = p;
	w->search = (__s8)s;
	if (w->reach_after) {
		/* Reach is still owed an answer: on up, every directory open, a new depth. */
		w->reach_after = false;
		w->o.dac_search = 1;
		w->part_start = w->index + 1;
		return 0;
	}
	w->done = true;
	return 1;
}

/* Outcome of the ancestors and reach rules for one target. */
struct place {
	__u8 ancestors_reason;	/* enum nodefd_reason, valid if ancestors_fail */
	__u8 reach_reason;
	__u8 ancestors_fail;
	__u8 reach_fail;
	__u8 confined;
	__u8 pad[3];
	__u64 refused;		/* struct dentry * of the directory that refused search */
};

/**
 * nodefd_is_tmpfile() - an O_TMPFILE file never linked?
 * @dentry: the file's dentry.
 *
 * d_tmpfile() names the dentry "#<ino>" and never hashes it.
 *
 * Return: 1 if @dentry is such a file, else 0.
 */
__noinline int nodefd_is_tmpfile(__u64 dentry)
{
	struct dentry *d = (void *)dentry;
	__u64 ino = BPF_CORE_READ(d, d_inode, i_ino);
	char name[24], digits[20];
	int n = 0, len;

	len = (int)bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(d, d_name.name));
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

static __always_inline int search_reason(int s)
{
	if (s == SEARCH_UNKNOWN)
		return NODEFD_REASON_UNKNOWN_ACL;
	if (s == SEARCH_FS_DECIDES)
		return NODEFD_REASON_FS_PERMISSION;
	if (s == SEARCH_IDMAPPED)
		return NODEFD_REASON_IDMAPPED;
	return NODEFD_REASON_RULE;
}


/*
 * Is the current task confined: a root or mount namespace other than PID 1's? 1 or 0, -1 if
 * the settings cannot be read. A function of its own: its registers are not the walk's, so
 * the frame of nodefd_check_place(), on the deepest call chain, stays small.
 */
static __noinline int task_confined(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct nodefd_config *cfg;
	struct inode *root_inode;
	struct mount *root_mnt;

	cfg = bpf_map_lookup_elem(&settings, &zero_key);
	if (!cfg)
		return -1;
	root_inode = task->fs->root.dentry->d_inode;
	root_mnt = (void *)task->fs->root.mnt - bpf_core_field_offset(struct mount, mnt);
	/*
	 * The same directory on another mount (chroot into a bind mount of /, which shows no
	 * mount below it unless recursive) is not the same root.
	 */
	return !(task->nsproxy->mnt_ns->ns.inum == cfg->init_mnt_ns && root_inode &&
		 root_inode->i_ino == cfg->init_root_ino &&
		 root_inode->i_sb->s_dev == cfg->init_root_dev &&
		 (__u32)BPF_CORE_READ(root_mnt, mnt_id) == cfg->init_root_mnt_id);
}

/**
 * nodefd_check_place() - could the opener reach a target by name now
 * @r: the answer, which the caller zeroed (with WALK_BINDS: the answer of a first call);
 *	NULL with @cred.
 * @dentry: the target.
 * @vfsmount: the mount it was reached on.
 * @cred: credentials that are not the current task's (an fd's f_cred), or 0 for the current
 *	task. Credentials have no root of their own: their walk goes to the top of the mount's
 *	namespace, and the answer is the return value.
 * @flags: WALK_BINDS to walk again onto the task's bind mounts after a refusal in @r.
 *
 * For the current task: ancestors (search permission on every directory from its root down)
 * and reach (the target inside its root, for a confined task: one with a root or mount
 * namespace of its own). The one function that walks: the verifier goes through a bpf_loop()
 * callback once for each call site, so every walk of a program comes through here, verified
 * once per program.
 *
 * Return: with @cred, 1 when every directory grants them search; with WALK_BINDS, 1 when
 * the walk cleared @r's refusal; else 0.
 */
__noinline int nodefd_check_place(struct place *r, __u64 dentry, __u64 vfsmount, __u64 cred,
				  __u32 flags)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mount *m = (void *)vfsmount - bpf_core_field_offset(struct mount, mnt);
	struct dentry *d = (void *)dentry;
	struct walk w = { .d = d };
	int confined;

	if (cred) {
		opener_of_cred(&w.o, (const struct cred *)cred);
		w.ns = (__u64)BPF_CORE_READ(m, mnt_ns);
		w.mode = WALK_CRED;
		goto walk;
	}
	if (!r)
		return 0;
	opener_init(&w.o, task);
	w.root_d = task->fs->root.dentry;
	/* Read, not loaded: the global functions take it as a plain number. */
	w.ns = (__u64)BPF_CORE_READ(task, nsproxy, mnt_ns);
	if (flags & WALK_BINDS) {
		if (!(r->ancestors_fail || r->reach_fail) ||
		    (r->ancestors_fail && r->ancestors_reason == NODEFD_REASON_DEPTH) ||
		    (r->reach_fail && r->reach_reason != NODEFD_REASON_OUTSIDE_ROOT &&
		     r->reach_reason != NODEFD_REASON_HIDDEN))
			return 0;
		/* Most systems bind nothing below the root: no second walk then. */
		if (!nodefd_binds_possible((__u64)m, w.ns))
			return 0;
		w.binds = 4;
		w.mode = WALK_BINDS;
		goto walk;
	}

	confined = task_confined();
	if (confined < 0) {
		/* Cannot happen (an array's element); if it did, nothing is known: refuse. */
		r->ancestors_fail = r->reach_fail = true;
		r->ancestors_reason = r->reach_reason = NODEFD_REASON_NOMEM;
		return 0;
	}
	r->confined = (__u8)confined;
	/*
	 * Unconfined, and searching every directory (CAP_DAC_* in the initial user namespace):
	 * the name reaches the target however deep it lies. Nothing to walk, so nothing to
	 * refuse for depth, which another process could choose.
	 */
	if (!confined && w.o.dac_search)
		return 0;

	/*
	 * Hashed, or the root of its mount; an unhashed one lost its name, and is outside every
	 * root a confined task has. For an unconfined task (reach does not apply) and for an
	 * O_TMPFILE never linked, the walk starts at the directory it was in.
	 */
	if (r->confined && !BPF_CORE_READ(d, d_hash.pprev) && BPF_CORE_READ(d, d_parent) != d &&
	    !nodefd_is_tmpfile((__u64)d)) {
		r->reach_fail = true;
		r->reach_reason = NODEFD_REASON_UNLINKED;
		return 0;
	}
	/* A confined task's walk goes on after a refusal: reach is still owed an answer. */
	w.reach_after = r->confined;
walk:
	walk_enter(&w, m);
	bpf_loop(2 * NODEFD_MAX_DEPTH, walk_step, &w, 0);

	/* The mode from the walk: nothing else of the arguments is kept across the loop. */
	if (w.mode == WALK_CRED || !r)
		return w.done && !w.refused && !w.hidden;
	if (w.mode == WALK_BINDS) {
		if (w.done && !w.refused && !w.hidden && (!r->confined || w.reached_root)) {
			r->ancestors_fail = r->reach_fail = false;
			r->refused = 0;
			return 1;
		}
		return 0;
	}
	if (w.refused) {
		r->ancestors_fail = true;
		r->ancestors_reason = (__u8)search_reason(w.search);
		r->refused = (__u64)w.refused;
	}
	if (!w.done) {
		count(NODEFD_CNT_DEPTH_LIMIT);
		/* Too deep before a refusal: neither rule is known; after one, reach is not. */
		if (!w.refused) {
			r->ancestors_fail = true;
			r->ancestors_reason = NODEFD_REASON_DEPTH;
		}
		r->reach_fail = true;
		r->reach_reason = NODEFD_REASON_DEPTH;
		return 0;
	}
	if (w.hidden) {
		r->reach_fail = true;
		r->reach_reason = NODEFD_REASON_HIDDEN;
	} else if (r->confined && !w.reached_root) {
		r->reach_fail = true;
		r->reach_reason = NODEFD_REASON_OUTSIDE_ROOT;
	}
	return 0;
}

/**
 * nodefd_cred_may_open() - generic_permission() for credentials not the current task's
 * @cred_ptr: the credentials (struct cred *).
 * @inode_ptr: the file (struct inode *).
 * @want: MAY_READ (4) and MAY_WRITE (2).
 *
 * The owner, group or other bits, then CAP_DAC_OVERRIDE (or for reading CAP_DAC_READ_SEARCH)
 * where it counts. An ACL on the file is not known here: no.
 *
 * Return: 1 if @want is granted, else 0.
 */
__noinline int nodefd_cred_may_open(__u64 cred_ptr, __u64 inode_ptr, __u32 want)
{
	const struct cred *cred = (void *)cred_ptr;
	struct inode *inode = (void *)inode_ptr;
	struct opener op, *o = &op;
	struct inode_head h;
	__u64 caps = 0, need;
	__u32 mode;

	if (!cred || !inode)
		return 0;
	opener_of_cred(o, cred);
	inode_head_read(inode, &h);
	bpf_core_read(&caps, sizeof(caps), &cred->cap_effective);
	need = 1ULL << CAP_DAC_OVERRIDE;
	if (!(want & 2))
		need |= 1ULL << CAP_DAC_READ_SEARCH;
	if ((caps & need) &&
	    (o->dac_search ||
	     (nodefd_id_mapped(o->user_ns + bpf_core_field_offset(struct user_namespace, uid_map),
			       h.uid) &&
	      nodefd_id_mapped(o->user_ns + bpf_core_field_offset(struct user_namespace, gid_map),
			       h.gid))))
		return 1;
	if (h.uid == o->ids >> 32) {
		mode = h.mode >> 6;
	} else {
		if (h.acl && (void *)h.acl != ACL_NOT_CACHED)
			return 0;	/* an ACL, or none known: not judged for these */
		if ((void *)h.acl == ACL_NOT_CACHED && inode_acl_method(inode) &&
		    !ext4_has_no_xattrs(inode))
			return 0;
		mode = nodefd_in_group(o->groups, o->ngroups, (__u32)o->ids, h.gid) ? h.mode >> 3 :
										     h.mode;
	}
	return (mode & want & 7) == (want & 7);
}

/*
 * After nodefd_check_place() refused (@r): the target's own mounts lead nowhere the current
 * task may go, but a lookup by name also crosses the task's bind mounts of a directory on the
 * way (a chroot's bind of a host directory, a container's volume, a bind of /home). Walks
 * again, stepping onto them (a few: a directory bound below itself is no loop); if that walk
 * passes, @r's refusal is cleared. A failure for depth stands.
 */
static __always_inline int place_by_binds(struct place *r, __u64 dentry, __u64 vfsmount)
{
	return nodefd_check_place(r, dentry, vfsmount, 0, WALK_BINDS);
}

/*
 * Could credentials @cred that are not the current task's (an fd's f_cred) open @dentry on
 * @vfsmount by name now for @want (MAY_READ 4, MAY_WRITE 2): it still has its name, every
 * directory above it up to the top of its mount namespace (credentials have no root of their
 * own) grants them search, and the file's mode grants them @want. An ACL that would count for
 * them is not known here (the ACL walk reads the current task's credentials): no. 1 yes, 0 no.
 */
static __always_inline int cred_opens(__u64 cred, __u64 dentry, __u64 vfsmount, __u32 want)
{
	struct mount *m = (void *)vfsmount - bpf_core_field_offset(struct mount, mnt);
	struct dentry *d = (void *)dentry;
	__u64 ns = (__u64)BPF_CORE_READ(m, mnt_ns);

	if (!cred || !d || !ns || ns == (__u64)MNT_NS_INTERNAL)
		return 0;
	if (!BPF_CORE_READ(d, d_hash.pprev) && BPF_CORE_READ(d, d_parent) != d)
		return 0;	/* unlinked: no name to be opened by */
	if (!nodefd_cred_may_open(cred, (__u64)BPF_CORE_READ(d, d_inode), want))
		return 0;
	return nodefd_check_place(NULL, dentry, vfsmount, cred, 0);
}

#endif /* __NODEFD_REACH_BPF_H */
