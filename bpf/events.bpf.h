/* SPDX-License-Identifier: GPL-2.0 */
/* events.bpf.h - what a decision reports: one record in the events ring buffer */
#ifndef __NODEFD_EVENTS_BPF_H
#define __NODEFD_EVENTS_BPF_H

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
	struct dentry *d;
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
	__u32 i = PATH_COMPONENTS - 1 - j, zero = 0;
	struct scratch *s;
	long len;

	if ((int)i >= w->n)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
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

__noinline int nodefd_path_of(__u64 dentry, __u64 vfsmount)
{
	struct path_walk w = {
		.d = (void *)dentry,
		.m = (void *)(vfsmount - bpf_core_field_offset(struct mount, mnt)),
	};
	struct scratch *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return -1;
	bpf_loop(PATH_COMPONENTS, path_up_step, &w, 0);
	bpf_loop(PATH_COMPONENTS, path_down_step, &w, 0);
	if (!w.n)
		s->buf[w.pos++ & (NODEFD_PATH_MAX - 1)] = '/';
	s->buf[w.pos & (NODEFD_PATH_MAX - 1)] = '\0';
	return 0;
}

static __always_inline void event_path(struct nodefd_event *ev, struct ctx *c)
{
	struct scratch *s;
	__u32 zero = 0;

	/* bpf_d_path is allowed in file_open: the path as the opener's root sees it. */
	/* f_path is const since 6.11; bpf_d_path only reads it. */
	if (c->file && bpf_d_path((struct path *)&c->file->f_path, ev->path, sizeof(ev->path)) > 0)
		return;
	if (!c->dentry || nodefd_path_of((__u64)c->dentry, (__u64)c->mnt))
		return;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (s)
		bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), s->buf);
}

static __always_inline void emit(struct ctx *c, __u8 rule, __u8 action, __u8 reason,
				 struct dentry *ancestor)
{
	struct nodefd_event *ev;

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(NODEFD_CNT_EVENTS_DROPPED);
		return;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->cgroup_id = bpf_get_current_cgroup_id();
	ev->pid = bpf_get_current_pid_tgid() >> 32;
	ev->tid = (__u32)bpf_get_current_pid_tgid();
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->holder_pid = c->holder_tgid;
	ev->holder_fd = c->fd;
	ev->orig_flags = c->orig_flags;
	ev->orig_mode = event_mode(c->orig_mode);
	ev->req_flags = c->req_flags;
	ev->req_mode = event_mode(c->req_mode);
	ev->rule = rule;
	ev->action = action;
	ev->kind = c->kind;
	ev->reason = reason;
	ev->hook = c->hook;
	ev->pad[0] = ev->pad[1] = ev->pad[2] = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->path[0] = '\0';
	event_path(ev, c);
	ev->ancestor[0] = '\0';
	if (ancestor)
		bpf_probe_read_kernel_str(ev->ancestor, sizeof(ev->ancestor),
					  BPF_CORE_READ(ancestor, d_name.name));
	bpf_ringbuf_submit(ev, 0);
}

#endif /* __NODEFD_EVENTS_BPF_H */
