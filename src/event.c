// SPDX-License-Identifier: GPL-2.0
/* event.c - an event's text and JSON forms, for the events verb and the daemon */

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nodefdctl.h"
#include "policyfile.h"
#include "onode.h"
#include "cgroup.h"
#include "container.h"


__s64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__s64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The offset between the two clocks, taken from the tightest of a few brackets. */
static __s64 mono_to_real_offset(void)
{
	__s64 best = LLONG_MAX, off = 0;

	for (int i = 0; i < 5; i++) {
		__s64 m1 = now_ns(CLOCK_MONOTONIC);
		__s64 r = now_ns(CLOCK_REALTIME);
		__s64 m2 = now_ns(CLOCK_MONOTONIC);

		if (m2 - m1 < best) {
			best = m2 - m1;
			off = r - (m1 + (m2 - m1) / 2);
		}
	}
	return off;
}

void format_time(char *buf, size_t size, __s64 real_ns)
{
	time_t secs = real_ns / 1000000000;
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "%lld", (long long)real_ns);
}

/* "r", "rw", "-" (no access: a walk), "path" (O_PATH), with +append, +trunc, +node. */
static void format_access(char *buf, size_t size, __u32 mode, __u32 flags)
{
	size_t n = 0;

	buf[0] = '\0';
	if (mode & NODEFD_EV_MODE_PATH)
		n = text_append(buf, size, n, "path");
	if (mode & NODEFD_EV_MODE_READ)
		n = text_append(buf, size, n, "r");
	if (mode & NODEFD_EV_MODE_WRITE)
		n = text_append(buf, size, n, "w");
	if (mode & NODEFD_EV_MODE_EXEC)
		n = text_append(buf, size, n, "x");
	if (!n)
		n = text_append(buf, size, n, "-");
	if (flags & O_APPEND)
		n = text_append(buf, size, n, "+append");
	if (flags & O_TRUNC)
		n = text_append(buf, size, n, "+trunc");
	if (flags & O_NODE)
		text_append(buf, size, n, "+node");
}

void event_fmt_init(struct event_fmt *f)
{
	f->mono_to_real = mono_to_real_offset();
}

/* One token per field: spaces, control bytes and backslashes as \xNN. */
static size_t put_escaped(char *buf, size_t size, const char *s, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < max && s[i] && n + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c == 0x7f || c == '\\')
			n = text_append(buf, size, n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	if (n < size)
		buf[n] = '\0';
	return n;
}

static void json_add_bytes(struct json_object *obj, const char *key, const char *s, size_t max)
{
	/* @max is a field's size in struct nodefd_event: far below INT_MAX. */
	json_object_object_add(obj, key, json_object_new_string_len(s, (int)strnlen(s, max)));
}

const char *event_cgroup_path(const struct nodefd_event *ev, char *buf, size_t size)
{
	const char *cached;

	/* Recorded at the event: right even when the cgroup is gone. */
	if (ev->cgroup[0] && !(ev->flags & NODEFD_EV_CGROUP_CUT)) {
		snprintf(buf, size, "%s%.*s", CGROUP_ROOT, (int)strnlen(ev->cgroup, sizeof(ev->cgroup)),
			 ev->cgroup);
		cgroup_path_remember(ev->cgroup_id, buf);
		return buf;
	}
	/* Cut short (or not recorded): the whole path, while the cgroup is there. */
	cached = cgroup_path_cached(ev->cgroup_id);
	if (cached) {
		snprintf(buf, size, "%s", cached);
		return buf;
	}
	if (!ev->cgroup[0])
		return NULL;
	snprintf(buf, size, "%s/...%.*s", CGROUP_ROOT, (int)strnlen(ev->cgroup, sizeof(ev->cgroup)),
		 ev->cgroup);
	return buf;
}

/* The container and unit of @cgroup_path (absolute), or of nothing when it is NULL. */
static void event_container(const char *cgroup_path, struct container_info *c)
{
	size_t root = strlen(CGROUP_ROOT);

	container_from_cgroup(cgroup_path && !strncmp(cgroup_path, CGROUP_ROOT, root) ?
				      cgroup_path + root : "",
			      c);
}

