/* SPDX-License-Identifier: GPL-2.0 */
/* kernel_types.h - the kernel structures nodefd reads, as CO-RE relocatable declarations */
#ifndef __NODEFD_KERNEL_TYPES_H
#define __NODEFD_KERNEL_TYPES_H

/*
 * This stands in for a vmlinux.h generated from one kernel's BTF.  Every
 * struct is preserve_access_index: the compiler records each field access
 * by name, and libbpf moves it to the field's offset in the BTF of the
 * kernel the object is loaded on.  Only the fields nodefd uses are
 * declared, so the offsets and sizes here mean nothing; names and types
 * must match the kernel's, and a field that a kernel lacks fails the load
 * unless its use is guarded with bpf_core_field_exists().
 *
 * Keeping this in the tree makes the object the same whatever kernel the
 * build machine runs (a header generated from /sys/kernel/btf/vmlinux
 * would follow the build host's kernel), and it lists the whole kernel
 * surface nodefd depends on in one place.  tests/host/btf.sh builds the
 * programs against full headers generated from every tested kernel too.
 *
 * Where a structure changed between the kernels nodefd supports, this
 * header has the newest shape; the older ones are flavours in
 * bpf/compat.bpf.h, which work with a generated header too.
 */

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef _Bool bool;
enum { false = 0, true = 1 };
typedef unsigned short umode_t;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct { u32 val; } kuid_t;
typedef struct { u32 val; } kgid_t;

/* Since 6.3 one u64 (val); before, two u32 (cap[2]). Read as 8 bytes either way. */
typedef struct { u64 val; } kernel_cap_t;

struct list_head {
	struct list_head *next;
	struct list_head *prev;
};

struct hlist_node {
	struct hlist_node *next;
	struct hlist_node **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

struct hlist_bl_node {
	struct hlist_bl_node *next;
	struct hlist_bl_node **pprev;
};

struct qstr {
	union {
		struct {
			u32 hash;
			u32 len;
		};
		u64 hash_len;
	};
	const unsigned char *name;
};

struct ns_common {
	unsigned int inum;
};

struct uid_gid_extent {
	u32 first;
	u32 lower_first;
	u32 count;
};

/* Up to 5 extents in place; more in arrays sorted by first (forward) and lower_first (reverse). */
struct uid_gid_map {
	union {
		struct {
			struct uid_gid_extent extent[5];
			u32 nr_extents;
		};
		struct {
			struct uid_gid_extent *forward;
			struct uid_gid_extent *reverse;
		};
	};
};

struct user_namespace {
	struct uid_gid_map uid_map;
	struct uid_gid_map gid_map;
	struct user_namespace *parent;
	int level;
	kuid_t owner;
	struct ns_common ns;
};

struct group_info {
	int ngroups;
	kgid_t gid[];
};

struct cred {
	kuid_t uid;
	kgid_t gid;
	kuid_t suid;
	kgid_t sgid;
	kuid_t euid;
	kgid_t egid;
	kuid_t fsuid;
	kgid_t fsgid;
	kernel_cap_t cap_permitted;
	kernel_cap_t cap_effective;
	struct user_namespace *user_ns;
	struct group_info *group_info;
};

struct super_block {
	unsigned long s_magic;
	unsigned long s_flags;
	unsigned int s_dev;
	struct user_namespace *s_user_ns;
	struct dentry *s_root;
};

struct posix_acl;

/* The ACL methods, whose names changed in 6.2, are in bpf/compat.bpf.h. */
struct inode_operations {
	const char *(*get_link)(void *dentry, void *inode, void *done);
	int (*permission)(void *idmap, void *inode, int mask);
};

struct inode {
	umode_t i_mode;
	unsigned int i_flags;
	kuid_t i_uid;
	kgid_t i_gid;
	struct posix_acl *i_acl;
	const struct inode_operations *i_op;
	struct super_block *i_sb;
	unsigned long i_ino;
	unsigned long i_state;
	unsigned int i_nlink;
};

struct dentry {
	unsigned int d_flags;
	struct hlist_bl_node d_hash;
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
};

struct vfsmount {
	struct dentry *mnt_root;
	struct super_block *mnt_sb;
	int mnt_flags;
};

struct mnt_namespace {
	struct ns_common ns;
};

struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
	struct list_head mnt_mounts;	/* its children, by their mnt_child */
	struct list_head mnt_child;
	struct mnt_namespace *mnt_ns;
	int mnt_id;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
	unsigned int f_flags;
	unsigned int f_mode;
	const struct cred *f_cred;
};

