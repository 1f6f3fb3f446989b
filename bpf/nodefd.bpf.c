// SPDX-License-Identifier: GPL-2.0
/* nodefd.bpf.c - BPF LSM programs that judge what comes through a proc magic link */

/*
 * The principle: a walk through a proc magic link (/proc/PID/fd/N, exe, cwd, root,
 * map_files) gives the opener no more than it could have without the link, that is the access
 * of the open file the link comes from, or what the kernel's normal rules give the opener now
 * by name, from its own root, with its own credentials. docs/design.md has the whole argument;
 * the pieces are in files by concern:
 *
 *   link.bpf.h     which magic link a walk follows, and what of the path comes after it
 *   jump.bpf.h     did a walk through another process's link land where it was judged
 *   take.bpf.h     could the walker take another process's fds (pidfd_getfd(): ptrace rules)
 *   syscall.bpf.h  the system call being made, and what sees its result (x86-64)
 *   origin.bpf.h   the open file behind it (the holder's fd table, exe, linkat's fd)
 *   perm.bpf.h     search permission on a directory, as generic_permission() computes it
 *   reach.bpf.h    could the opener name the target now: root, mounts, every ancestor
 *   policy.bpf.h   the cgroup's policy, and what it makes of a failed rule
 *   events.bpf.h   what a decision reports
 *   common.bpf.h   constants, maps, and the state a walk carries from the link to its end
 *   decide.bpf.h   the rules: within the original file's access, or by name
 *
 * This file holds the programs; decide.bpf.h the decision. inode_follow_link recognises the
 * link and records what it leads to in task storage, with the identity of the walk. The hook
 * at the end of the walk (file_open, path_truncate, path_link) judges the result. nd_jump_link,
 * traced, checks where a walk through another process's link landed (jump.bpf.h):
 *
 *   - an open of the target: allowed within the original file's access (upgrade, append);
 *     beyond it only if the opener could open it by name (ancestors, reach), and never under
 *     a strict policy. A link with no open file behind it (cwd, root): by name.
 *   - a walk that goes on through the link, or ends on a directory (chdir, a relative walk
 *     later): by name, at the link. Going on from a directory is more than the directory's
 *     own access: it is what CVE-2024-21626 did with a leaked fd. Reading a directory's
 *     metadata (stat) is not: fstat() of the fd gives it.
 *   - another operation on a file at the end of the walk: truncate as an open for writing;
 *     linkat by name (a new name must be one the opener could make), and an O_TMPFILE never
 *     linked only from an fd open for writing; the rest (stat, an O_PATH open, ...) is no
 *     more than the fd itself allows.
 *   - another process's link: what the walker could take from that process (pidfd_getfd(),
 *     take.bpf.h) is its own; for a walker that could not, only its name counts.
 *
 * Return values: only 0 or a negative errno (a positive value from file_open oopses Linux 6.1).
 */

#include "vmlinux.h"	/* bpf/kernel_types.h, or VMLINUX_H (see the Makefile) */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "nodefd.h"
#include "compat.bpf.h"
#include "common.bpf.h"
#include "syscall.bpf.h"
#include "events.bpf.h"
#include "policy.bpf.h"
#include "perm.bpf.h"
#include "reach.bpf.h"
#include "origin.bpf.h"
#include "take.bpf.h"
#include "link.bpf.h"
#include "decide.bpf.h"
#include "jump.bpf.h"

char LICENSE[] SEC("license") = "GPL";

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
 * What follows the link's name (TAIL_*), with the walk's place kept in @st for the open to
 * match. Nothing more to walk when link_path_walk() has cleared LOOKUP_PARENT: the link is the
 * path's last component ("fd/N", "fd/N/"), as in every reopen, and no string is read. Else
 * what follows it is read (hash_len is len << 32 | hash, hashlen_len()): more components, or
 * only "/" and ".". A symlink followed in the middle of the walk has no LOOKUP_OPEN
 * (open_last_lookups() clears it when it follows a symlink).
 */
