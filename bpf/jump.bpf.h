/* SPDX-License-Identifier: GPL-2.0 */
/* jump.bpf.h - the jump after the link: did the walk land where the link hook judged it? */
#ifndef __NODEFD_JUMP_BPF_H
#define __NODEFD_JUMP_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "nodefd.h"
#include "common.bpf.h"
#include "policy.bpf.h"
#include "syscall.bpf.h"
#include "decide.bpf.h"

/*
 * inode_follow_link runs before the kernel reads the holder's fd table (or cwd, or root) to
 * resolve the link. Between the two, a thread sharing the holder's table can dup2() another
 * file onto the fd, or the holder can chdir(): the walk then jumps to a place nobody judged.
 * A trailing open judges the file actually opened, and truncate and linkat judge their own
 * target, so only walks judged at the link can be led elsewhere.
 *
 * Whatever is swapped in is the holder's. A walker that could take the holder's fds
 * (take.bpf.h), the walker itself among them, could have it anyway: its walk is not watched.
 * Any other walker's credentials would be used below a place only the holder holds.
 *
 * So such a walk is watched: nd_jump_link(), which every proc magic link goes through with
 * the path it resolved, is traced (fentry, nothing to pay for any other walk) and compared
 * with what the hook judged. A different place is judged there as the link would have been.
 * An fentry program cannot fail the jump, so what the system call then does is refused by the
 * hook that sees it (SYS_HOOKED, syscall.bpf.h). A system call that only reads metadata
 * (SYS_META) has no hook left to refuse it: the place it read is reported, as audited, and
 * the call goes on. Any other system call (SYS_PLACE: chdir, an O_PATH open, a watch) keeps
 * the place, so such a walk is refused at the link, whatever the holder does.
 *
 * Nothing here depends on when the holder swaps: the walker gets what its own credentials
 * give on the place the walk reached, is refused by what it asked, or is reported. No walker
 * is killed.
 *
 * The guard's interface to the programs, which a kernel hook at the jump would replace:
 *   jump_guard_arm()      at the link, for a walk judged by name: watch its jump, or refuse
 *   jump_guard_check()    at the jump (nd_jump_link): judge where it landed
 *   jump_guard_refuses()  in the hooks after the walk: refuse what a refused jump would do
 *   jump_refused()        in file_open: the same, with the walk's state in hand
 *
 * A kernel with an LSM hook at the jump (magiclink_jump: kernel-config/patches/0005) needs
 * none of this: there the link hook leaves such a walk alone, and the hook at the jump judges
 * the place the walk lands on, from what it is given, and refuses the jump itself, before the
 * walk goes on, whatever the system call (jump_judge(), follow.bpf.h; jump_hook, set by the
 * loader, which loads nodefd_nd_jump_link___hook there in place of the fentry program).
 * Nothing is watched, nothing is refused at the link for what might follow it, nothing is
 * reported instead of refused, and jump_guard_refuses() and jump_refused() never find a
 * refused walk: the counts below stay 0.
 */

/* The kernel calls magiclink_jump, and nodefd's program for it is the one loaded (loader.c). */
const volatile __u8 jump_hook = 0;


/*
 * How many tasks have a watch armed (nd_jump_link has something to compare), and how many a
 * walk refused after its jump (file_open and the path hooks have something to refuse). When
 * none has, those programs need not look their task storage up. That lookup is most of what
 * they cost on every magic-link jump, every walk that followed a symlink, every mkdir.
 * file_open looks after a walk that ended on a jump all the same: an armed open is matched
 * there. A count
 * goes up when a task's state goes from nothing to something, and down when it goes back or
 * the task is freed (nodefd_task_free); a decrement missed (task storage busy on that CPU)
 * leaves it too high, which costs lookups and never skips one that was needed.
 */
__u64 nodefd_watches;
__u64 nodefd_raced;

