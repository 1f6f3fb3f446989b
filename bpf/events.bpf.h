/* SPDX-License-Identifier: GPL-2.0 */
/* events.bpf.h - what a decision reports: one record in the events ring buffer */
#ifndef __NODEFD_EVENTS_BPF_H
#define __NODEFD_EVENTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "nodefd.h"
#include "common.bpf.h"

/* f_mode as struct nodefd_event has it (NODEFD_EV_MODE_*), whatever the kernel's bits. */
static __always_inline __u32 event_mode(__u32 f_mode)
{
	return (f_mode & FMODE_READ ? NODEFD_EV_MODE_READ : 0) |
	       (f_mode & FMODE_WRITE ? NODEFD_EV_MODE_WRITE : 0) |
	       (f_mode & FMODE_EXEC ? NODEFD_EV_MODE_EXEC : 0) |
	       (f_mode & FMODE_PATH ? NODEFD_EV_MODE_PATH : 0);
}

#define PATH_COMPONENTS 16

/* Scratch for building an event's path: twice the size, so masked offsets never overflow. */
struct scratch {
	char buf[2 * NODEFD_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/*
 * The path of a dentry from the global root, built in the per-CPU scratch buffer, for the
 * events of the link hook, where bpf_d_path is not allowed: the names from the target up,
 * across mounts, as far as PATH_COMPONENTS go (the top ones are then left out).
 *
 * Both loops are bpf_loop callbacks. As plain bounded loops the verifier went through every
 * iteration once for each number of names found so far (it tracks the count exactly), about
 * 440 000 instructions per program: four fifths of nodefdctl load's time.
 */
struct path_walk {
	__u64 names[PATH_COMPONENTS];	/* const char * of each name, the target's first */
	union {
		struct dentry *d;
		struct kernfs_node *kn;	/* a cgroup's path: its directory's node */
	};
	struct mount *m;
	int n;				/* names found */
	__u32 pos;			/* bytes written to the scratch buffer */
};

/* Up one directory, or across one mount to its mountpoint. */
static long path_up_step(__u32 i, void *ctx)
{
	struct path_walk *w = ctx;
	struct dentry *d = w->d, *p;
	struct mount *m = w->m;

	if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
		struct mount *pm = BPF_CORE_READ(m, mnt_parent);

		if (pm == m)
			return 1;
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->m = pm;
		return 0;
	}
	p = BPF_CORE_READ(d, d_parent);
	if (!p || p == d || w->n >= PATH_COMPONENTS)
		return 1;
	w->names[w->n & (PATH_COMPONENTS - 1)] = (__u64)BPF_CORE_READ(d, d_name.name);
	w->n++;
	w->d = p;
	return 0;
}

/* "/name" for the names from the top down (step j writes name PATH_COMPONENTS - 1 - j). */
static long path_down_step(__u32 j, void *ctx)
{
	struct path_walk *w = ctx;
	__u32 i = PATH_COMPONENTS - 1 - j;
	struct scratch *s;
	long len;

	if ((int)i >= w->n)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero_key);
	if (!s)
		return 1;
	s->buf[w->pos & (NODEFD_PATH_MAX - 1)] = '/';
	w->pos++;
	len = bpf_probe_read_kernel_str(&s->buf[w->pos & (NODEFD_PATH_MAX - 1)], NODEFD_PATH_MAX,
					(void *)w->names[i & (PATH_COMPONENTS - 1)]);
	if (len > 0)
		w->pos += len - 1;
	return w->pos >= NODEFD_PATH_MAX - 1;
}

/**
 * nodefd_path_of() - the path of @dentry on @vfsmount from the global root, into scratch
 * @dentry: the target (struct dentry *).
 * @vfsmount: the mount it was reached on (struct vfsmount *).
 *
 * Return: 0 with the path in this CPU's scratch buffer, -1 if there is none to write to.
 */
__noinline int nodefd_path_of(__u64 dentry, __u64 vfsmount)
{
	struct path_walk w = {
		.d = (void *)dentry,
		.m = (void *)(vfsmount - bpf_core_field_offset(struct mount, mnt)),
	};
	struct scratch *s;

	s = bpf_map_lookup_elem(&scratch, &zero_key);
	if (!s)
		return -1;
	bpf_loop(PATH_COMPONENTS, path_up_step, &w, 0);
	bpf_loop(PATH_COMPONENTS, path_down_step, &w, 0);
	if (!w.n)
		s->buf[w.pos++ & (NODEFD_PATH_MAX - 1)] = '/';
	s->buf[w.pos & (NODEFD_PATH_MAX - 1)] = '\0';
	return 0;
}

_Static_assert(NODEFD_CGROUP_PATH_MAX == NODEFD_PATH_MAX, "one scratch buffer builds both paths");

/* Up one cgroup directory: its kernfs node's parent (an RCU pointer named __parent since 6.15). */
static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn)
{
	struct kernfs_node___v61 *old = (void *)kn;
	struct kernfs_node___v615 *new = (void *)kn;

	if (bpf_core_field_exists(old->parent))
		return BPF_CORE_READ(old, parent);
	return BPF_CORE_READ(new, __parent);
}

