// SPDX-License-Identifier: GPL-2.0
/* floor.bpf.c - the cost of the hooks themselves: programs that decide nothing */

/*
 * nodefd_bench attaches these where nodefd attaches its first two programs and measures the
 * same ordinary open and symlink as with nodefd: what any BPF LSM program on file_open and
 * inode_follow_link costs (the trampoline, the call), below which nodefd cannot go. Each
 * passes on the verdict it got and does nothing else.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(floor_file_open, struct file *file, int ret)
{
	return ret;
}

SEC("lsm/inode_follow_link")
int BPF_PROG(floor_inode_follow_link, struct dentry *dentry, struct inode *inode, bool rcu,
	     int ret)
{
	return ret;
}
