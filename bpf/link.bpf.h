/* SPDX-License-Identifier: GPL-2.0 */
/* link.bpf.h - which proc magic link a walk follows, and what of the path comes after it */
#ifndef __NODEFD_LINK_BPF_H
#define __NODEFD_LINK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "nodefd.h"
#include "compat.bpf.h"
#include "common.bpf.h"

/* The functions that tell the magic links apart (text symbols, in every kallsyms). */
extern const void proc_pid_get_link __ksym;
extern const void proc_map_files_get_link __ksym;
extern const void proc_fd_link __ksym;
extern const void proc_exe_link __ksym;
extern const void proc_cwd_link __ksym;
extern const void proc_root_link __ksym;

/* What a proc inode says of its link: whose it is, which fd, which proc_get_link. */
struct proc_head {
	__u64 pid;		/* struct pid * */
	__u64 get_link;		/* op.proc_get_link */
	__u32 fd;
};

/*
 * The three in one read when they head struct proc_inode as on 6.1 and 6.12 (pid, fd, op); a
 * read each otherwise. The offsets are the running kernel's (CO-RE relocations): the verifier
 * sees constants and drops the branch not taken. A failed read leaves zeros, as
 * BPF_CORE_READ() does: no kind, so not judged, as before.
 */
static __always_inline void proc_head_read(struct proc_inode *pi, struct proc_head *h,
					   const bool cast)
{
	__u64 w[3] = {};

	if (cast) {
		struct proc_inode *p = CAST(struct proc_inode, pi);

		h->pid = (__u64)p->pid;
		h->fd = p->fd;
		h->get_link = (__u64)p->op.proc_get_link;
		return;
	}
	if (bpf_core_field_offset(struct proc_inode, pid) == 0 &&
	    bpf_core_field_offset(struct proc_inode, fd) == 8 &&
	    bpf_core_field_offset(struct proc_inode, op) == 16) {
		bpf_probe_read_kernel(w, sizeof(w), pi);
		h->pid = w[0];
		h->fd = (__u32)w[1];	/* little-endian: the low half */
		h->get_link = w[2];
		return;
	}
	h->pid = (__u64)BPF_CORE_READ(pi, pid);
	h->fd = BPF_CORE_READ(pi, fd);
	h->get_link = (__u64)BPF_CORE_READ(pi, op.proc_get_link);
}

/*
 * A proc magic link is a symlink on procfs whose ->get_link is proc_pid_get_link (fd/N, exe,
 * cwd, root; fd/N also under task/<tid>/) or proc_map_files_get_link; which of the first it is
 * comes from the proc inode's proc_get_link. For either, the proc inode's head is read into
 * @h; for any other symlink on procfs nothing is read.
 */
static __always_inline __u8 link_kind(const void *get_link, struct proc_inode *pi,
				      struct proc_head *h, const bool cast)
{
	const void *proc_get_link;

	if (get_link != &proc_pid_get_link && get_link != &proc_map_files_get_link)
		return NODEFD_KIND_NONE;
	proc_head_read(pi, h, cast);
	if (get_link == &proc_map_files_get_link)
		return NODEFD_KIND_MAP_FILES;
	proc_get_link = (const void *)h->get_link;
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

/*
 * The walk's last component as hashlen (len << 32 | hash), from its two halves: plain loads of
 * the nameidata, where 6.1's verifier refuses the u64 of the union they share with it.
 */
static __always_inline __u64 last_hash_len(struct nameidata *nd)
{
	return (__u64)nd->last.len << 32 | nd->last.hash;
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
