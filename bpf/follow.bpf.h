/* SPDX-License-Identifier: GPL-2.0 */
/* follow.bpf.h - the steps of the link hook: whose link, what it shows, what follows it */
#ifndef __NODEFD_FOLLOW_BPF_H
#define __NODEFD_FOLLOW_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "nodefd.h"
#include "compat.bpf.h"
#include "common.bpf.h"
#include "syscall.bpf.h"
#include "events.bpf.h"
#include "policy.bpf.h"
#include "origin.bpf.h"
#include "take.bpf.h"
#include "link.bpf.h"
#include "decide.bpf.h"
#include "jump.bpf.h"

/*
 * Is a walk through a link of @kind, whose owner is @owner (OWNER_*), judged at its jump where
 * the kernel has a hook there (jump_judge())? Another process's fd, cwd or root that the
 * walker could not take: the walk is judged by name, and the place it lands on is the one to
 * judge.
 */
static __always_inline bool jump_judged(__u8 kind, __u8 owner)
{
	return owner == OWNER_UNTAKEN &&
	       (kind == NODEFD_KIND_FD || kind == NODEFD_KIND_CWD || kind == NODEFD_KIND_ROOT);
}

/* A link's state, before anything of this link is known. */
static __always_inline void link_state_reset(struct task_state *st, __u8 kind)
{
	st->armed = ARMED_NONE;
	watch_to(st, WATCH_NONE);	/* an earlier walk's, or this one's RCU pass: no jump came */
	st->kind = kind;
	st->has_origin = 0;
	st->fd = -1;
	st->dentry = st->mnt = 0;
	st->orig_cred = 0;
	st->orig_mode = st->orig_flags = 0;
}

/*
 * Whose link it is, what it shows (origin.bpf.h), and whether the walker could take that
 * (take.bpf.h). If it could not, the holder's fd is not the walker's: its access does not
 * count, and the walk's jump is watched.
 */
static __always_inline void link_holder(struct task_state *st, struct task_struct *task,
					const struct proc_head *h, __u8 kind, struct dentry *dentry,
					const bool cast)
{
	struct task_struct *holder;
	bool self;

	st->holder = h->pid;
	/* /proc/self: the holder is the task itself, whose fields are plain loads. */
	self = h->pid == (__u64)task->thread_pid;
	/* An untyped pointer either way: two kinds of it would double what the verifier walks. */
	holder = self ? (void *)bpf_get_current_task() : pid_task_of((struct pid *)st->holder);
	if (self)
		st->holder_tgid = (__u32)task->tgid;
	else
		st->holder_tgid = holder ? (__u32)BPF_CORE_READ(holder, tgid) : 0;
	if (holder)
		origin_of_link(st, task, holder, self, kind, h->fd, dentry, cast);
	st->owner = self || !holder ? OWNER_SELF : link_owner(task, holder, kind);
}

/*
 * What follows the link's name in the walk @nd, whose flags are @flags (TAIL_*). Nothing more
 * to walk when link_path_walk() has cleared LOOKUP_PARENT: the link is the path's last
 * component ("fd/N", "fd/N/"), as in every reopen, and no string is read. Else
 * what follows it is read (hash_len is len << 32 | hash, hashlen_len()): more components, or
 * only "/" and ".". A symlink followed in the middle of the walk has no LOOKUP_OPEN
 * (open_last_lookups() clears it when it follows a symlink).
 */
static __always_inline int walk_tail(struct nameidata *nd, unsigned int flags)
{
	if (!(flags & LOOKUP_PARENT))
		return TAIL_NONE;
	return tail_kind((void *)((__u64)nd->last.name + (last_hash_len(nd) >> 32)));
}

/* The same at the link hook, with the walk's place kept in @st for the open to match. */
static __always_inline int link_tail(struct task_state *st, struct nameidata *nd)
{
	int tail;

	st->nd = (__u64)nd;
	st->last_name = (__u64)nd->last.name;
	st->last_hash_len = last_hash_len(nd);
	tail = walk_tail(nd, nd->flags);
	/* Matched by its target at the open, so only with a target known: else judged here. */
	if (tail == TAIL_SAME && !st->dentry)
		tail = TAIL_MORE;
	st->loose = tail == TAIL_SAME;
	return tail;
}

/*
 * A walk that ends on the link's target without an open. Is it judged by name here? 1: what
 * the fd does not allow (a bind mount of its file; connect(), xattrs and watches for an
 * O_PATH fd), whoever holds the fd. -1: nothing to judge, from a link the walker has: a file
 * is no more than its fd gives, a directory's metadata no more than fstat() of it gives, and
 * a directory is where a walk goes on from later, judged then. 0: as the link's owner says.
 */
static __always_inline int path_op_by_name(const struct task_state *st, struct task_struct *task,
					   struct nameidata *nd)
{
	if (st->has_origin &&
	    syscall_beyond_fd(task, (st->orig_mode & FMODE_PATH) || (st->orig_flags & O_NODE)))
		return 1;
	if (st->owner == OWNER_SELF &&
	    ((st->has_origin && !is_dir(st->dentry)) || syscall_class(task, nd) == SYS_META))
		return -1;
	return 0;
}

/*
 * The link hook, in two programs: with @cast (6.2 and later), the proc inode, the walker's fd
 * slot and the open file are plain loads through bpf_rdonly_cast() instead of reads.
 */