static __always_inline int link_tail(struct task_state *st, struct nameidata *nd)
{
	int tail;

	st->nd = (__u64)nd;
	st->last_name = (__u64)nd->last.name;
	st->last_hash_len = last_hash_len(nd);
	if (nd->flags & LOOKUP_PARENT)
		tail = tail_kind((void *)(st->last_name + (st->last_hash_len >> 32)));
	else
		tail = TAIL_NONE;
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
	if (judge_place(&c))
		return -EACCES;
	return jump_guard_arm(&c, st, nd, (__u64)dentry);
}

SEC("lsm/inode_follow_link")
int BPF_PROG(nodefd_inode_follow_link, struct dentry *dentry, struct inode *inode, bool rcu,
	     int ret)
{
	return follow_link(dentry, inode, ret, false);
}

SEC("lsm/inode_follow_link")
int BPF_PROG(nodefd_inode_follow_link___cast, struct dentry *dentry, struct inode *inode,
	     bool rcu, int ret)
{
	return follow_link(dentry, inode, ret, true);
}

/* The jump of every proc magic link: the guard checks a watched walk's (jump.bpf.h). */
SEC("fentry/nd_jump_link")
int BPF_PROG(nodefd_nd_jump_link, const struct path *path)
{
	return jump_guard_check(path);
}

/* Fills @c for a path operation of @hook on @dentry/@mnt; false when nodefd is off. */
static __always_inline bool path_op_ctx(struct ctx *c, struct task_struct *task, __u8 hook,
					__u64 dentry, __u64 mnt)
{
	const struct nodefd_config *cfg = bpf_map_lookup_elem(&settings, &zero_key);

	if (!cfg || !cfg->enabled)
		return false;
	count(NODEFD_CNT_CHECKED);
	c->task = task;
	c->policy = policy_of(task);
	c->hook = hook;
	c->dentry = (struct dentry *)dentry;
	c->mnt = (struct vfsmount *)mnt;
	return true;
}

/* What file_open is left to do once a door has filled the ctx. */
enum open_judge {
	JUDGE_REOPEN = 1,	/* an open file's: within its access, else by name */
	JUDGE_PLACE,		/* no open file behind it: by name */
	JUDGE_RACE,		/* the fd holds another file than the one opened: refused */
	JUDGE_NO_ORIGIN,	/* the fd holds no file any more: refused */
};

/*
 * O_EMPTYPATH (7.2 and later): openat(fd, "", O_EMPTYPATH) opens the file behind fd again with
 * no walk at all, checked against the file's own mode only. That is the reopen of
 * /proc/self/fd/N without the link, so it is judged the same way, with the opener's own fd as
 * the origin. The open took fd's path (nd->path) and nothing else: the fd must still hold a
 * file there, or the opener swapped it since and the open cannot be matched. The cwd
 * (AT_FDCWD) has no open file behind it: it is judged by name, as /proc/self/cwd is. 0,
 * -EACCES, or an enum open_judge with @c filled.
 */
static __always_inline int emptypath_open(struct ctx *c, struct task_struct *task,
					  struct nameidata *nd, struct file *file)
{
	struct filename___any *name;
	struct nodefd_config *cfg;
	struct file *f = NULL;
	char first = 1;
	int dfd;

