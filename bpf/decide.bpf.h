/* SPDX-License-Identifier: GPL-2.0 */
/* decide.bpf.h - the rules: what a link gives, by the original file's access or by name */
#ifndef __NODEFD_DECIDE_BPF_H
#define __NODEFD_DECIDE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "nodefd.h"
#include "compat.bpf.h"
#include "common.bpf.h"
#include "events.bpf.h"
#include "policy.bpf.h"
#include "perm.bpf.h"
#include "reach.bpf.h"

/*
 * Each judge fills nothing but its answer: 0 or -EACCES, with the events of what failed. The
 * programs (nodefd.bpf.c) find what to judge; these decide.
 */

#define S_IFMT 00170000
#define S_IFDIR 0040000
#define S_IFIFO 0010000

/* Ancestors and reach for c->dentry/c->mnt, each rule's failure dropped when it is off. */
static __always_inline void place_of(struct ctx *c, struct place *r)
{
	struct mount *m = (void *)c->mnt - bpf_core_field_offset(struct mount, mnt);

	/*
	 * Pipes, sockets, anonymous inodes, memfd: on no mount anyone sees, they have no name to
	 * be opened by. Nothing beyond the fd's access is to be had by name.
	 */
	if (BPF_CORE_READ(m, mnt_ns) == MNT_NS_INTERNAL) {
		r->reach_fail = true;
		r->reach_reason = NODEFD_REASON_UNLINKED;
	} else {
		nodefd_check_place(r, (__u64)c->dentry, (__u64)c->mnt, 0, 0);
		if (r->ancestors_fail || r->reach_fail)
			place_by_binds(r, (__u64)c->dentry, (__u64)c->mnt);
	}
	if (!rule_on(c, NODEFD_RULE_ANCESTORS))
		r->ancestors_fail = false;
	if (!rule_on(c, NODEFD_RULE_REACH))
		r->reach_fail = false;
}

/* By name alone (a walk, or a link with no open file behind it): 0 or -EACCES. */
static __always_inline int judge_place(struct ctx *c)
{
	struct place r = {};
	bool refuse = false;

	if (!rule_on(c, NODEFD_RULE_ANCESTORS) && !rule_on(c, NODEFD_RULE_REACH))
		return 0;
	place_of(c, &r);
	if (r.ancestors_fail)
		refuse |= verdict(c, NODEFD_RULE_ANCESTORS, r.ancestors_reason,
				  (struct dentry *)r.refused);
	if (r.reach_fail)
		refuse |= verdict(c, NODEFD_RULE_REACH, r.reach_reason, NULL);
	return refuse ? -EACCES : 0;
}

/*
 * Which of upgrade and append an access c->req_mode/c->req_flags would break, asked of a file
 * whose original open was c->orig_mode/c->orig_flags: a bit per rule. O_TRUNC counts as
 * writing; execve() reads what it runs, but the file's own exec bit is what counts there.
 */
static __always_inline __u32 access_excess(const struct ctx *c)
{
	__u32 orig, req, excess = 0;

	orig = c->orig_mode & (FMODE_READ | FMODE_WRITE);
	if (policy_flag(c, NODEFD_POLICY_PATH_READ) &&
	    ((c->orig_mode & FMODE_PATH) || (c->orig_flags & O_NODE)))
		orig |= FMODE_READ;
	req = c->req_mode & (FMODE_READ | FMODE_WRITE);
	if (c->req_flags & FMODE_EXEC)
		req &= ~FMODE_READ;
	if (c->req_flags & O_TRUNC)
		req |= FMODE_WRITE;
	if ((req & ~orig) && rule_on(c, NODEFD_RULE_UPGRADE))
		excess |= 1U << NODEFD_RULE_UPGRADE;
	/* Truncating destroys what an append-only writer may not touch, O_APPEND or not. */
	if ((orig & FMODE_WRITE) && (c->orig_flags & O_APPEND) && (req & FMODE_WRITE) &&
	    (!(c->req_flags & O_APPEND) || (c->req_flags & O_TRUNC)) &&
	    rule_on(c, NODEFD_RULE_APPEND))
		excess |= 1U << NODEFD_RULE_APPEND;
	return excess;
}