static __always_inline int follow_link(struct dentry *dentry, struct inode *inode, int ret,
				       const bool cast)
{
	struct task_struct *task;
	struct proc_head h = {};
	struct nodefd_config *cfg = NULL;
	struct task_state *st;
	struct proc_inode *pi;
	struct nameidata *nd;
	struct ctx c = {};
	int by_name = 0;
	__u8 kind;
	int tail;

	if (ret)
		return ret;
	/* Every symlink follow on the machine pays this compare. */
	if (inode->i_sb->s_magic != PROC_SUPER_MAGIC)
		return 0;

	task = bpf_get_current_task_btf();
	pi = (void *)inode - bpf_core_field_offset(struct proc_inode, vfs_inode);
	kind = link_kind(inode->i_op->get_link, pi, &h, cast);
	/*
	 * Not a magic link (/proc/self itself, which every walk through /proc/self/fd follows):
	 * nothing to record. What an earlier walk left armed is not this walk's: the hooks at
	 * the end match the walk, which must end on a magic link's jump, or the system call.
	 */
	if (kind == NODEFD_KIND_NONE)
		return 0;
	cfg = bpf_map_lookup_elem(&settings, &zero_key);
	c.canary = cfg && cfg->canary_tgid && cfg->canary_tgid == bpf_get_current_pid_tgid() >> 32;
	if (!cfg || (!cfg->enabled && !c.canary)) {
		/* Off: whatever an earlier link left must not apply once on again. */
		st = bpf_task_storage_get(&task_state, task, 0, 0);
		if (st) {
			st->armed = ARMED_NONE;
			watch_to(st, WATCH_NONE);
		}
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
	link_state_reset(st, kind);
	link_holder(st, task, &h, kind, dentry, cast);

	nd = task->nameidata;
	if (!nd)
		return 0;	/* not a path walk (cannot happen: the hook is called from one) */
	tail = link_tail(st, nd);

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
	if (tail != TAIL_MORE) {
		/*
		 * The walk ends on the link's target without an open (truncate, linkat, stat, an
		 * O_PATH open, ...): a hook on what the system call then does to it judges the
		 * access.
		 */
		st->armed = ARMED_PATH_OP;
		st->syscall = current_syscall(task);
		by_name = path_op_by_name(st, task, nd);
		if (by_name < 0)
			return 0;
	}
	/* Another process's place that the walker could take: nothing more than that. */
	if (!by_name && st->owner == OWNER_TAKEN)
		return 0;
	/* One it could not, where the kernel has a hook at the jump: judged where it lands. */
	if (jump_hook && jump_judged(kind, st->owner))
		return 0;
	if (judge_place(&c))
		return -EACCES;
	return jump_guard_arm(&c, st, nd, (__u64)dentry);
}

/**
 * jump_judge() - the jump of a proc magic link, in the kernel's hook there (magiclink_jump)
 * @link: the magic link.
 * @target: where it lands.
 * @flags: the walk's LOOKUP_* flags.
 *
 * Another process's fd, cwd or root, through the link of a walker that could not take it
 * (jump_judged()), is no more than what the walker reaches by name: the link hook leaves the
 * walk to this hook, which judges the place the walk lands on, whatever the holder did to its
 * fd table or cwd in between. What the link is comes from the link's own proc inode, and
 * whether the walk ends there from the walk: no state is kept between the two hooks. The
 * trailing link of an open is judged on the file opened (file_open), as everywhere.
 *
 * Return: 0, or -EACCES, which ends the walk.
 */
static __always_inline int jump_judge(const struct path *link, const struct path *target,
				      unsigned int flags)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_struct *holder;
	struct nodefd_config *cfg;
	struct proc_head h = {};
	struct proc_inode *pi;
	struct nameidata *nd;
	struct inode *inode;
	struct ctx c = {};
	__u8 kind;

	/*
	 * An open whose last component is the link, as every reopen is: judged on the file
	 * opened (file_open). Nothing to read for it: the check costs what the guard's does.
	 */
	if ((flags & LOOKUP_OPEN) && !(flags & LOOKUP_PARENT))
		return 0;
	/* Plain loads: the hook's arguments are the kernel's pointers. */
	inode = link->dentry->d_inode;
	if (!inode || inode->i_sb->s_magic != PROC_SUPER_MAGIC)
		return 0;
	pi = (void *)inode - bpf_core_field_offset(struct proc_inode, vfs_inode);
	kind = link_kind(inode->i_op->get_link, pi, &h, false);
	if (kind != NODEFD_KIND_FD && kind != NODEFD_KIND_CWD && kind != NODEFD_KIND_ROOT)
		return 0;
	if (h.pid == (__u64)task->thread_pid)
		return 0;	/* /proc/self: the walker's own */
	nd = task->nameidata;
	if (!nd)
		return 0;
	/* "fd/N/." and the like: the open's last component all the same (link_tail()). */
	if ((flags & LOOKUP_OPEN) && walk_tail(nd, flags) != TAIL_MORE)
		return 0;
	cfg = bpf_map_lookup_elem(&settings, &zero_key);
	c.canary = cfg && cfg->canary_tgid && cfg->canary_tgid == bpf_get_current_pid_tgid() >> 32;
	if (!cfg || (!cfg->enabled && !c.canary))
		return 0;
	holder = pid_task_of((struct pid *)h.pid);
	if (!holder || !jump_judged(kind, link_owner(task, holder, kind)))
		return 0;

	c.task = task;
	c.hook = NODEFD_HOOK_FOLLOW;
	c.kind = kind;
	c.holder_tgid = (__u32)BPF_CORE_READ(holder, tgid);
	c.fd = kind == NODEFD_KIND_FD ? (__s32)h.fd : -1;
	c.policy = policy_of(task);
	/* Read, not loaded: the global functions take them as plain numbers. */
	c.dentry = BPF_CORE_READ(target, dentry);
	c.mnt = BPF_CORE_READ(target, mnt);
	return judge_place(&c);
}

#endif /* __NODEFD_FOLLOW_BPF_H */