	/*
	 * Only the open's own file: an overlayfs or FUSE backing file, or an O_TMPFILE's, is
	 * opened under the same nameidata with another path.
	 */
	if (!(nd->flags & LOOKUP_OPEN) || file->f_path.dentry != nd->path.dentry ||
	    file->f_path.mnt != nd->path.mnt)
		return 0;
	name = (struct filename___any *)BPF_CORE_READ(nd, name);
	bpf_probe_read_kernel(&first, 1, BPF_CORE_READ(name, name));
	if (first)
		return 0;	/* a name: a walk like any other */
	dfd = nd->dfd;
	if (dfd < 0 && dfd != AT_FDCWD)
		return 0;	/* open_by_handle_at(): no fd, and CAP_DAC_READ_SEARCH */
	cfg = bpf_map_lookup_elem(&settings, &zero_key);
	if (!cfg || !cfg->enabled)
		return 0;
	count(NODEFD_CNT_CHECKED);
	c->task = task;
	c->hook = NODEFD_HOOK_EMPTYPATH;
	c->holder_tgid = (__u32)task->tgid;
	c->file = file;
	/* Read, not loaded: the global functions take them as plain numbers. */
	c->dentry = BPF_CORE_READ(file, f_path.dentry);
	c->mnt = BPF_CORE_READ(file, f_path.mnt);
	c->req_mode = file->f_mode;
	c->req_flags = file->f_flags;
	c->fd = -1;
	if (dfd == AT_FDCWD) {
		c->kind = NODEFD_KIND_CWD;
		return JUDGE_PLACE;
	}
	c->kind = NODEFD_KIND_FD;
	c->fd = dfd;
	f = fd_file(task, (unsigned int)dfd);
	if (!f || BPF_CORE_READ(f, f_path.dentry) != c->dentry ||
	    BPF_CORE_READ(f, f_path.mnt) != c->mnt) {
		if (f)
			count(NODEFD_CNT_RACE);
		return f ? JUDGE_RACE : JUDGE_NO_ORIGIN;
	}
	c->orig_mode = BPF_CORE_READ(f, f_mode);
	c->orig_flags = BPF_CORE_READ(f, f_flags);
	c->orig_cred = (__u64)BPF_CORE_READ(f, f_cred);
	return JUDGE_REOPEN;
}

/*
 * A hook that could not read the task's state (task_storage_busy()): refused as the link hook
 * refuses a walk whose state it cannot store, reason nomem, in the mode of the opener's policy;
 * nothing when nodefd is off. 0 or -EACCES.
 */
static __always_inline int unknown_state(struct ctx *c, struct task_struct *task, __u8 hook,
					 __u64 dentry, __u64 mnt)
{
	count(NODEFD_CNT_NOMEM);
	if (!path_op_ctx(c, task, hook, dentry, mnt))
		return 0;
	c->fd = -1;
	return verdict(c, NODEFD_RULE_REACH, NODEFD_REASON_NOMEM, NULL) ? -EACCES : 0;
}

/*
 * Is this the open the link was followed for? The same walk, ending on the link's own name; or,
 * when only "/" or "/." followed the link, on the link's target. A link that "/." follows is a
 * middle component, walked before the open's intent is known, so it was armed as a path
 * operation: the same system call and the target tell. Either way the walk ended on the link's
 * jump, ND_JUMPED still set (only "/" and "." followed it). A walk that did not is not the
 * link's, whatever a walk before it left armed (one that failed between its link and its open).
 */
static __always_inline bool open_of_the_link(const struct task_state *st, struct nameidata *nd,
					     struct file *file, struct task_struct *task)
{
	if ((__u64)nd != st->nd || !(nd->state & ND_JUMPED))
		return false;
	if (st->loose)
		return (__u64)BPF_CORE_READ(file, f_path.dentry) == st->dentry &&
		       (st->armed != ARMED_PATH_OP || st->syscall == current_syscall(task));
	return st->armed == ARMED_OPEN && (__u64)nd->last.name == st->last_name &&
	       last_hash_len(nd) == st->last_hash_len;
}

/*
 * The decision's context for an open through the link that armed @st. Returns whether @file is
 * the file the link led to, compared as loaded (the file is the hook's own argument). The
 * global functions take the target as plain numbers: when it is, the state's copies are those
 * numbers; else they are read.
 */
static __always_inline bool open_ctx(struct ctx *c, struct task_struct *task,
				     const struct task_state *st, struct file *file)
{
	bool same = st->has_origin && (__u64)file->f_path.dentry == st->dentry &&
		    (__u64)file->f_path.mnt == st->mnt;

	c->task = task;
	c->hook = NODEFD_HOOK_OPEN;
	c->kind = st->kind;
	c->holder_tgid = st->holder_tgid;
	c->fd = st->fd;
	c->file = file;
	if (same) {
		/* Loaded again: 6.12's verifier makes a number compared equal to a pointer one. */
		c->dentry = (struct dentry *)*(volatile __u64 *)&st->dentry;
		c->mnt = (struct vfsmount *)*(volatile __u64 *)&st->mnt;
	} else {
		c->dentry = BPF_CORE_READ(file, f_path.dentry);
		c->mnt = BPF_CORE_READ(file, f_path.mnt);
	}
	c->req_mode = file->f_mode;
	c->req_flags = file->f_flags;
	return same;
}

