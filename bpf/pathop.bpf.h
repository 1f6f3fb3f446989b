/* SPDX-License-Identifier: GPL-2.0 */
/* pathop.bpf.h - what the hooks at the end of a walk share: the context, the state the link left */
#ifndef __NODEFD_PATHOP_BPF_H
#define __NODEFD_PATHOP_BPF_H

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
#include "jump.bpf.h"

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

#endif /* __NODEFD_PATHOP_BPF_H */