/* ext4's inode, for whether it has extended attributes at all (an ACL is one). */
struct ext4_inode_info {
	u64 i_file_acl;			/* the xattr block, 0 for none */
	unsigned long i_flags;		/* on 64-bit, EXT4_STATE_* from bit 32 */
	struct inode vfs_inode;
};

struct posix_acl_entry {
	short e_tag;
	unsigned short e_perm;
	union {
		kuid_t e_uid;
		kgid_t e_gid;
	};
};

struct posix_acl {
	unsigned int a_count;
	struct posix_acl_entry a_entries[];
};

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

/*
 * An I/O request: on 6.12 the link hook reads an fd table's slot as one, whose first field is
 * a struct file * (bpf_rdonly_cast() casts to structs only).
 */
struct kiocb {
	struct file *ki_filp;
};

struct files_struct {
	struct {
		int counter;
	} count;		/* tasks sharing it (atomic_t) */
	struct fdtable *fdt;
};

struct fs_struct {
	int users;		/* tasks sharing it */
	struct path root;
	struct path pwd;
};

struct signal_struct {
	int nr_threads;
};

struct mm_struct {
	struct file *exe_file;
};

struct vm_area_struct {
	unsigned long vm_start;
	struct file *vm_file;
};

struct nsproxy {
	struct mnt_namespace *mnt_ns;
};

/* 6.15 made the parent an RCU pointer, renamed; the older name is in compat.bpf.h. */
struct kernfs_node {
	struct kernfs_node *__parent;
	const char *name;
};

struct cgroup {
	int level;
	struct kernfs_node *kn;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

enum pid_type {
	PIDTYPE_PID = 0,
	PIDTYPE_TGID = 1,
	PIDTYPE_PGID = 2,
	PIDTYPE_SID = 3,
	PIDTYPE_MAX = 4,
};

struct pid {
	struct hlist_head tasks[PIDTYPE_MAX];
};

/* A symlink being followed, on the walk's stack of them (its dentry in link). */
struct saved {
	struct path link;
};

/* The kernel's copy of a path a system call was given. */
struct filename {
	const char *name;
};

struct nameidata {
	struct path path;
	struct qstr last;
	unsigned int flags;
	unsigned int state;
	unsigned int depth;
	int total_link_count;
	struct saved *stack;
	struct filename *name;
	int dfd;
};

/* x86-64's saved user registers, for the arguments of the system call being made. */
struct pt_regs {
	unsigned long r10;
	unsigned long r8;
	unsigned long bx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long cx;
	unsigned long cs;
};

/* x86's, in the task (THREAD_INFO_IN_TASK): TS_COMPAT in status during a 32-bit system call. */
struct thread_info {
	u32 status;
};

struct task_struct {
	struct thread_info thread_info;
	unsigned int flags;
	int pid;
	int tgid;
	struct hlist_node pid_links[PIDTYPE_MAX];
	struct task_struct *real_parent;
	struct task_struct *group_leader;
	struct pid *thread_pid;
	const struct cred *real_cred;
	const struct cred *cred;
	struct nameidata *nameidata;
	struct fs_struct *fs;
	struct files_struct *files;
	struct nsproxy *nsproxy;
	struct signal_struct *signal;
	struct mm_struct *mm;
	struct css_set *cgroups;
};

union proc_op {
	int (*proc_get_link)(struct dentry *, struct path *, struct task_struct *);
};

struct proc_inode {
	struct pid *pid;
	unsigned int fd;
	union proc_op op;
	struct inode vfs_inode;
};

#pragma clang attribute pop

#endif /* __NODEFD_KERNEL_TYPES_H */