/*
 * The original file's access, for an open through the link that armed @st. An fd or exe link
 * always has an original file. If it was not found at the link, or is not the file opened
 * (dup2 between the link and the open), the holder is read again; if that does not give the
 * file opened either, JUDGE_NO_ORIGIN or JUDGE_RACE (fail closed). A map_files origin is the
 * walker's own mapping: another file opened means one of its threads mapped another file at
 * the address in between (JUDGE_RACE). 0 when the origin stands.
 */
static __always_inline int open_origin(struct ctx *c, struct task_state *st, bool same)
{
	if ((st->kind == NODEFD_KIND_FD || st->kind == NODEFD_KIND_EXE) && !same) {
		bool f = origin_read_again(st);

		if (!f || (__u64)c->dentry != st->dentry || (__u64)c->mnt != st->mnt) {
			c->orig_mode = st->orig_mode;
			c->orig_flags = st->orig_flags;
			return f ? JUDGE_RACE : JUDGE_NO_ORIGIN;
		}
	}
	c->orig_mode = st->orig_mode;
	c->orig_flags = st->orig_flags;
	c->orig_cred = st->orig_cred;
	if (st->kind == NODEFD_KIND_MAP_FILES && st->has_origin && !same)
		return JUDGE_RACE;
	/* Another process's fd the walker could not take: its access is not the walker's. */
	if (st->owner == OWNER_UNTAKEN)
		c->orig_mode = c->orig_flags = 0;
	return 0;
}

SEC("lsm/file_open")
int BPF_PROG(nodefd_file_open, struct file *file, int ret)
{
	struct task_struct *task;
	bool same;
	struct nodefd_config *cfg;
	struct task_state *st;
	struct nameidata *nd;
	struct ctx c = {};
	int judge;

	if (ret)
		return ret;
	/*
	 * The fast path, which every open(2) pays: an open whose walk followed no symlink at all
	 * (the walk counts them for ELOOP) did not come through a magic link, and one that
	 * accepts no empty path did not open an fd's file again with no walk.
	 */
	task = bpf_get_current_task_btf();
	nd = task->nameidata;
	if (!nd)
		return 0;
	if (!nd->total_link_count) {
		if (!(nd->flags & LOOKUP_EMPTY))
			return 0;
		judge = emptypath_open(&c, task, nd, file);
		if (judge <= 0)
			return judge;
		if (judge == JUDGE_RACE || judge == JUDGE_NO_ORIGIN)
			goto lost;
		if (judge == JUDGE_PLACE)
			goto by_place;
		goto reopen;
	}
	/*
	 * ND_JUMPED marks a walk whose last step since its last ordinary component was a jump: a
	 * magic link, "..", a mount, an absolute symlink's "/". A walk without it did not end on
	 * a magic link, nor on "/" or "/." after one. So nothing armed is its own: the match
	 * below needs ND_JUMPED. With no walk refused after its jump anywhere, there is nothing
	 * to find in task storage. A watch armed somewhere, a leftover as often as not, does not
	 * make every open on the machine look.
	 */
	if (!(nd->state & ND_JUMPED) && !nodefd_raced)
		return 0;
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st && !task_storage_busy())
		return 0;
	/* Fail closed when what a link of this walk armed is out of reach (jump.bpf.h). */
	if (!st)
		return unknown_state(&c, task, NODEFD_HOOK_OPEN,
				     (__u64)BPF_CORE_READ(file, f_path.dentry),
				     (__u64)BPF_CORE_READ(file, f_path.mnt));
	/*
	 * A watch still armed at an open is a walk's that stopped between its link and its jump
	 * (a permission check of proc_pid_get_link(), an fd closed), or one nd_jump_link could
	 * not take (docs/design.md, Known gaps): dropped, not told apart.
	 */
	if (st->watch != WATCH_NONE)
		watch_to(st, WATCH_NONE);
	if (jump_refused(task, st, true))
		return -EACCES;	/* reported at the jump */
	if (st->armed == ARMED_NONE)
		return 0;

	if (!open_of_the_link(st, nd, file, task))
		return 0;
	st->armed = ARMED_NONE;

	cfg = bpf_map_lookup_elem(&settings, &zero_key);
	if (!cfg)
		return 0;
	c.canary = cfg->canary_tgid && cfg->canary_tgid == bpf_get_current_pid_tgid() >> 32;
	if (!cfg->enabled && !c.canary)
		return 0;

	same = open_ctx(&c, task, st, file);

	judge = open_origin(&c, st, same);
	if (judge)
		goto lost;
	/*
	 * Within the fd's access even with every rule on and no relaxation (c.policy is still
	 * NULL: access_excess() then counts every rule): allowed whatever the policy says, so it
	 * is not looked up, which costs one hash lookup per cgroup level.
	 */
	if (!st->has_origin) {
		/* Another process's cwd or root that the walker could take. */
		if (st->owner == OWNER_TAKEN)
			return 0;
		goto by_place;
	}
