/* SPDX-License-Identifier: GPL-2.0 */
/* open.bpf.h - the steps of file_open: which open a link armed, its context, its origin */
#ifndef __NODEFD_OPEN_BPF_H
#define __NODEFD_OPEN_BPF_H

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
#include "link.bpf.h"
#include "decide.bpf.h"
#include "pathop.bpf.h"

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

#endif /* __NODEFD_OPEN_BPF_H */