static void json_add_container(struct json_object *obj, const struct container_info *c)
{
	struct json_object *o;

	if (!c->runtime) {
		json_object_object_add(obj, "container", NULL);
	} else {
		o = json_object_new_object();
		json_add_str(o, "runtime", c->runtime);
		json_add_str(o, "id", c->id);
		json_add_str(o, "pod_uid", c->pod_uid[0] ? c->pod_uid : NULL);
		json_object_object_add(obj, "container", o);
	}
	json_add_str(obj, "unit", c->unit[0] ? c->unit : NULL);
}

struct json_object *event_json(const struct event_fmt *f, const struct nodefd_event *ev)
{
	char cgbuf[CGROUP_PATH_MAX + 16];
	struct container_info cont;
	const char *cg;
	struct json_object *obj = json_object_new_object();
	char when[32], orig[32], req[32];

	format_time(when, sizeof(when), (__s64)ev->ts_ns + f->mono_to_real);
	format_access(orig, sizeof(orig), ev->orig_mode, ev->orig_flags);
	format_access(req, sizeof(req), ev->req_mode, ev->req_flags);
	json_add_str(obj, "type", "event");
	json_add_str(obj, "time", when);
	json_add_u64(obj, "ts_ns", ev->ts_ns);
	json_add_str(obj, "action", policy_mode_name(ev->action));
	json_add_str(obj, "rule", policy_rule_name(ev->rule));
	json_add_str(obj, "kind", kind_name(ev->kind));
	json_add_str(obj, "reason", reason_name(ev->reason));
	json_add_str(obj, "hook", hook_name(ev->hook));
	json_add_u64(obj, "pid", ev->pid);
	json_add_u64(obj, "tid", ev->tid);
	json_add_u64(obj, "uid", ev->uid);
	json_add_bytes(obj, "comm", ev->comm, sizeof(ev->comm));
	json_add_u64(obj, "cgroup_id", ev->cgroup_id);
	cg = event_cgroup_path(ev, cgbuf, sizeof(cgbuf));
	json_add_str(obj, "cgroup_path", cg);
	event_container(cg, &cont);
	json_add_container(obj, &cont);
	json_add_u64(obj, "holder_pid", ev->holder_pid);
	json_add_s64(obj, "holder_fd", ev->holder_fd);
	json_add_str(obj, "orig", orig);
	json_add_u64(obj, "orig_mode", ev->orig_mode);
	json_add_u64(obj, "orig_flags", ev->orig_flags);
	json_add_str(obj, "req", req);
	json_add_u64(obj, "req_mode", ev->req_mode);
	json_add_u64(obj, "req_flags", ev->req_flags);
	json_add_bytes(obj, "path", ev->path, sizeof(ev->path));
	if (ev->ancestor[0])
		json_add_bytes(obj, "ancestor", ev->ancestor, sizeof(ev->ancestor));
	else
		json_object_object_add(obj, "ancestor", NULL);
	json_add_u64(obj, "suppressed", ev->suppressed);
	return obj;
}

#define PUT(...)                                                                               \
	do {                                                                                   \
		if (n < size)                                                                  \
			n = text_append(buf, size, n, __VA_ARGS__);                            \
	} while (0)
#define PUT_ESCAPED(s, max)                                                                    \
	do {                                                                                   \
		if (n < size)                                                                  \
			n += put_escaped(buf + n, size - n, (s), (max));                       \
	} while (0)