/*
 * On 6.1 the verifier walks a bpf_loop callback once, from the state of the call, and wires
 * every branch whose other side it did not see: a test of what an earlier iteration left in
 * the walk (w->n) would be taken for a constant. So the bound is the iteration's number (which
 * it does not know), and what the walk's end means is read afresh after it.
 */
static long cgroup_up_step(__u32 i, void *ctx)
{
	struct path_walk *w = ctx;
	struct kernfs_node *kn = w->kn;	/* a local: CO-RE would relocate w->kn */
	struct kernfs_node *p = kn_parent(kn);
	__u32 slot = i;

	if (!p || i >= PATH_COMPONENTS)
		return 1;	/* at the root (whose name is no part of the path), or full */
	barrier_var(slot);	/* keep the mask: the verifier does not carry the test above */
	w->names[slot & (PATH_COMPONENTS - 1)] = (__u64)BPF_CORE_READ(kn, name);
	w->n = (int)i + 1;
	w->kn = p;
	return 0;
}

/**
 * nodefd_cgroup_of() - the path of a cgroup below its hierarchy's root, into scratch
 * @kn: the cgroup's directory (struct kernfs_node *).
 *
 * Return: 0 with the path in this CPU's scratch buffer, 1 with as much of it as fits (the
 * top left out past PATH_COMPONENTS names, or the end cut past NODEFD_CGROUP_PATH_MAX
 * bytes), -1 if there is none to write to.
 */
__noinline int nodefd_cgroup_of(__u64 kn)
{
	struct path_walk w = { .kn = (void *)kn };
	struct scratch *s;
	__u32 over;
	int top;

	s = bpf_map_lookup_elem(&scratch, &zero_key);
	if (!s || !w.kn)
		return -1;
	bpf_loop(PATH_COMPONENTS + 1, cgroup_up_step, &w, 0);
	/* Stopped below the root: the names above were left out. */
	top = kn_parent(w.kn) != NULL;
	bpf_loop(PATH_COMPONENTS, path_down_step, &w, 0);
	/* Past the buffer: cut at its end. Arithmetic, not a branch (see above); pos < 511. */
	over = ((w.pos & 511) + 1) >> 8;
	w.pos = (w.pos & 511) - over * ((w.pos & 511) - (NODEFD_PATH_MAX - 1));
	s->buf[w.pos & (NODEFD_PATH_MAX - 1)] = '\0';
	return top | (int)over;
}

/* The opener's cgroup, as it is named now: events outlive their cgroups. */
static __always_inline void event_cgroup(struct nodefd_event *ev)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct scratch *s;
	int cut;

	cut = nodefd_cgroup_of((__u64)BPF_CORE_READ(task, cgroups, dfl_cgrp, kn));
	if (cut < 0)
		return;
	s = bpf_map_lookup_elem(&scratch, &zero_key);
	if (!s)
		return;
	bpf_probe_read_kernel_str(ev->cgroup, sizeof(ev->cgroup), s->buf);
	if (cut)
		ev->flags |= NODEFD_EV_CGROUP_CUT;
}

static __always_inline void event_path(struct nodefd_event *ev, struct ctx *c)
{
	struct scratch *s;

	/* bpf_d_path is allowed in file_open: the path as the opener's root sees it. */
	/* f_path is const since 6.11; bpf_d_path only reads it. */
	if (c->file && bpf_d_path((struct path *)&c->file->f_path, ev->path, sizeof(ev->path)) > 0)
		return;
	if (!c->dentry || nodefd_path_of((__u64)c->dentry, (__u64)c->mnt))
		return;
	s = bpf_map_lookup_elem(&scratch, &zero_key);
	if (s)
		bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), s->buf);
}

/*
 * Events are rate-limited by source, so that nobody can drown another's events, nor its own
 * attack's in a flood of its own refusals. A source is who (uid, cgroup) and what was decided
 * (rule, reason, action, hook). Each sends at most NODEFD_EVENT_BURST events per window; each
 * uid at most NODEFD_EVENT_UID_BURST more than the first of each of its sources. What is held
 * back is counted, and the source's next event sent says how many (suppressed). The first
 * event of a source in a window is never held back: a new kind of refusal is always sent.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NODEFD_EVENT_SOURCES);
	__type(key, struct nodefd_event_source);
	__type(value, struct nodefd_event_rate);
} event_sources SEC(".maps");

/*
 * Written by nodefdctl alone: how much of each source's held count its summary records have
 * reported (struct nodefd_event_rate, held). No program reads it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NODEFD_EVENT_SOURCES);
	__type(key, struct nodefd_event_source);
	__type(value, __u64);
} event_reported SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NODEFD_EVENT_SOURCES);
	__type(key, __u32);
	__type(value, struct nodefd_event_rate);
} event_uids SEC(".maps");

/* @r counts window @window: a new window starts it again. */
static __always_inline void rate_window(struct nodefd_event_rate *r, __u64 window)
{
	if (r->window != window) {
		r->window = window;
		r->sent = 0;
	}
}

