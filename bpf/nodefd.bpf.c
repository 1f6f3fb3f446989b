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
 *   mounts.bpf.h   what the opener's mount namespace shows: aliases, binds, over-mounts
 *   policy.bpf.h   the cgroup's policy, and what it makes of a failed rule
 *   events.bpf.h   what a decision reports
 *   common.bpf.h   constants, maps, and the state a walk carries from the link to its end
 *   decide.bpf.h   the rules: within the original file's access, or by name
 *   follow.bpf.h   the link hook's steps: whose link, what it shows, what follows it
 *   open.bpf.h     file_open's steps: which open a link armed, its context, its origin
 *   pathop.bpf.h   what the hooks at the end of a walk share
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
#include "pathop.bpf.h"
#include "open.bpf.h"
#include "follow.bpf.h"

char LICENSE[] SEC("license") = "GPL";

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
	jump_guard_check(path);
	return 0;
}

/*
 * The same jump where the kernel has an LSM hook there (kernel-config/patches/0005): the
 * place it lands on is judged there, and a refusal ends the walk (follow.bpf.h,
 * jump_judge()). Loaded in place of the fentry program (loader.c).
 */
SEC("lsm/magiclink_jump")
int BPF_PROG(nodefd_nd_jump_link___hook, const struct path *link, const struct path *target,
	     unsigned int lookup_flags, bool last, int mask, int ret)
{
	if (ret)
		return ret;	/* another LSM refused it: nothing to add */
	return jump_judge(link, target, lookup_flags);
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