void event_text(const struct event_fmt *f, const struct nodefd_event *ev, char *buf, size_t size)
{
	char when[32], orig[32], req[32], cgbuf[CGROUP_PATH_MAX + 16];
	const char *cg = event_cgroup_path(ev, cgbuf, sizeof(cgbuf));
	struct container_info cont;
	size_t n = 0;

	format_time(when, sizeof(when), (__s64)ev->ts_ns + f->mono_to_real);
	format_access(orig, sizeof(orig), ev->orig_mode, ev->orig_flags);
	format_access(req, sizeof(req), ev->req_mode, ev->req_flags);
	PUT("%s %s %s %s pid=%u comm=", when, policy_mode_name(ev->action), policy_rule_name(ev->rule),
	    kind_name(ev->kind), ev->pid);
	PUT_ESCAPED(ev->comm, sizeof(ev->comm));
	PUT(" uid=%u cgroup=%llu cgroup_path=", ev->uid, (unsigned long long)ev->cgroup_id);
	PUT_ESCAPED(cg ? cg : "?", CGROUP_PATH_MAX);
	event_container(cg, &cont);
	if (cont.runtime) {
		PUT(" container=%s:", cont.runtime);
		PUT_ESCAPED(cont.id, sizeof(cont.id));
		if (cont.pod_uid[0])
			PUT(" pod=%s", cont.pod_uid);
	}
	if (cont.unit[0]) {
		PUT(" unit=");
		PUT_ESCAPED(cont.unit, sizeof(cont.unit));
	}
	PUT(" holder=%u", ev->holder_pid);
	if (ev->holder_fd >= 0)
		PUT(" fd=%d", ev->holder_fd);
	PUT(" orig=%s req=%s hook=%s reason=%s", orig, req, hook_name(ev->hook),
	    reason_name(ev->reason));
	if (ev->ancestor[0]) {
		PUT(" ancestor=");
		PUT_ESCAPED(ev->ancestor, sizeof(ev->ancestor));
	}
	PUT(" path=");
	PUT_ESCAPED(ev->path, sizeof(ev->path));
	if (ev->suppressed)
		PUT(" suppressed=%u", ev->suppressed);
	if (n >= size && size)
		buf[size - 1] = '\0';
}

void heldback_event(const struct nodefd_event_source *src, struct nodefd_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->cgroup_id = src->cgroup_id;
	ev->uid = src->uid;
	ev->rule = (__u8)src->what;
	ev->reason = (__u8)(src->what >> 8);
	ev->action = (__u8)(src->what >> 16);
	ev->hook = (__u8)(src->what >> 24);
}

struct json_object *heldback_json(const struct nodefd_event_source *src, __u64 count,
				  __u64 total)
{
	struct json_object *obj = json_object_new_object();
	struct container_info cont;
	struct nodefd_event ev;
	char when[32];

	heldback_event(src, &ev);
	format_time(when, sizeof(when), now_ns(CLOCK_REALTIME));
	json_add_str(obj, "type", "suppressed");
	json_add_str(obj, "time", when);
	json_add_str(obj, "action", policy_mode_name(ev.action));
	json_add_str(obj, "rule", policy_rule_name(ev.rule));
	json_add_str(obj, "reason", reason_name(ev.reason));
	json_add_str(obj, "hook", hook_name(ev.hook));
	json_add_u64(obj, "uid", ev.uid);
	json_add_u64(obj, "cgroup_id", ev.cgroup_id);
	json_add_str(obj, "cgroup_path", cgroup_path_cached(ev.cgroup_id));
	event_container(cgroup_path_cached(ev.cgroup_id), &cont);
	json_add_container(obj, &cont);
	json_add_u64(obj, "count", count);
	json_add_u64(obj, "count_total", total);
	return obj;
}

void heldback_text(const struct nodefd_event_source *src, __u64 count, __u64 total, char *buf,
		   size_t size)
{
	const char *cg = cgroup_path_cached(src->cgroup_id);
	struct nodefd_event ev;
	char when[32];
	size_t n = 0;

	heldback_event(src, &ev);
	format_time(when, sizeof(when), now_ns(CLOCK_REALTIME));
	PUT("%s suppressed %llu events (%llu in all): %s %s hook=%s reason=%s uid=%u cgroup=%llu cgroup_path=",
	    when, (unsigned long long)count, (unsigned long long)total, policy_mode_name(ev.action),
	    policy_rule_name(ev.rule), hook_name(ev.hook), reason_name(ev.reason), ev.uid,
	    (unsigned long long)ev.cgroup_id);
	PUT_ESCAPED(cg ? cg : "?", CGROUP_PATH_MAX);
	if (n >= size && size)
		buf[size - 1] = '\0';
}
