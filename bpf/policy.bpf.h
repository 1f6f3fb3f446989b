/* SPDX-License-Identifier: GPL-2.0 */
/* policy.bpf.h - which policy a task is under, and what it says of a failed rule */
#ifndef __NODEFD_POLICY_BPF_H
#define __NODEFD_POLICY_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "nodefd.h"
#include "common.bpf.h"
#include "events.bpf.h"

/* The nearest policy from the task's cgroup up: one hash lookup per level. */
struct policy_walk {
	void *policies;
	int level;
	const struct nodefd_policy *found;
};

static long policy_step(__u32 i, void *ctx)
{
	struct policy_walk *pw = ctx;
	__u64 id;

	if (pw->level - (int)i < 0)
		return 1;
	id = bpf_get_current_ancestor_cgroup_id(pw->level - (int)i);
	pw->found = bpf_map_lookup_elem(pw->policies, &id);
	return pw->found ? 1 : 0;
}

static __always_inline const struct nodefd_policy *policy_of(struct task_struct *task)
{
	struct policy_walk pw = { .level = task->cgroups->dfl_cgrp->level };

	pw.policies = bpf_map_lookup_elem(&cgroup_policy, &zero_key);
	if (!pw.policies)
		return NULL;
	/* Every level, however deep a delegated subtree nests: the nearest policy counts. */
	bpf_loop(NODEFD_MAX_CGROUP_LEVELS, policy_step, &pw, 0);
	return pw.found;	/* NULL: no policy anywhere, every rule enforced */
}

/* The mode of @rule for this decision: the canary and "no policy" enforce everything. */
static __always_inline __u8 rule_mode(const struct ctx *c, __u8 rule)
{
	if (c->canary || !c->policy)
		return NODEFD_MODE_ENFORCE;
	return c->policy->rule_mode[rule & (NODEFD_RULE_NR - 1)];
}

static __always_inline bool rule_on(const struct ctx *c, __u8 rule)
{
	return rule_mode(c, rule) != NODEFD_MODE_OFF;
}

static __always_inline bool policy_flag(const struct ctx *c, __u32 flag)
{
	return !c->canary && c->policy && (c->policy->flags & flag);
}

_Static_assert(NODEFD_REASON_NR <= NODEFD_REASON_SLOTS, "a counter slot for every reason");

/*
 * One failed rule, in @mode: refused and reported (enforce), reported (audit), or nothing.
 * True if the access is refused.
 */
static __always_inline bool verdict_as(struct ctx *c, __u8 mode, __u8 rule, __u8 reason,
				       struct dentry *ancestor)
{
	/* One emit() for both modes: each copy inlined is walked again by the verifier. */
	if (mode != NODEFD_MODE_ENFORCE && mode != NODEFD_MODE_AUDIT)
		return false;
	count((mode == NODEFD_MODE_ENFORCE ? NODEFD_CNT_DENIED : NODEFD_CNT_AUDITED) +
	      (rule & (NODEFD_RULE_NR - 1)));
	count((mode == NODEFD_MODE_ENFORCE ? NODEFD_CNT_DENIED_BY : NODEFD_CNT_AUDITED_BY) +
	      (rule & (NODEFD_RULE_NR - 1)) * NODEFD_REASON_SLOTS +
	      (reason & (NODEFD_REASON_SLOTS - 1)));
	emit(c, rule, mode, reason, ancestor);
	return mode == NODEFD_MODE_ENFORCE;
}

static __always_inline bool verdict(struct ctx *c, __u8 rule, __u8 reason, struct dentry *ancestor)
{
	__u8 mode = rule_mode(c, rule);

	if (c->record_only && mode == NODEFD_MODE_ENFORCE)
		mode = NODEFD_MODE_AUDIT;
	return verdict_as(c, mode, rule, reason, ancestor);
}

#endif /* __NODEFD_POLICY_BPF_H */
