/* SPDX-License-Identifier: GPL-2.0 */
/* origin.bpf.h - the open file a link comes from: the holder's fd table, exe, and linkat's fd */
#ifndef __NODEFD_ORIGIN_BPF_H
#define __NODEFD_ORIGIN_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "nodefd.h"
#include "compat.bpf.h"
#include "common.bpf.h"
#include "syscall.bpf.h"

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

/*
 * The current task's own fd table: plain loads down to the array; the slot is read, or with
 * @cast loaded as the first field of a struct kiocb, a struct file * where the kernel has it
 * there (else read).
 */
static __always_inline struct file *fd_file_own(struct task_struct *t, unsigned int fd,
						const bool cast)
{
	struct fdtable *fdt = t->files->fdt;
	struct file *f = NULL;

	if (!fdt || fd >= fdt->max_fds)
		return NULL;
	if (cast && bpf_core_field_offset(struct kiocb, ki_filp) == 0)
		return CAST(struct kiocb, &fdt->fd[fd])->ki_filp;
	bpf_core_read(&f, sizeof(f), &fdt->fd[fd]);
	return f;
}

#define F_OFF(field) bpf_core_field_offset(struct file, field)

_Static_assert(__builtin_offsetof(struct task_state, orig_mode) ==
		       __builtin_offsetof(struct task_state, orig_flags) + 4 &&
	       __builtin_offsetof(struct task_state, orig_cred) ==
		       __builtin_offsetof(struct task_state, orig_flags) + 8 &&
	       __builtin_offsetof(struct task_state, mnt) ==
		       __builtin_offsetof(struct task_state, orig_cred) + 8 &&
	       __builtin_offsetof(struct task_state, dentry) ==
		       __builtin_offsetof(struct task_state, mnt) + 8,
	       "task_state: orig_flags, orig_mode, orig_cred, mnt, dentry in a row");

/*
 * What the link leads to, from the open file @f, read straight into @st (no buffer on the
 * stack, whose deepest call chain has no room) in as few reads as the running kernel's layout
 * allows: a bpf_probe_read_kernel() costs about 100 instructions whatever its size up to a
 * few tens of bytes. On 6.12, f_flags, f_cred and f_path follow each other as orig_flags,
 * orig_cred, mnt and dentry do in struct task_state: one read of 32 bytes (what lies between
 * f_flags and f_cred lands in orig_mode, read next); f_mode is apart. On 6.1, f_path's two
 * pointers in one read, f_flags and f_mode side by side in another, f_cred apart. Only
 * equalities of CO-RE offsets decide: the verifier sees constants and drops the branches not
 * taken (a min/max of offsets, to read one span, would be computed at every run, and cost
 * more than a read).
 */
static __always_inline void origin_from_file(struct task_state *st, struct file *f,
					     const bool cast)
{
	bool path_pair = bpf_core_field_offset(struct path, mnt) == 0 &&
			 bpf_core_field_offset(struct path, dentry) == 8;
	bool sizes = bpf_core_field_size(struct file, f_flags) == 4 &&
		     bpf_core_field_size(struct file, f_mode) == 4 &&
		     bpf_core_field_size(struct file, f_cred) == 8;

	if (cast) {
		struct file *p = CAST(struct file, f);

		st->orig_flags = p->f_flags;
		st->orig_mode = p->f_mode;
		st->orig_cred = (__u64)p->f_cred;
		st->mnt = (__u64)p->f_path.mnt;
		st->dentry = (__u64)p->f_path.dentry;
		st->has_origin = 1;
		return;
	}
	if (path_pair && sizes && F_OFF(f_cred) == F_OFF(f_flags) + 8 &&
	    F_OFF(f_path) == F_OFF(f_cred) + 8) {
		bpf_core_read(&st->orig_flags, 32, &f->f_flags);
		bpf_core_read(&st->orig_mode, 4, &f->f_mode);
		st->has_origin = 1;
		return;
	}
	if (path_pair) {
		bpf_core_read(&st->mnt, 16, &f->f_path);
	} else {
		st->dentry = (__u64)BPF_CORE_READ(f, f_path.dentry);
		st->mnt = (__u64)BPF_CORE_READ(f, f_path.mnt);
	}
	if (sizes && F_OFF(f_mode) == F_OFF(f_flags) + 4) {
		bpf_core_read(&st->orig_flags, 8, &f->f_flags);
	} else {
		st->orig_mode = BPF_CORE_READ(f, f_mode);
		st->orig_flags = BPF_CORE_READ(f, f_flags);
	}
	st->orig_cred = (__u64)BPF_CORE_READ(f, f_cred);
	st->has_origin = 1;
}


/*
 * map_files/<start>-<end> leads to the file mapped at <start>. Its origin is that mapping's
 * file as it is now, found with bpf_find_vma() (which takes the mm's lock): the link inode's
 * mode was set when the link was first looked up, and another mapping may have replaced that
 * one at the same address since. bpf_find_vma() needs a typed task: on 6.1 only the walker's
 * own. Another process's map_files has no origin: by name.
 */
struct vma_origin {
	__u64 file;		/* struct file * of the mapping, 0 if none */
};

static long vma_origin_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_origin *v = data;

	v->file = (__u64)BPF_CORE_READ(vma, vm_file);
	return 0;
}

#define MAP_FILES_DIGITS 16	/* hex digits of a 64-bit address */