reopen:
	if (!access_excess(&c))
		return 0;
	c.policy = policy_of(task);
	return judge_reopen(&c, false);
by_place:
	c.policy = policy_of(task);
	return judge_place(&c);
lost:
	/* The fd's file is not the one opened (dup2 in between), or is gone: fail closed. */
	c.policy = policy_of(task);
	return verdict(&c, NODEFD_RULE_UPGRADE,
		       judge == JUDGE_RACE ? NODEFD_REASON_RACE : NODEFD_REASON_NO_ORIGIN, NULL) ?
		       -EACCES : 0;
}

/*
 * The walk of the system call now acting on @d ended on a magic link: its state, used up, or
 * NULL. The walk is over when these hooks run, so it is matched by the system call (number and
 * first arguments). The same system call on another target than the link hook read means the
 * holder's fd changed in between (dup2): the holder is read again, and if that does not give
 * @d either, *lost is set and the caller refuses (fail closed). (So does a system call made
 * again with the same arguments after the last one failed between its walk and its hook.)
 */
static __always_inline struct task_state *path_op_origin(struct task_struct *task, __u64 d,
							 bool *lost, bool *busy)
{
	struct task_state *st = bpf_task_storage_get(&task_state, task, 0, 0);

	if (!st) {
		/* The state out of reach (jump.bpf.h): the walk may have armed it. */
		*busy = task_storage_busy();
		return NULL;
	}
	if (st->armed != ARMED_PATH_OP || st->syscall != current_syscall(task))
		return NULL;
	st->armed = ARMED_NONE;
	if (st->dentry == d)
		return st;
	*lost = !origin_read_again(st) || st->dentry != d;
	return st;
}

static __always_inline void ctx_origin(struct ctx *c, const struct task_state *st)
{
	c->kind = st->kind;
	c->holder_tgid = st->holder_tgid;
	c->fd = st->fd;
	/* Another process's fd the walker could not take: its access is not the walker's. */
	c->orig_mode = st->owner == OWNER_UNTAKEN ? 0 : st->orig_mode;
	c->orig_flags = st->owner == OWNER_UNTAKEN ? 0 : st->orig_flags;
}

/*
 * truncate("/proc/self/fd/N") destroys the file's data as open(O_TRUNC) does, and is judged as
 * that open would be: within the original file's access (an fd open for writing, not for
 * appending), or what the opener could truncate by name.
 */
SEC("lsm/path_truncate")
int BPF_PROG(nodefd_path_truncate, const struct path *path, int ret)
{
	struct task_struct *task;
	struct task_state *st;
	bool lost = false, busy = false;
	struct ctx c = {};
	__u64 d;

	if (ret)
		return ret;
	task = bpf_get_current_task_btf();
	if (jump_guard_refuses())
		return -EACCES;
	d = (__u64)BPF_CORE_READ(path, dentry);
	st = path_op_origin(task, d, &lost, &busy);
	if (busy)
		return unknown_state(&c, task, NODEFD_HOOK_TRUNCATE, d,
				     (__u64)BPF_CORE_READ(path, mnt));
	if (!st || (!st->has_origin && !lost))
		return 0;
	if (!path_op_ctx(&c, task, NODEFD_HOOK_TRUNCATE, d, (__u64)BPF_CORE_READ(path, mnt)))
		return 0;
	ctx_origin(&c, st);
	if (lost)
		return verdict(&c, NODEFD_RULE_UPGRADE, NODEFD_REASON_RACE, NULL) ? -EACCES : 0;
	c.req_mode = FMODE_WRITE;
	c.req_flags = O_TRUNC;
	return judge_reopen(&c, false);
}


