/* SPDX-License-Identifier: GPL-2.0 */
/* mounts.bpf.h - what the opener's mount namespace shows: aliases, binds, over-mounts */
#ifndef __NODEFD_MOUNTS_BPF_H
#define __NODEFD_MOUNTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"
#include "common.bpf.h"

/*
 * A walk may reach the root of a mount of another mount namespace (a container's, whose tree
 * above may lead nowhere the opener knows) or of a detached one. It goes on where the opener's
 * own namespace shows the same directory: a mount of the same filesystem whose root is that
 * directory, or failing that one of the whole filesystem. The superblock's list of its mounts
 * has them. Without one, the walk climbs the other namespace's tree.
 */
#define ALIAS_MOUNTS 256

/*
 * A scan of a superblock's list of its mounts for the mounts of namespace @ns. Up to 6.x the
 * list is of list_heads (s_mounts, mnt_instance); since 6.18 s_mounts points to the first mount
 * and each mount to the next (mnt_next_for_sb). @pos is a list_head or a mount, by the kernel.
 */
struct mounts_scan {
	void *head;
	void *pos;
	struct mnt_namespace *ns;
	struct dentry *d;	/* the directory looked for */
};

#define SCAN_END ((struct mount *)-1L)

/* One step of @s: the mount there if it is @s->ns's, else NULL; SCAN_END past the last. */
static __always_inline struct mount *scan_next(struct mounts_scan *s)
{
	struct mount___sb_list *next = s->pos;
	struct list_head *pos = s->pos;
	struct mount *m;

	/* The position in a local first: a CO-RE read of s->pos would relocate struct mounts_scan. */
	if (!pos || pos == s->head)
		return SCAN_END;
	if (bpf_core_field_exists(struct mount___sb_list, mnt_next_for_sb)) {
		m = (struct mount *)next;
		s->pos = BPF_CORE_READ(next, mnt_next_for_sb);
	} else {
		m = (void *)pos - bpf_core_field_offset(struct mount___v61, mnt_instance);
		s->pos = BPF_CORE_READ(pos, next);
	}
	return BPF_CORE_READ(m, mnt_ns) == s->ns ? m : NULL;
}

static __always_inline void scan_start(struct mounts_scan *s, struct super_block *sb)
{
	if (bpf_core_field_exists(struct mount___sb_list, mnt_next_for_sb)) {
		s->head = NULL;
		s->pos = BPF_CORE_READ((struct super_block___sb_list *)sb, s_mounts);
	} else {
		s->head = (void *)sb + bpf_core_field_offset(struct super_block___v61, s_mounts);
		s->pos = BPF_CORE_READ((struct super_block___v61 *)sb, s_mounts.next);
	}
}

struct alias {
	struct mounts_scan s;
	struct dentry *sb_root;
	struct mount *same;
	struct mount *whole;
};

static long alias_step(__u32 i, void *ctx)
{
	struct alias *a = ctx;
	struct mount *m = scan_next(&a->s);
	struct dentry *root;

	if (m == SCAN_END)
		return 1;
	if (!m)
		return 0;
	root = BPF_CORE_READ(m, mnt.mnt_root);
	if (root == a->s.d) {
		a->same = m;
		return 1;
	}
	if (root == a->sb_root && !a->whole)
		a->whole = m;
	return 0;
}

/**
 * nodefd_mount_alias() - where the opener's namespace shows the top of another's mount
 * @mount: a mount of another namespace, or a detached one (struct mount *).
 * @ns: the opener's namespace (struct mnt_namespace *).
 * @dentry: @mount's root.
 *
 * Return: the mount of @ns to go on from at @dentry (struct mount *), or 0 for none.
 */
__noinline __u64 nodefd_mount_alias(__u64 mount, __u64 ns, __u64 dentry)
{
	struct mount *m = (void *)mount;
	struct super_block *sb = BPF_CORE_READ(m, mnt.mnt_sb);
	struct alias a = {
		.s = { .ns = (void *)ns, .d = (void *)dentry },
		.sb_root = BPF_CORE_READ(sb, s_root),
	};

	if ((__u64)BPF_CORE_READ(m, mnt_ns) == ns)
		return 0;	/* the opener's own tree: its top is the top */
	scan_start(&a.s, sb);
	bpf_loop(ALIAS_MOUNTS, alias_step, &a, 0);
	return (__u64)(a.same ?: a.whole);
}

/*
 * A mount of the opener's (the current task's) namespace @ns whose root is @dentry, on the
 * superblock of @mount: a bind mount of that directory. One whose parent is the opener's
 * root mount (a container's volume, a chroot's bind) is taken first. 0 if none.
 */
struct binds {
	struct mounts_scan s;
	struct mount *prefer;
	struct mount *found;
};

static long bind_step(__u32 i, void *ctx)
{
	struct binds *b = ctx;
	struct mount *m = scan_next(&b->s);

	if (m == SCAN_END)
		return 1;
	if (!m || BPF_CORE_READ(m, mnt.mnt_root) != b->s.d)
		return 0;
	if (!b->found)
		b->found = m;
	if (BPF_CORE_READ(m, mnt_parent) != b->prefer)
		return 0;
	b->found = m;
	return 1;
}

/**
 * nodefd_bind_of() - a bind mount of @ns whose root is @dentry, on @mount's filesystem
 * @mount: the mount the walk is on (struct mount *).
 * @ns: the opener's namespace (struct mnt_namespace *).
 * @dentry: a directory the walk reached.
 *
 * Return: such a mount (struct mount *), preferring one mounted on @mount, or 0 for none.
 */
