/* SPDX-License-Identifier: GPL-2.0 */
/* syscall.bpf.h - the system call being made, read from its saved registers (x86-64 only) */
#ifndef __NODEFD_SYSCALL_BPF_H
#define __NODEFD_SYSCALL_BPF_H

/*
 * Every system call number and register nodefd reads is here. They are x86-64's: another
 * architecture needs its own table and registers first.
 */
#if !defined(__TARGET_ARCH_x86)
#error "bpf/syscall.bpf.h knows x86-64 system calls only"
#endif

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <asm/unistd_64.h>	/* __NR_*: the build host's x86-64 table */
#include "common.bpf.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452	/* Linux 6.6; older uapi headers lack it */
#endif
#define NR_LINKAT_IA32 303	/* __NR_linkat of the ia32 table (asm/unistd_32.h) */
#define X32_SYSCALL_BIT 0x40000000
#define USER32_CS 0x23
#define O_PATH 010000000
#define AT_EMPTY_PATH 0x1000

/*
 * Is the system call being made a 32-bit one? From 32-bit code (its code segment), or
 * int $0x80 from 64-bit code, which keeps the 64-bit segment: the kernel marks both TS_COMPAT.
 */
static __always_inline bool syscall_is_32bit(struct task_struct *task, struct pt_regs *regs)
{
	/* cs is a u16 in a union with a u64 since 6.9 (FRED): only its low 16 bits count. */
	return (BPF_CORE_READ(task, thread_info.status) & TS_COMPAT) ||
	       (BPF_CORE_READ(regs, cs) & 0xffff) == USER32_CS;
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
 * What the system call does with the place its walk ends on.
 * @SYS_HOOKED: an LSM hook sees what it does there (file_open, a path_* hook), and can refuse.
 * @SYS_META: it reads the place's metadata and returns: stat, access, readlink, an xattr read,
 *	statfs. No hook can refuse it after the walk; it keeps nothing.
 * @SYS_PLACE: anything else. It keeps the place (chdir, chroot, an O_PATH open, an inotify or
 *	fanotify watch), or writes metadata, or is not known here.
 */
enum sys_class {
	SYS_HOOKED = 1,
	SYS_META = 2,
	SYS_PLACE = 3,
};

/*
 * An open(2) whose walk goes on through the link is not known to be one at the link (the
 * intent is set for the last component only): its flags, saved with the registers at entry,
 * tell whether file_open will see it. openat2's are in user memory, which another thread may
 * have changed since the kernel copied them: counted as O_PATH.
 */
static __always_inline __u8 open_class(struct pt_regs *regs, unsigned long nr)
{
	__u64 flags = O_PATH;

	if (nr == __NR_open)
		flags = BPF_CORE_READ(regs, si);
	else if (nr == __NR_openat)
		flags = BPF_CORE_READ(regs, dx);
	else if (nr == __NR_creat)
		flags = 0;
	return flags & O_PATH ? SYS_PLACE : SYS_HOOKED;
}

/* The class of the system call @task is making, whose walk is @nd. */
static __always_inline __u8 syscall_class(struct task_struct *task, const struct nameidata *nd)
{
	struct pt_regs *regs;
	unsigned long nr;

	/* The last component of an open (io_uring's too), or an exec: file_open sees the file. */
	if (nd->flags & LOOKUP_OPEN)
		return SYS_HOOKED;
	regs = (void *)bpf_task_pt_regs(task);
	if (!regs || (task->flags & PF_IO_WORKER) || syscall_is_32bit(task, regs))
		return SYS_PLACE;
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr & X32_SYSCALL_BIT)
		return SYS_PLACE;
	switch (nr) {
	case __NR_open:
	case __NR_creat:
	case __NR_openat:
	case __NR_openat2:
		return open_class(regs, nr);
	case __NR_execve:	/* file_open */
	case __NR_execveat:
	case __NR_bind:		/* path_mknod */
	case __NR_truncate:
	case __NR_rename:
	case __NR_mkdir:
	case __NR_rmdir:
	case __NR_link:
	case __NR_unlink:
	case __NR_symlink:
	case __NR_chmod:
	case __NR_mknod:
	case __NR_mkdirat:
	case __NR_mknodat:
	case __NR_unlinkat:
	case __NR_renameat:
	case __NR_linkat:
	case __NR_symlinkat:
	case __NR_fchmodat:
	case __NR_renameat2:
	case __NR_fchmodat2:
		return SYS_HOOKED;
	case __NR_stat:
	case __NR_lstat:
	case __NR_newfstatat:
	case __NR_statx:
	case __NR_access:
	case __NR_faccessat:
	case __NR_faccessat2:
	case __NR_readlink:
	case __NR_readlinkat:
	case __NR_getxattr:
	case __NR_lgetxattr:
	case __NR_listxattr:
	case __NR_llistxattr:
	case __NR_statfs:
		return SYS_META;
	default:
		/*
		 * chdir, chroot; utimes, xattrs set, chown, mount; connect and sendmsg, whose
		 * peer has the connection or the datagram before anything could stop it; an
		 * inotify or fanotify watch; name_to_handle_at; ...
		 */
		return SYS_PLACE;
	}
}

#ifndef __NR_setxattrat
#define __NR_setxattrat 463	/* Linux 6.13 */
#define __NR_getxattrat 464
#define __NR_listxattrat 465
#define __NR_removexattrat 466
#endif

/*
 * Does the system call @task is making do, through a link that ends on an fd's file, more
 * than the fd allows?
 *   - a mount of the file elsewhere (mount --bind, open_tree): a new name for it, which must
 *     be one the opener could make, as linkat's (whatever the fd's access);
 *   - with @o_path (an O_PATH or O_NODE fd, which allows none of these on its own file: EBADF),
 *     connect() or a datagram to a unix socket, an xattr read or write, an inotify or fanotify
 *     watch.
 * What cannot be told (a 32-bit or x32 call, an io_uring worker's) counts as more.
 */
static __always_inline bool syscall_beyond_fd(struct task_struct *task, bool o_path)
{
	struct pt_regs *regs = (void *)bpf_task_pt_regs(task);
	unsigned long nr;

	if (!regs || (task->flags & PF_IO_WORKER) || syscall_is_32bit(task, regs))
		return true;
	nr = BPF_CORE_READ(regs, orig_ax);
	switch (nr) {
	case __NR_mount:
	case __NR_open_tree:
		return true;
	case __NR_connect:
	case __NR_sendto:
	case __NR_sendmsg:
	case __NR_sendmmsg:
	case __NR_setxattr:
	case __NR_lsetxattr:
	case __NR_getxattr:
	case __NR_lgetxattr:
	case __NR_listxattr:
	case __NR_llistxattr:
	case __NR_removexattr:
	case __NR_lremovexattr:
	case __NR_setxattrat:
	case __NR_getxattrat:
	case __NR_listxattrat:
	case __NR_removexattrat:
	case __NR_inotify_add_watch:
	case __NR_fanotify_mark:
		return o_path;
	default:
		return (nr & X32_SYSCALL_BIT) != 0;
	}
}

#endif /* __NODEFD_SYSCALL_BPF_H */
