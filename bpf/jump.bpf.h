/* SPDX-License-Identifier: GPL-2.0 */
/* jump.bpf.h - the jump after the link: did the walk land where the link hook judged it? */
#ifndef __NODEFD_JUMP_BPF_H
#define __NODEFD_JUMP_BPF_H

/*
 * inode_follow_link runs before the kernel reads the holder's fd table (or cwd, or root) to
 * resolve the link. Between the two, a thread sharing the holder's table can dup2() another
 * file onto the fd, or the holder can chdir(): the walk then jumps to a place nobody judged.
 * A trailing open judges the file actually opened, and truncate and linkat judge their own
 * target, so only walks judged at the link can be led elsewhere. When the holder is the
 * walker itself, the place swapped in is one it already holds and could openat() or fchdir()
 * to: nothing to gain. When it is another process, the walker's credentials would be used
 * below a directory only that process holds.
 *
 * So such a walk is watched: nd_jump_link(), which every proc magic link goes through with
 * the path it resolved, is traced (fentry, nothing to pay for any other walk) and compared
 * with what the hook judged. A different place is judged there as the link would have been;
 * if it is refused, the system call cannot be let go on with it. An fentry program cannot
 * fail the jump, so what the system call then does is refused by the hook that sees it:
 * file_open (an open, exec), path_mknod (O_CREAT, mknod, bind), path_truncate, path_link,
 * path_mkdir, path_rmdir, path_unlink, path_rename, path_symlink, path_chmod. Where no hook
 * sees it (chdir, chroot, stat, access, readlink, getxattr, statfs, an O_PATH open, a watch)
 * the walker is killed (SIGKILL) before it returns to user space, which it cannot
 * survive; so such a walk is refused at the link where a kill would not take away what the
 * call made (kill_not_enough()).
 * Any other system call through another process's link is refused at the link.
 */

#define SIGKILL 9

/*
 * How many tasks have a watch armed (nd_jump_link has something to compare) and how many a
 * walk refused after its jump (file_open and the path hooks have something to refuse): when
 * none has, those programs need not look their task storage up, which is most of what they
 * cost on every magic-link jump, every walk that followed a symlink, every mkdir (file_open
 * looks after a walk that ended on a jump all the same: an armed open is matched there). A count
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
		__sync_fetch_and_add(&nodefd_watches, -1);
	st->watch = watch;
}

static __always_inline void raced_to(struct task_state *st, __u64 nd, __u64 syscall)
{
	if (!st->raced_syscall && syscall)
		__sync_fetch_and_add(&nodefd_raced, 1);
	else if (st->raced_syscall && !syscall)
		__sync_fetch_and_add(&nodefd_raced, -1);
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

#define X32_SYSCALL_BIT 0x40000000
#define O_PATH 010000000

/*
 * An open(2) whose walk goes on through the link is not known to be one at the link (the
 * intent is set for the last component only): its flags, saved with the registers at entry,
 * tell whether file_open will see it. openat2's are in user memory, which another thread may
 * have changed since the kernel copied them: counted as O_PATH.
 */
static __always_inline __u8 open_class(struct pt_regs *regs, unsigned long nr)
{
	__u64 flags = O_PATH;

	if (nr == 2)
		flags = BPF_CORE_READ(regs, si);
	else if (nr == 257)
		flags = BPF_CORE_READ(regs, dx);
	else if (nr == 85)
		flags = 0;	/* creat */
	return flags & O_PATH ? WATCH_KILL : WATCH_HOOKED;
}