/*
 * A FIFO handed over as an O_PATH fd: runc's exec.fifo. `runc create` opens
 * <state dir>/<id>/exec.fifo O_PATH and passes it to `runc init`, which changes its
 * credentials, pivots into the container's root and then opens /proc/self/fd/N for writing to
 * say it is ready. By its own name the container cannot reach the FIFO (outside its root), so
 * the principle alone refuses every `runc run`. The fd is a ticket its opener wrote on purpose.
 * It was opened under other credentials than the opener's now: inherited across a change of
 * credentials, or passed. The article's own fd of a file that closed on it is neither. Those
 * credentials could open the FIFO by name now: rootful runc's root passes every directory, and
 * rootless runc's user (or root of its user namespace) owns the state directory. A FIFO holds
 * no data of its own to read or destroy. A regular file (CVE-2019-5736's binary), a directory
 * (CVE-2024-21626's leaked fd) or an fd whose credentials could no longer name it get nothing
 * from this.
 */
static __always_inline bool delegated_fifo(struct ctx *c)
{
	const struct cred *cred = (const struct cred *)c->orig_cred;
	struct dentry *d = c->dentry;

	if (c->kind != NODEFD_KIND_FD || !(c->orig_mode & FMODE_PATH) || !cred ||
	    (__u64)cred == (__u64)c->task->cred ||
	    (BPF_CORE_READ(d, d_inode, i_mode) & S_IFMT) != S_IFIFO)
		return false;
	return cred_opens((__u64)cred, (__u64)d, (__u64)c->mnt,
				 (c->req_mode & FMODE_READ ? 4 : 0) | (c->req_mode & FMODE_WRITE ? 2 : 0));
}

static __always_inline __u8 weaker(__u8 a, __u8 b)
{
	return a < b ? a : b;	/* off < audit < enforce */
}

/*
 * An access through the link to the open file it comes from. Within the file's own access it
 * is no more than the fd gives. Beyond it, only what the opener could open by name. With
 * @ceiling, a strict policy or the canary, the file's access is the limit (nodefdctl's canary
 * reopens a file of its own, which it could open by name). A refusal is reported under the
 * rule the access broke, with the reason by name. Its mode is the weaker of that rule's and
 * the mode of the rule by name that failed. 0 or -EACCES.
 */
static __always_inline int judge_reopen(struct ctx *c, bool ceiling)
{
	__u32 excess = access_excess(c);
	struct dentry *ancestor = NULL;
	struct place r = {};
	bool refuse = false;
	__u8 mode, reason;

	if (!excess)
		return 0;
	if (ceiling || c->canary || policy_flag(c, NODEFD_POLICY_STRICT)) {
		mode = NODEFD_MODE_ENFORCE;
		reason = NODEFD_REASON_STRICT;
	} else {
		place_of(c, &r);
		if (r.ancestors_fail &&
		    (!r.reach_fail ||
		     rule_mode(c, NODEFD_RULE_ANCESTORS) >= rule_mode(c, NODEFD_RULE_REACH))) {
			mode = rule_mode(c, NODEFD_RULE_ANCESTORS);
			reason = r.ancestors_reason;
			ancestor = (struct dentry *)r.refused;
		} else if (r.reach_fail) {
			mode = rule_mode(c, NODEFD_RULE_REACH);
			reason = r.reach_reason;
		} else {
			count(NODEFD_CNT_BY_NAME);
			return 0;	/* it could open the file by name for this */
		}
		if (delegated_fifo(c)) {
			count(NODEFD_CNT_BY_NAME);
			return 0;
		}
	}
	if (excess & (1U << NODEFD_RULE_UPGRADE))
		refuse |= verdict_as(c, weaker(rule_mode(c, NODEFD_RULE_UPGRADE), mode),
				     NODEFD_RULE_UPGRADE, reason, ancestor);
	if (excess & (1U << NODEFD_RULE_APPEND))
		refuse |= verdict_as(c, weaker(rule_mode(c, NODEFD_RULE_APPEND), mode),
				     NODEFD_RULE_APPEND, reason, ancestor);
	return refuse ? -EACCES : 0;
}

static __always_inline bool is_dir(__u64 dentry)
{
	struct dentry *d = (void *)dentry;

	return (BPF_CORE_READ(d, d_inode, i_mode) & S_IFMT) == S_IFDIR;
}

#endif /* __NODEFD_DECIDE_BPF_H */