/* <start> of a map_files link's name, "%lx-%lx"; 0 if it does not parse. */
static __always_inline __u64 map_files_start(struct dentry *link)
{
	char name[MAP_FILES_DIGITS + 1] = {};
	__u64 start = 0;

	if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(link, d_name.name)) < 2)
		return 0;
	for (int i = 0; i < MAP_FILES_DIGITS; i++) {
		char c = name[i];

		if (c >= '0' && c <= '9')
			start = start << 4 | (__u64)(c - '0');
		else if (c >= 'a' && c <= 'f')
			start = start << 4 | (__u64)(c - 'a' + 10);
		else
			return c == '-' ? start : 0;
	}
	return name[MAP_FILES_DIGITS] == '-' ? start : 0;
}

/* The walker's own mapping at @link's address into @st; nothing if there is none. */
static __always_inline void origin_from_mapping(struct task_state *st, struct task_struct *task,
						struct dentry *link)
{
	struct vma_origin v = {};
	__u64 start = map_files_start(link);

	if (start && !bpf_find_vma(task, start, vma_origin_cb, &v, 0) && v.file)
		origin_from_file(st, (struct file *)v.file, false);
}

/*
 * What @holder's link of @kind leads to, into @st: the open file behind an fd or exe link (its
 * access and credentials), the cwd or root, or the walker's own mapping behind map_files
 * (@self). @fd is the fd link's number, @link the link's dentry.
 */
static __always_inline void origin_of_link(struct task_state *st, struct task_struct *task,
					   struct task_struct *holder, bool self, __u8 kind,
					   unsigned int fd, struct dentry *link, const bool cast)
{
	if (kind == NODEFD_KIND_FD) {
		struct file *f;

		st->fd = (__s32)fd;
		if (self)
			f = fd_file_own(task, (unsigned int)st->fd, cast);
		else
			f = fd_file(holder, (unsigned int)st->fd);
		if (f)
			origin_from_file(st, f, cast);
	} else if (kind == NODEFD_KIND_EXE) {
		struct file *f = BPF_CORE_READ(holder, mm, exe_file);

		if (f)
			origin_from_file(st, f, cast);
	} else if (kind == NODEFD_KIND_CWD || kind == NODEFD_KIND_ROOT) {
		struct fs_struct *fs = BPF_CORE_READ(holder, fs);

		if (kind == NODEFD_KIND_CWD) {
			st->dentry = (__u64)BPF_CORE_READ(fs, pwd.dentry);
			st->mnt = (__u64)BPF_CORE_READ(fs, pwd.mnt);
		} else {
			st->dentry = (__u64)BPF_CORE_READ(fs, root.dentry);
			st->mnt = (__u64)BPF_CORE_READ(fs, root.mnt);
		}
	} else if (self) {
		origin_from_mapping(st, task, link);	/* map_files */
	}
}

/*
 * linkat(fd, "", newdir, name, AT_EMPTY_PATH) gives the file behind fd a new name, the same
 * thing linkat(AT_FDCWD, "/proc/self/fd/<fd>", ..., AT_SYMLINK_FOLLOW) does through the magic
 * link. Up to 6.9 it needs CAP_DAC_READ_SEARCH; since 6.10 any caller may do it with an fd it
 * opened itself. The new name is then open to whatever the file's own mode allows, so it is
 * judged by name, through the link or not: the source must be reachable now.
 *
 * The hook sees only the dentries; whether this link is fd-based comes from the system call's
 * own arguments (x86-64 and ia32 linkat), and the fd must hold exactly the source. An
 * io_uring worker has no such arguments to read: every link it makes is judged.
 *
 * Either way, an O_TMPFILE file that was never linked has no name to be reached by: a name
 * given to it opens it as its mode allows, so the fd it came from must have been open for
 * writing (as the O_TMPFILE open itself always is).
 */
/*
 * The holder's fd or exe link read again, when the file at the end of the walk is not the one
 * the link hook read (dup2 in between): the origin as it is now, in @st. False if there is no
 * file there any more.
 */
static __always_inline bool origin_read_again(struct task_state *st)
{
	struct task_struct *holder = pid_task_of((struct pid *)st->holder);
	struct file *f = NULL;

	count(NODEFD_CNT_RACE);
	if (holder && st->kind == NODEFD_KIND_FD)
		f = fd_file(holder, (unsigned int)st->fd);
	else if (holder && st->kind == NODEFD_KIND_EXE)
		f = BPF_CORE_READ(holder, mm, exe_file);
	if (f)
		origin_from_file(st, f, false);
	return f;
}


static __always_inline struct file *linkat_fd(struct task_struct *task, __u64 old_dentry, int *fdp)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(task);
	unsigned long nr, dfd, flags;
	struct file *f;

	if (!regs)
		return NULL;
	nr = BPF_CORE_READ(regs, orig_ax);
	if (syscall_is_32bit(task, regs)) {
		if (nr != NR_LINKAT_IA32)
			return NULL;
		dfd = BPF_CORE_READ(regs, bx);
		flags = BPF_CORE_READ(regs, di);
	} else {
		if (nr != __NR_linkat)
			return NULL;
		dfd = BPF_CORE_READ(regs, di);
		flags = BPF_CORE_READ(regs, r8);
	}
	if (!(flags & AT_EMPTY_PATH) || (int)dfd < 0)
		return NULL;
	f = fd_file(task, (unsigned int)dfd);
	if (!f || (__u64)BPF_CORE_READ(f, f_path.dentry) != old_dentry)
		return NULL;
	*fdp = (int)dfd;
	return f;
}


#endif /* __NODEFD_ORIGIN_BPF_H */