/* What happens after the jump of the system call being made (x86-64 numbers). */
static __always_inline __u8 jump_class(struct task_struct *task, const struct nameidata *nd)
{
	struct pt_regs *regs;
	unsigned long nr;

	/* The last component of an open (io_uring's too), or an exec: file_open sees the file. */
	if (nd->flags & LOOKUP_OPEN)
		return WATCH_HOOKED;
	regs = (void *)bpf_task_pt_regs(task);
	if (!regs || (task->flags & PF_IO_WORKER) || syscall_is_32bit(task, regs))
		return WATCH_REFUSE;
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr & X32_SYSCALL_BIT)
		return WATCH_REFUSE;
	switch (nr) {
	case 2:		/* open, creat, openat, openat2 */
	case 85:
	case 257:
	case 437:
		return open_class(regs, nr);
	case 59:	/* execve, execveat: file_open */
	case 322:
	case 49:	/* bind: path_mknod */
	case 76:	/* truncate */
	case 82:	/* rename */
	case 83:	/* mkdir */
	case 84:	/* rmdir */
	case 86:	/* link */
	case 87:	/* unlink */
	case 88:	/* symlink */
	case 90:	/* chmod */
	case 133:	/* mknod */
	case 258:	/* mkdirat */
	case 259:	/* mknodat */
	case 263:	/* unlinkat */
	case 264:	/* renameat */
	case 265:	/* linkat */
	case 266:	/* symlinkat */
	case 268:	/* fchmodat */
	case 316:	/* renameat2 */
	case 452:	/* fchmodat2 */
		return WATCH_HOOKED;
	case 4:		/* stat */
	case 6:		/* lstat */
	case 262:	/* newfstatat */
	case 332:	/* statx */
	case 21:	/* access */
	case 269:	/* faccessat */
	case 439:	/* faccessat2 */
	case 89:	/* readlink */
	case 267:	/* readlinkat */
	case 191:	/* getxattr */
	case 192:	/* lgetxattr */
	case 194:	/* listxattr */
	case 195:	/* llistxattr */
	case 137:	/* statfs */
	case 80:	/* chdir */
	case 161:	/* chroot */
		return WATCH_KILL;
	default:
		/*
		 * utimes, xattrs set, chown, mount; connect and sendmsg, whose peer has the
		 * connection or the datagram before a kill could stop anything; an inotify or
		 * fanotify watch, which an inherited or passed instance keeps reporting from
		 * after the walker died; name_to_handle_at; ...: refused.
		 */
		return WATCH_REFUSE;
	}
}

/*
 * Could a kill fail to take away what the system call made? When the task is the global init
 * (bpf_send_signal() refuses to signal it), or shares its fd table or its fs_struct (cwd, root)
 * with a task outside its thread group (clone() with CLONE_FILES or CLONE_FS and without
 * CLONE_THREAD), which would keep the fd or the cwd. (Memory shared with another process, a
 * vfork() parent's or a MAP_SHARED buffer, can see what a stat() wrote before the kill: that
 * is metadata, left as a known gap in docs/design.md rather than refuse every vfork() child
 * and every walk that meets a `ps` reading /proc/PID/stat.)
 */
static __always_inline bool kill_not_enough(struct task_struct *task)
{
	int threads = BPF_CORE_READ(task, signal, nr_threads);

	return task->tgid == 1 || BPF_CORE_READ(task, files, count.counter) > threads ||
	       BPF_CORE_READ(task, fs, users) > threads;
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
 * another process's fd, cwd or root (@holder's, read at the link), or refuse the walk now if
 * what follows it cannot be refused later. 0 or -EACCES.
 */
static __always_inline int watch_jump(struct ctx *c, struct task_state *st,
				      const struct nameidata *nd, bool self,
				      struct task_struct *holder, __u64 link)
{
	__u8 class, mode, reach;

	if (self || !holder || (c->kind != NODEFD_KIND_FD && c->kind != NODEFD_KIND_CWD &&
				c->kind != NODEFD_KIND_ROOT))
		return 0;
	/*
	 * The walker's own fd table or cwd all the same: a thread's /proc/self is its group
	 * leader's; what can be swapped in there is the walker's own.
	 */
	if (c->kind == NODEFD_KIND_FD ?
		    (__u64)BPF_CORE_READ(holder, files) == (__u64)c->task->files :
		    (__u64)BPF_CORE_READ(holder, fs) == (__u64)c->task->fs)
		return 0;
	mode = rule_mode(c, NODEFD_RULE_ANCESTORS);
	reach = rule_mode(c, NODEFD_RULE_REACH);
	if (reach > mode)
		mode = reach;	/* off < audit < enforce */
	if (mode == NODEFD_MODE_OFF)
		return 0;	/* nothing is judged by name: nothing to watch */
	class = jump_class(c->task, nd);
	if (class == WATCH_KILL && kill_not_enough(c->task))
		class = WATCH_REFUSE;
	if (class == WATCH_REFUSE)
		return verdict_as(c, mode, NODEFD_RULE_REACH, NODEFD_REASON_RACE, NULL) ? -EACCES : 0;
	st->watch_link = link;	/* which jump is this walk's (nd_jump_link) */
	watch_to(st, class);
	return 0;
}

/* The hooks that only refuse what a refused jump would do: 0 or -EACCES. */
static __always_inline int jump_hook(void)
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