/*
 * The event is built in a per-CPU buffer (as the path is, in scratch) and sent from there by
 * nodefd_event_send(): the programs keep nothing on their stack across that call, whose frame
 * is not on their deepest call chain.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nodefd_event);
} event_staging SEC(".maps");

/* How many of @ev's source's events were held back since its last one sent; -1: hold it. */
static __always_inline int event_rate(struct nodefd_event *ev)
{
	struct nodefd_event_source k = {
		.cgroup_id = ev->cgroup_id,
		.uid = ev->uid,
		.what = ev->rule | (__u32)ev->reason << 8 | (__u32)ev->action << 16 |
			(__u32)ev->hook << 24,
	};
	__u64 window = ev->ts_ns / NODEFD_EVENT_WINDOW_NS;
	struct nodefd_event_rate fresh = { .window = window }, *r, *u;
	__u32 suppressed;

	r = bpf_map_lookup_elem(&event_sources, &k);
	if (!r) {
		bpf_map_update_elem(&event_sources, &k, &fresh, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&event_sources, &k);
		if (!r)
			return 0;	/* no room to count it: sent, as if first */
	}
	rate_window(r, window);
	if (r->sent) {
		/* Not the first of its source in this window: the source's and the uid's limits. */
		u = bpf_map_lookup_elem(&event_uids, &k.uid);
		if (!u) {
			bpf_map_update_elem(&event_uids, &k.uid, &fresh, BPF_NOEXIST);
			u = bpf_map_lookup_elem(&event_uids, &k.uid);
		}
		if (u)
			rate_window(u, window);
		if (r->sent >= NODEFD_EVENT_BURST || (u && u->sent >= NODEFD_EVENT_UID_BURST)) {
			__sync_fetch_and_add(&r->suppressed, 1);
			__sync_fetch_and_add(&r->held, 1);
			count(NODEFD_CNT_EVENTS_SUPPRESSED);
			return -1;
		}
		if (u)
			u->sent++;
	}
	r->sent++;
	suppressed = r->suppressed;
	__sync_fetch_and_add(&r->suppressed, -suppressed);
	return (int)suppressed;
}

/**
 * nodefd_event_admit() - may this CPU's staged event be sent, by its source's rate?
 *
 * Asked once the event names its source and before its path is built, which costs the most.
 *
 * Return: 0 to go on (the event's suppressed set), -1 to hold it back (counted).
 */
__noinline int nodefd_event_admit(void)
{
	struct nodefd_event *ev = bpf_map_lookup_elem(&event_staging, &zero_key);
	int suppressed;

	if (!ev)
		return -1;
	suppressed = event_rate(ev);
	if (suppressed < 0)
		return -1;
	ev->suppressed = (__u32)suppressed;
	return 0;
}

/**
 * nodefd_event_send() - send this CPU's staged event
 *
 * An event the ring buffer has no room for is counted (NODEFD_CNT_EVENTS_DROPPED): the
 * daemon reports those.
 *
 * Return: 0.
 */
__noinline int nodefd_event_send(void)
{
	struct nodefd_event *ev = bpf_map_lookup_elem(&event_staging, &zero_key);

	if (ev && bpf_ringbuf_output(&events, ev, sizeof(*ev), 0))
		count(NODEFD_CNT_EVENTS_DROPPED);
	return 0;
}

static __always_inline void emit(struct ctx *c, __u8 rule, __u8 action, __u8 reason,
				 struct dentry *ancestor)
{
	struct nodefd_event *ev;

	ev = bpf_map_lookup_elem(&event_staging, &zero_key);
	if (!ev)
		return;
	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = bpf_get_current_cgroup_id();
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->rule = rule;
	ev->action = action;
	ev->reason = reason;
	ev->hook = c->hook;
	if (nodefd_event_admit())
		return;
	ev->pid = bpf_get_current_pid_tgid() >> 32;
	ev->tid = (__u32)bpf_get_current_pid_tgid();
	ev->holder_pid = c->holder_tgid;
	ev->holder_fd = c->fd;
	ev->orig_flags = c->orig_flags;
	ev->orig_mode = event_mode(c->orig_mode);
	ev->req_flags = c->req_flags;
	ev->req_mode = event_mode(c->req_mode);
	ev->kind = c->kind;
	ev->flags = 0;
	ev->pad[0] = ev->pad[1] = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->path[0] = '\0';
	event_path(ev, c);
	ev->ancestor[0] = '\0';
	if (ancestor)
		bpf_probe_read_kernel_str(ev->ancestor, sizeof(ev->ancestor),
					  BPF_CORE_READ(ancestor, d_name.name));
	ev->cgroup[0] = '\0';
	event_cgroup(ev);
	nodefd_event_send();
}

#endif /* __NODEFD_EVENTS_BPF_H */