SEC("lsm/path_link")
int BPF_PROG(nodefd_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct task_struct *task;
	struct task_state *st = NULL;
	struct file *f = NULL;
	struct ctx c = {};
	bool tmpfile, lost = false, busy = false;
	__u64 d = 0;
	int err = 0;

	if (ret)
		return ret;
	task = bpf_get_current_task_btf();
	if (jump_guard_refuses())
		return -EACCES;
	/* A copy, not the trusted argument: the global functions take it as a plain number. */
	bpf_probe_read_kernel(&d, sizeof(d), &ctx[0]);
	c.fd = -1;
	f = linkat_fd(task, d, &c.fd);
	if (!f) {
		st = path_op_origin(task, d, &lost, &busy);
		if (busy)
			return unknown_state(&c, task, NODEFD_HOOK_LINK, d,
					     (__u64)BPF_CORE_READ(new_dir, mnt));
		if (!st && !(task->flags & PF_IO_WORKER))
			return 0;	/* a link by name: never judged */
	}
	/* A link never crosses mounts: the source is on the new directory's mount. */
	if (!path_op_ctx(&c, task, NODEFD_HOOK_LINK, d, (__u64)BPF_CORE_READ(new_dir, mnt)))
		return 0;
	tmpfile = !BPF_CORE_READ(old_dentry, d_inode, i_nlink) && nodefd_is_tmpfile(d);
	if (f) {
		c.kind = NODEFD_KIND_FD;
		c.holder_tgid = (__u32)task->tgid;
		c.orig_mode = BPF_CORE_READ(f, f_mode);
		c.orig_flags = BPF_CORE_READ(f, f_flags);
	} else if (st) {
		ctx_origin(&c, st);
	}
	if (tmpfile && lost) {
		err = verdict(&c, NODEFD_RULE_UPGRADE, NODEFD_REASON_RACE, NULL) ? -EACCES : 0;
	} else if (tmpfile && (f || (st && st->has_origin))) {
		c.req_mode = FMODE_WRITE;
		err = judge_reopen(&c, true);
	}
	if (judge_place(&c))
		err = -EACCES;
	return err;
}

/* What a walk refused after its jump would do, where the kernel has a hook for it. */
SEC("lsm/path_mknod")
int BPF_PROG(nodefd_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	return ret ?: jump_guard_refuses();
}

SEC("lsm/path_mkdir")
int BPF_PROG(nodefd_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode,
	     int ret)
{
	return ret ?: jump_guard_refuses();
}

SEC("lsm/path_rmdir")
int BPF_PROG(nodefd_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ?: jump_guard_refuses();
}

SEC("lsm/path_unlink")
int BPF_PROG(nodefd_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	return ret ?: jump_guard_refuses();
}

SEC("lsm/path_symlink")
int BPF_PROG(nodefd_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name, int ret)
{
	return ret ?: jump_guard_refuses();
}

SEC("lsm/path_rename")
int BPF_PROG(nodefd_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	return ret ?: jump_guard_refuses();
}

SEC("lsm/path_chmod")
int BPF_PROG(nodefd_path_chmod, const struct path *path, umode_t mode, int ret)
{
	return ret ?: jump_guard_refuses();
}

/*
 * A task freed with a watch armed (a permission check failed between its link and its jump)
 * or a refused walk not used up (the task exited first) takes them out of the counts
 * (jump.bpf.h). Runs before the kernel frees the task's storage (6.1: the next hook in bpf's
 * list; 6.12: after security_task_free()).
 */
SEC("lsm/task_free")
int BPF_PROG(nodefd_task_free, struct task_struct *task)
{
	struct task_state *st;

	if (!nodefd_watches && !nodefd_raced)
		return 0;
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (st) {
		watch_to(st, WATCH_NONE);
		raced_to(st, 0, 0);
	}
	return 0;
}