/*
 * On 6.1, bpf_task_storage_get() gives NULL when this CPU's task-storage lock is held: by a
 * task preempted inside a storage helper (preempt=full), or by what an interrupt cut into.
 * That is not "no state": a hook that finds NULL while the lock is held cannot tell whether
 * the walk armed it, and refuses (reason nomem) instead of letting the operation through.
 * 6.2 on give LSM programs a lookup that waits, and tracing programs one that skips only the
 * creation while the lock is held (bpf_task_storage_get_recur): there NULL is no state. On 6.1
 * nd_jump_link's lookup fails the same way: that jump goes unchecked (docs/design.md, Known
 * gaps).
 * The lock is the per-CPU counter bpf_task_storage_busy, read at this CPU's offset, both
 * found in kallsyms (data symbols: CONFIG_KALLSYMS_ALL, as Debian's kernels have it); where
 * they are not, nothing can be told, as before.
 */
extern const void bpf_task_storage_busy __ksym __weak;
extern const void __per_cpu_offset __ksym __weak;
/* Since 6.2, tracing programs' lookup, the mark of a kernel whose lookups do not fail. */
extern const void bpf_task_storage_get_recur __ksym __weak;

#define NODEFD_MAX_CPUS 8192

static __always_inline bool task_storage_busy(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 off = 0;
	int busy = 0;

	if (&bpf_task_storage_get_recur)
		return false;	/* 6.2 on: a lookup fails only for want of storage */
	if (!&bpf_task_storage_busy || !&__per_cpu_offset || cpu >= NODEFD_MAX_CPUS)
		return false;
	bpf_probe_read_kernel(&off, sizeof(off), (const __u64 *)&__per_cpu_offset + cpu);
	bpf_probe_read_kernel(&busy, sizeof(busy), (const char *)&bpf_task_storage_busy + off);
	return busy != 0;
}

static __always_inline void watch_to(struct task_state *st, __u8 watch)
{
	if (!st->watch && watch)
		__sync_fetch_and_add(&nodefd_watches, 1);
	else if (st->watch && !watch)
		__sync_fetch_and_add(&nodefd_watches, (__u64)-1);
	st->watch = watch;
}

static __always_inline void raced_to(struct task_state *st, __u64 nd, __u64 syscall)
{
	if (!st->raced_syscall && syscall)
		__sync_fetch_and_add(&nodefd_raced, 1);
	else if (st->raced_syscall && !syscall)
		__sync_fetch_and_add(&nodefd_raced, (__u64)-1);
	st->raced_nd = nd;
	st->raced_syscall = syscall;
}

/*
 * The symlink the walk @nd is following (the top of its stack of them: pick_link() pushes it
 * before the link hook and ->get_link() run, nd_jump_link() is called from the latter), as a
 * number; 0 if none. Read only when a watch is armed.
 */
static __always_inline __u64 jump_link(const struct nameidata *nd)
{
	__u64 stack = (__u64)BPF_CORE_READ(nd, stack), d = 0;
	unsigned int depth = BPF_CORE_READ(nd, depth);

	if (!stack || !depth)
		return 0;
	bpf_probe_read_kernel(&d, sizeof(d),
			      (void *)(stack + (depth - 1) * bpf_core_type_size(struct saved) +
				       bpf_core_field_offset(struct saved, link.dentry)));
	return d;
}

/*
 * Is the system call being made one whose walk was refused after its jump? The walk's
 * nameidata, while the walk is on; the system call, after. Used up when it is, if @use_up: not
 * by a path hook inside the walk (an O_CREAT open's path_mknod, whose refusal only drops
 * O_CREAT: the open goes on to a file that exists), whose file_open refuses it again. (An
 * open that then fails leaves it: docs/design.md, Fail-closed points.)
 */
static __always_inline bool jump_refused(struct task_struct *task, struct task_state *st,
					 bool use_up)
{
	struct nameidata *walk = task->nameidata;
	__u64 nd = (__u64)walk;

	/* While a walk is on, only one that followed a link can be the refused one. */
	if (!st || !st->raced_syscall || (nd && (nd != st->raced_nd || !walk->total_link_count)) ||
	    st->raced_syscall != current_syscall(task))
		return false;
	if (use_up)
		raced_to(st, 0, 0);
	return true;
}

/*
 * At the link hook, for a walk it judged by name and let go on: watch its jump if the link is
 * another process's fd, cwd or root, and the walker could not take what it shows
 * (OWNER_UNTAKEN); or refuse the walk now if what follows it keeps the place. 0 or -EACCES.
 */