__noinline __u64 nodefd_bind_of(__u64 mount, __u64 ns, __u64 dentry)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mount *m = (void *)mount;
	struct super_block *sb = BPF_CORE_READ(m, mnt.mnt_sb);
	struct binds b = {
		.s = { .ns = (void *)ns, .d = (void *)dentry },
		.prefer = (void *)task->fs->root.mnt - bpf_core_field_offset(struct mount, mnt),
	};

	if (!sb)
		return 0;
	scan_start(&b.s, sb);
	bpf_loop(ALIAS_MOUNTS, bind_step, &b, 0);
	return (__u64)b.found;
}

/*
 * Could the second walk find a bind at all? Only a mount of the opener's namespace whose root is
 * not its filesystem's root can be one (a bind of the whole filesystem starts where the walk
 * leaves a mount anyway). Looked for on the filesystems of the mounts from the target's up to
 * the top of the tree, at most BIND_CHAIN of them; a mount of another namespace on the way,
 * or a longer chain or scan, answers yes.
 */
#define BIND_CHAIN 16

struct bind_scan {
	struct mounts_scan s;
	struct dentry *sb_root;
	__u8 found;
};

static long bind_scan_step(__u32 i, void *ctx)
{
	struct bind_scan *b = ctx;
	struct mount *m = scan_next(&b->s);

	if (m == SCAN_END)
		return 1;
	if (m && BPF_CORE_READ(m, mnt.mnt_root) != b->sb_root) {
		b->found = 1;
		return 1;
	}
	return 0;
}

/* Has @mount's filesystem a mount of @ns whose root is not the filesystem's root? */
static __noinline int sb_has_binds(struct mount *mount, __u64 ns)
{
	struct super_block *sb = BPF_CORE_READ(mount, mnt.mnt_sb);
	struct bind_scan b = { .s = { .ns = (void *)ns } };
	long n;

	if (!sb)
		return 1;
	b.sb_root = BPF_CORE_READ(sb, s_root);
	scan_start(&b.s, sb);
	n = bpf_loop(ALIAS_MOUNTS, bind_scan_step, &b, 0);
	return b.found || n >= ALIAS_MOUNTS;
}

struct bind_chain {
	struct mount *m;
	__u64 ns;
	__u8 found;
	__u8 end;
};

static long bind_chain_step(__u32 i, void *ctx)
{
	struct bind_chain *c = ctx;
	struct mount *m = c->m, *pm;

	if ((__u64)BPF_CORE_READ(m, mnt_ns) != c->ns || sb_has_binds(m, c->ns)) {
		c->found = 1;
		return 1;
	}
	pm = BPF_CORE_READ(m, mnt_parent);
	if (!pm || pm == m) {
		c->end = 1;
		return 1;
	}
	c->m = pm;
	return 0;
}

/**
 * nodefd_binds_possible() - might a bind of the opener's namespace show a directory of a walk
 * @mount: the target's mount (struct mount *).
 * @ns: the opener's namespace (struct mnt_namespace *).
 *
 * Return: 0 when no filesystem from @mount up to the top of its tree has a mount of @ns whose
 * root is a directory below the filesystem's root, else 1.
 */
__noinline int nodefd_binds_possible(__u64 mount, __u64 ns)
{
	struct bind_chain c = { .m = (void *)mount, .ns = ns };

	if (!c.m)
		return 1;
	bpf_loop(BIND_CHAIN, bind_chain_step, &c, 0);
	return c.found || !c.end;
}

/*
 * A mount on a directory hides what lies below it from a lookup by name: the lookup goes on in
 * the mount's root. The kernel marks every dentry that something is mounted on, in any mount
 * namespace (DCACHE_MOUNTED); only for those is a mount's list of children read.
 */
#define CHILD_MOUNTS 4096

struct cover {
	struct list_head *head;
	struct list_head *pos;
	struct dentry *d;
	__u8 found;
	__u8 end;
};

static long cover_step(__u32 i, void *ctx)
{
	struct cover *c = ctx;
	struct list_head *pos = c->pos;
	struct mount *child;

	if (!pos || pos == c->head) {
		c->end = 1;
		return 1;
	}
	child = (void *)pos - bpf_core_field_offset(struct mount, mnt_child);
	c->pos = BPF_CORE_READ(pos, next);
	if (BPF_CORE_READ(child, mnt_mountpoint) != c->d)
		return 0;
	c->found = 1;
	return 1;
}

/**
 * nodefd_covered() - is a directory hidden by a mount on it
 * @mount: a mount of the opener's namespace (struct mount *).
 * @dentry: a directory (or the target) on @mount, not one the walk climbed to from a mount
 *	on it.
 *
 * Return: 1 when a mount is mounted on @dentry on @mount (or more than CHILD_MOUNTS mounts
 * are on @mount: fail closed), else 0.
 */
__noinline int nodefd_covered(__u64 mount, __u64 dentry)
{
	struct mount *m = (void *)mount;
	struct cover c = { .d = (void *)dentry };

	if (!m || !c.d)
		return 0;
	c.head = (void *)m + bpf_core_field_offset(struct mount, mnt_mounts);
	c.pos = BPF_CORE_READ(m, mnt_mounts.next);
	bpf_loop(CHILD_MOUNTS, cover_step, &c, 0);
	return c.found || !c.end;
}

#endif /* __NODEFD_MOUNTS_BPF_H */
