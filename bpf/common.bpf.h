/* SPDX-License-Identifier: GPL-2.0 */
/* common.bpf.h - constants, maps and the state one walk carries from the link to its end */
#ifndef __NODEFD_COMMON_BPF_H
#define __NODEFD_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "nodefd.h"
#include "compat.bpf.h"

#define EACCES 13
#define AT_FDCWD -100
#define PROC_SUPER_MAGIC 0x9fa0
#define OVERLAYFS_SUPER_MAGIC 0x794c7630

#define S_IXUSR 00100
#define S_IXGRP 00010
#define S_IXOTH 00001
#define S_IRWXG 00070

/*
 * The kernel's own #defines, which CO-RE cannot relocate, are the running kernel's: nodefdctl
 * writes them before load (src/kconst.c). The data is read-only then, so the verifier knows
 * each value and drops the branches it rules out.
 */
const volatile struct nodefd_kconst kconst;

#define FMODE_READ (kconst.fmode_read)
#define FMODE_WRITE (kconst.fmode_write)
#define FMODE_EXEC (kconst.fmode_exec)
#define FMODE_PATH (kconst.fmode_path)

#define O_TRUNC 00001000
#define O_APPEND 00002000
#define O_NODE 040000000

#define LOOKUP_PARENT (kconst.lookup_parent)
#define LOOKUP_OPEN (kconst.lookup_open)
#define LOOKUP_EMPTY (kconst.lookup_empty)
/* nameidata.state: the walk's last step was a jump */
#define ND_JUMPED (kconst.nd_jumped)
#define SB_POSIXACL (kconst.sb_posixacl)
#define MNT_NS_INTERNAL ((void *)kconst.mnt_ns_internal)
#define ACL_NOT_CACHED ((void *)kconst.acl_not_cached)
#define ACL_DONT_CACHE ((void *)kconst.acl_dont_cache)
#define TS_COMPAT (kconst.ts_compat)
#define PF_IO_WORKER (kconst.pf_io_worker)
#define DCACHE_MOUNTED (kconst.dcache_mounted)

/* The global switches (struct nodefd_config), entry 0, set by nodefdctl. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nodefd_config);
} settings SEC(".maps");

/*
 * Policies: cgroup id -> struct nodefd_policy, in a hash map that is never changed once it is
 * in use. nodefdctl builds a whole new one and swaps it into entry 0 of cgroup_policy in one
 * update, so that an open sees the old policy or the new one, never a mix.
 */
struct policy_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, NODEFD_MAX_POLICIES);
	__type(key, __u64);
	__type(value, struct nodefd_policy);
} policy_empty SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct policy_map);
} cgroup_policy SEC(".maps") = {
	.values = { [0] = &policy_empty },
};

/*
 * What a walk that ended on a magic link left for the hook that acts on its result: an open
 * (file_open, which matches the walk by its nameidata), or another operation on the path,
 * truncate(2) or linkat(2) (path_truncate, path_link, which match it by the system call and
 * the target: the walk is over by then).
 */
enum armed {
	ARMED_NONE = 0,
	ARMED_OPEN = 1,
	ARMED_PATH_OP = 2,
};

/*
 * A walk judged at another process's fd, cwd or root link, whose jump (nd_jump_link) is then
 * checked to land where the link hook judged (jump.bpf.h). If it does not and the place it
 * lands on is refused, what the system call does there is refused by the hook that acts on
 * it (WATCH_HOOKED), or, for a system call that only reads metadata, reported (WATCH_META).
 */
enum watch {
	WATCH_NONE = 0,
	WATCH_HOOKED = 1,
	WATCH_META = 2,
};

/*
 * Whose is what a link shows, for the walker: its own (its /proc/self, its own fd table, cwd
 * and root), another process's it could take (take.bpf.h), or another process's it could not.
 */
enum link_owner {
	OWNER_SELF = 0,
	OWNER_TAKEN = 1,
	OWNER_UNTAKEN = 2,
};

/* What inode_follow_link learnt, for the hook at the end of the same walk. */
struct task_state {
	__u64 nd;		/* struct nameidata * of the walk */
	__u64 last_name;	/* nd->last.name at the link */
	__u64 last_hash_len;	/* nd->last.hash_len at the link */
	/*
	 * The original file, read into place (origin_from_file()): f_flags and f_mode as 6.1
	 * has them, then f_cred and f_path (mnt, dentry) as 6.12 has them after f_flags.
	 */
	__u32 orig_flags;
	__u32 orig_mode;
	__u64 orig_cred;	/* the original file's f_cred (struct cred *), 0 if none */
	__u64 mnt;		/* target f_path, as read at the link */
	__u64 dentry;
	__u64 holder;		/* struct pid * of the holder */
	__u32 holder_tgid;
	__s32 fd;		/* fd number for NODEFD_KIND_FD, else -1 */
	__u64 syscall;		/* ARMED_PATH_OP: the system call the walk was made for */
	__u8 armed;		/* enum armed */
	__u8 kind;
	__u8 has_origin;	/* orig_mode/orig_flags describe an open file */
	__u8 loose;		/* ARMED_OPEN by "/" or "/." after the link: match by target */
	__u8 watch;		/* enum watch: the jump of this walk is to be checked */
	__u8 owner;		/* enum link_owner: whose is what the link shows */
	__u8 pad[2];
	__u64 watch_link;	/* the watched jump's link (struct dentry *) */
	/* A walk refused after its jump (enum watch): what it was made for, until used up. */
	__u64 raced_nd;		/* its struct nameidata * */
	__u64 raced_syscall;	/* its system call, as current_syscall() says */
};

/* The key of the one-entry arrays, in read-only data: no stack slot for it in the programs. */
static const __u32 zero_key = 0;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NODEFD_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += 1;
}

/* Everything a decision needs, and everything its event says. */
struct ctx {
	struct task_struct *task;
	const struct nodefd_policy *policy;
	bool canary;
	__u8 hook;
	__u8 kind;
	__u8 record_only;	/* the decision cannot refuse: a refusal is reported as audited */
	__u32 holder_tgid;
	__s32 fd;
	__u32 orig_mode;
	__u32 orig_flags;
	__u32 req_mode;
	__u32 req_flags;
	__u64 orig_cred;	/* the original file's f_cred, 0 if none */
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct file *file;	/* the file being opened, for bpf_d_path; NULL at the link */
};

#endif /* __NODEFD_COMMON_BPF_H */