static __always_inline int jump_guard_arm(struct ctx *c, struct task_state *st,
					  const struct nameidata *nd, __u64 link)
{
	__u8 class, mode, reach;

	if (st->owner != OWNER_UNTAKEN || (c->kind != NODEFD_KIND_FD && c->kind != NODEFD_KIND_CWD &&
			     c->kind != NODEFD_KIND_ROOT))
		return 0;
	mode = rule_mode(c, NODEFD_RULE_ANCESTORS);
	reach = rule_mode(c, NODEFD_RULE_REACH);
	if (reach > mode)
		mode = reach;	/* off < audit < enforce */
	if (mode == NODEFD_MODE_OFF)
		return 0;	/* nothing is judged by name: nothing to watch */
	st->watch_link = link;	/* which jump is this walk's (nd_jump_link) */
	class = syscall_class(c->task, nd);
	if (class == SYS_PLACE)
		return verdict_as(c, mode, NODEFD_RULE_REACH, NODEFD_REASON_RACE, NULL) ? -EACCES : 0;
	watch_to(st, class == SYS_META ? WATCH_META : WATCH_HOOKED);
	count(NODEFD_CNT_JUMP_WATCHED);
	return 0;
}

/**
 * jump_guard_check() - the jump of a proc magic link, @path where it lands (nd_jump_link)
 * @path: the path the link resolved to.
 *
 * A watched walk's jump that lands where the link hook judged is let be. One that lands on a
 * place refused by name is refused by the hook of what the system call then does
 * (jump_guard_refuses()), or reported when the call only reads metadata: a traced function
 * cannot fail the jump.
 */
static __always_inline void jump_guard_check(const struct path *path)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_state *st;
	struct ctx c = {};
	__u8 watch;

	if (!nodefd_watches)
		return;	/* nobody's walk is watched: the jump of a walk of its own */
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st || st->watch == WATCH_NONE)
		return;
	watch = st->watch;
	watch_to(st, WATCH_NONE);
	/*
	 * The watch is this jump's if armed by the link this walk follows now; else it is an
	 * earlier walk's, stopped before its jump (/proc/self/ns/ links jump as well, without
	 * the hook looking at them): dropped.
	 */
	if ((__u64)task->nameidata != st->nd || jump_link(task->nameidata) != st->watch_link ||
	    ((__u64)path->dentry == st->dentry && (__u64)path->mnt == st->mnt))
		return;
	/*
	 * A walk that ends there, on a file: stat() or an O_PATH open of a file the holder has
	 * open, which the link gives without a race as well (truncate and linkat judge their
	 * own target).
	 */
	if (st->armed == ARMED_PATH_OP && watch == WATCH_HOOKED &&
	    !is_dir((__u64)BPF_CORE_READ(path, dentry)))
		return;

	count(NODEFD_CNT_RACE);
	c.task = task;
	c.hook = NODEFD_HOOK_FOLLOW;
	c.kind = st->kind;
	c.holder_tgid = st->holder_tgid;
	c.fd = st->fd;
	c.policy = policy_of(task);
	c.dentry = BPF_CORE_READ(path, dentry);
	c.mnt = BPF_CORE_READ(path, mnt);
	/* Metadata read by a system call that nothing can refuse now: reported only. */
	c.record_only = watch == WATCH_META;
	if (!judge_place(&c) || c.record_only)
		return;
	raced_to(st, st->nd, current_syscall(task));
}

/* The hooks that only refuse what a refused jump would do: 0 or -EACCES. */
static __always_inline int jump_guard_refuses(void)
{
	struct task_struct *task;
	struct task_state *st;

	if (!nodefd_raced)
		return 0;
	task = bpf_get_current_task_btf();
	st = bpf_task_storage_get(&task_state, task, 0, 0);
	if (!st && task_storage_busy())
		return -EACCES;	/* cannot tell: some walk is refused, it may be this one's */
	return jump_refused(task, st, !task->nameidata) ? -EACCES : 0;
}

#endif /* __NODEFD_JUMP_BPF_H */
