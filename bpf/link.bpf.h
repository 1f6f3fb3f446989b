/* SPDX-License-Identifier: GPL-2.0 */
/* link.bpf.h - which proc magic link a walk follows, and what of the path comes after it */
#ifndef __NODEFD_LINK_BPF_H
#define __NODEFD_LINK_BPF_H

/* The functions that tell the magic links apart (text symbols, in every kallsyms). */
extern const void proc_pid_get_link __ksym;
extern const void proc_map_files_get_link __ksym;
extern const void proc_fd_link __ksym;
extern const void proc_exe_link __ksym;
extern const void proc_cwd_link __ksym;
extern const void proc_root_link __ksym;

/*
 * A proc magic link is a symlink on procfs whose ->get_link is proc_pid_get_link (fd/N, exe,
 * cwd, root; fd/N also under task/<tid>/) or proc_map_files_get_link; which of the first it is
 * comes from the proc inode's proc_get_link.
 */
static __always_inline __u8 link_kind(struct inode *inode, struct proc_inode *pi)
{
	const void *get_link = inode->i_op->get_link, *proc_get_link;

	if (get_link == &proc_map_files_get_link)
		return NODEFD_KIND_MAP_FILES;
	if (get_link != &proc_pid_get_link)
		return NODEFD_KIND_NONE;
	proc_get_link = BPF_CORE_READ(pi, op.proc_get_link);
	if (proc_get_link == &proc_fd_link)
		return NODEFD_KIND_FD;
	if (proc_get_link == &proc_exe_link)
		return NODEFD_KIND_EXE;
	if (proc_get_link == &proc_cwd_link)
		return NODEFD_KIND_CWD;
	if (proc_get_link == &proc_root_link)
		return NODEFD_KIND_ROOT;
	return NODEFD_KIND_NONE;
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

#endif /* __NODEFD_LINK_BPF_H */
