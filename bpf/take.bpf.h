/* SPDX-License-Identifier: GPL-2.0 */
/* take.bpf.h - could the walker take the holder's fds: the ptrace check of pidfd_getfd() */
#ifndef __NODEFD_TAKE_BPF_H
#define __NODEFD_TAKE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "nodefd.h"
#include "common.bpf.h"

/*
 * pidfd_getfd() gives a copy of another process's fd to a caller that passes
 * ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS). The same caller can trace the process and
 * make it hand over its cwd or root. For such a walker, a link of that process gives nothing
 * it could not take: the fd's own access counts, and what the holder swaps onto the link is
 * one more thing it could take. For any other walker, the holder's fd is not its own, and only
 * what it could reach by name counts.
 *
 * nodefd_could_take() computes the checks of __ptrace_may_access(), commoncap and Yama. It
 * answers "no" where it cannot tell:
 * a ptracer named by the holder with PR_SET_PTRACER (Yama's exception list). Another LSM's ptrace rules (AppArmor's) are not read: docs/design.md lists the gap.
 * The holder's dumpable flag is not read either. The walk through the link has passed proc's
 * ptrace_may_access(PTRACE_MODE_READ), which asks for the same flag.
 */

#define CAP_SYS_PTRACE 19
#define YAMA_SCOPE_CAPABILITY 2
#define YAMA_SCOPE_NO_ATTACH 3
#define USER_NS_LEVELS 33	/* the initial user namespace and 32 nested ones */
#define PARENTS_SEARCHED 64	/* processes walked up for Yama's relational scope */

/*
 * Yama's kernel.yama.ptrace_scope, read live (a data symbol: CONFIG_KALLSYMS_ALL). A kernel
 * without Yama has none: scope 0. Yama in the LSM list (the loader says) and the symbol not
 * found: the scope cannot be read, and no walker could take anything.
 */
extern const void ptrace_scope __ksym __weak;
const volatile __u8 yama_active = 1;

/* cap_capable(): does @cred hold @cap over user namespace @ns? */
static __always_inline bool cred_capable(const struct cred *cred, struct user_namespace *ns,
					 int cap)
{
	struct user_namespace *own = BPF_CORE_READ(cred, user_ns), *parent;
	int own_level = BPF_CORE_READ(own, level);
	__u32 euid = BPF_CORE_READ(cred, euid.val);
	__u64 caps = 0;

	/* One read of eight bytes: kernel_cap_t is two u32 up to 6.2, one u64 since 6.3. */
	bpf_core_read(&caps, sizeof(caps), &cred->cap_effective);
	for (int i = 0; i < USER_NS_LEVELS; i++) {
		if (ns == own)
			return caps & (1ULL << cap);
		if (BPF_CORE_READ(ns, level) <= own_level)
			return false;
		parent = BPF_CORE_READ(ns, parent);
		/* The owner of a child namespace has every capability in it. */
		if (parent == own && BPF_CORE_READ(ns, owner.val) == euid)
			return true;
		ns = parent;
	}
	return false;
}

/* task_is_descendant(): is @leader's process an ancestor of @t? */
static __always_inline bool is_ancestor_of(struct task_struct *leader, struct task_struct *t)
{
	for (int i = 0; i < PARENTS_SEARCHED; i++) {
		if (BPF_CORE_READ(t, pid) <= 0)
			return false;
		t = BPF_CORE_READ(t, group_leader);
		if (t == leader)
			return true;
		t = BPF_CORE_READ(t, real_parent);
	}
	return false;
}

/* Same real ids as every one of @h's ids, as __ptrace_may_access() asks of REALCREDS. */
static __always_inline bool same_ids(const struct cred *w, const struct cred *h)
{
	__u32 uid = BPF_CORE_READ(w, uid.val), gid = BPF_CORE_READ(w, gid.val);

	return uid == BPF_CORE_READ(h, uid.val) && uid == BPF_CORE_READ(h, euid.val) &&
	       uid == BPF_CORE_READ(h, suid.val) && gid == BPF_CORE_READ(h, gid.val) &&
	       gid == BPF_CORE_READ(h, egid.val) && gid == BPF_CORE_READ(h, sgid.val);
}

/**
 * nodefd_could_take() - could the current task take @holder's fds with pidfd_getfd()?
 * @holder: the process whose link the walk follows (struct task_struct *).
 *
 * Return: 1 if ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS) would pass, as far as the
 * checks above tell; 0 if it would not, or if that cannot be told.
 */
__noinline int nodefd_could_take(__u64 holder)
{
	/* Untyped: a global function's arguments and the values it reads must be numbers. */
	struct task_struct *w = (void *)bpf_get_current_task(), *h = (void *)holder;
	const struct cred *wc = BPF_CORE_READ(w, cred);
	const struct cred *hc = BPF_CORE_READ(h, real_cred);
	struct user_namespace *hns = BPF_CORE_READ(hc, user_ns);
	__u64 wcaps = 0, hcaps = 0;
	int scope = 0;

	if (!w || !h || !wc || !hc)
		return 0;
	if (BPF_CORE_READ(w, tgid) == BPF_CORE_READ(h, tgid))
		return 1;
	if (&ptrace_scope)
		bpf_probe_read_kernel(&scope, sizeof(scope), &ptrace_scope);
	else if (yama_active)
		return 0;
	if (scope >= YAMA_SCOPE_NO_ATTACH)
		return 0;
	/* CAP_SYS_PTRACE over the holder's namespace passes every check below. */
	if (cred_capable(wc, hns, CAP_SYS_PTRACE))
		return 1;
	if (scope == YAMA_SCOPE_CAPABILITY || !same_ids(wc, hc) ||
	    BPF_CORE_READ(wc, user_ns) != hns)
		return 0;
	/* commoncap: the holder's permitted capabilities, a subset of the walker's. */
	bpf_core_read(&wcaps, sizeof(wcaps), &wc->cap_permitted);
	bpf_core_read(&hcaps, sizeof(hcaps), &hc->cap_permitted);
	if (hcaps & ~wcaps)
		return 0;
	/* Yama's relational scope: only an ancestor of the holder. */
	if (scope && !is_ancestor_of(BPF_CORE_READ(w, group_leader), h))
		return 0;
	return 1;
}

/*
 * Whose is what @holder's link of @kind shows, for the walker @task (enum link_owner): its own
 * when it shares the fd table, or the cwd and root, the link shows; else whether it could
 * take it.
 */
static __always_inline __u8 link_owner(struct task_struct *task, struct task_struct *holder,
				       __u8 kind)
{
	if (kind == NODEFD_KIND_FD &&
	    (__u64)BPF_CORE_READ(holder, files) == (__u64)task->files)
		return OWNER_SELF;
	if ((kind == NODEFD_KIND_CWD || kind == NODEFD_KIND_ROOT) &&
	    (__u64)BPF_CORE_READ(holder, fs) == (__u64)task->fs)
		return OWNER_SELF;
	return nodefd_could_take((__u64)holder) ? OWNER_TAKEN : OWNER_UNTAKEN;
}

#endif /* __NODEFD_TAKE_BPF_H */
