/* SPDX-License-Identifier: GPL-2.0 */
/* events.bpf.h - what a decision reports: one record in the events ring buffer */
#ifndef __NODEFD_EVENTS_BPF_H
#define __NODEFD_EVENTS_BPF_H

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
 */
__noinline int nodefd_path_of(__u64 dentry, __u64 vfsmount)
{
	__u64 names[PATH_COMPONENTS];
	struct dentry *d = (void *)dentry;
	struct mount *m = (void *)(vfsmount - bpf_core_field_offset(struct mount, mnt));
	struct scratch *s;
	__u32 zero = 0, pos = 0;
	int n = 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return -1;
	for (int i = 0; i < PATH_COMPONENTS; i++) {
		struct dentry *p;

		if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
			struct mount *pm = BPF_CORE_READ(m, mnt_parent);

			if (pm == m)
				break;
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = pm;
			continue;
		}
		p = BPF_CORE_READ(d, d_parent);
		if (!p || p == d)
			break;
		names[n & (PATH_COMPONENTS - 1)] = (__u64)BPF_CORE_READ(d, d_name.name);
		n++;
		d = p;
	}
	for (int i = PATH_COMPONENTS - 1; i >= 0; i--) {
		long len;

		if (i >= n)
			continue;
		s->buf[pos & (NODEFD_PATH_MAX - 1)] = '/';
		pos++;
		len = bpf_probe_read_kernel_str(&s->buf[pos & (NODEFD_PATH_MAX - 1)],
						NODEFD_PATH_MAX,
						(void *)names[i & (PATH_COMPONENTS - 1)]);
		if (len > 0)
			pos += len - 1;
		if (pos >= NODEFD_PATH_MAX - 1)
			break;
	}
	if (!n)
		s->buf[pos++ & (NODEFD_PATH_MAX - 1)] = '/';
	s->buf[pos & (NODEFD_PATH_MAX - 1)] = '\0';
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
	ev->orig_mode = c->orig_mode;
	ev->req_flags = c->req_flags;
	ev->req_mode = c->req_mode;
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
