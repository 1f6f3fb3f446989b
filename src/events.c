// SPDX-License-Identifier: GPL-2.0
/* events.c - the events verb: refused and audited opens from the pinned ring buffer */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"
#include "onode.h"
#include "policyfile.h"
#include "cgroup.h"

/* f_mode bits are kernel-internal (include/linux/fs.h); nodefd.h documents the ones it reports. */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define FMODE_EXEC 0x20
#define FMODE_PATH 0x4000

struct events_ctx {
	__u64 count;		/* stop after this many; 0: never */
	__u64 seen;
	struct event_fmt fmt;
	bool warned_size;
};

static volatile sig_atomic_t events_stop;

static void events_help(void)
{
	printf("Usage: nodefdctl [-j|-p] events [--count N] [--timeout SECONDS]\n"
	       "\n"
	       "Prints each refused (deny) or audited (audit) open or walk through a proc magic\n"
	       "link as one line, or one JSON object per line with --json, as nodefd reports it,\n"
	       "with the opener's cgroup by id and by path (found under " CGROUP_ROOT ").\n"
	       "Events wait in the ring buffer until read, so a later reader sees earlier ones;\n"
	       "while 'nodefdctl daemon' runs it reads them, and this would take some from it.\n"
	       "\n"
	       "  -c, --count N          exit after N events\n"
	       "  -t, --timeout SECONDS  exit after SECONDS (0: print what is waiting and exit)\n"
	       "\n"
	       "Exit status 0, or 1 when --count N was given and fewer than N events came\n"
	       "before the timeout or a signal.\n");
}

static void events_on_signal(int sig)
{
	(void)sig;
	events_stop = 1;
}

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
	if (mode & FMODE_PATH)
		n += snprintf(buf + n, size - n, "path");
	if (mode & FMODE_READ)
		n += snprintf(buf + n, size - n, "r");
	if (mode & FMODE_WRITE)
		n += snprintf(buf + n, size - n, "w");
	if (mode & FMODE_EXEC)
		n += snprintf(buf + n, size - n, "x");
	if (!n)
		n += snprintf(buf + n, size - n, "-");
	if (flags & O_APPEND)
		n += snprintf(buf + n, size - n, "+append");
	if (flags & O_TRUNC)
		n += snprintf(buf + n, size - n, "+trunc");
	if (flags & O_NODE)
		snprintf(buf + n, size - n, "+node");
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
		unsigned char c = s[i];

		if (c <= ' ' || c == 0x7f || c == '\\')
			n += snprintf(buf + n, size - n, "\\x%02x", c);
		else
			buf[n++] = c;
	}
	if (n < size)
		buf[n] = '\0';
	return n;
}

static void json_add_bytes(struct json_object *obj, const char *key, const char *s, size_t max)
{
	json_object_object_add(obj, key, json_object_new_string_len(s, strnlen(s, max)));
}

struct json_object *event_json(const struct event_fmt *f, const struct nodefd_event *ev)
{
	struct json_object *obj = json_object_new_object();
	char when[32], orig[32], req[32];

	format_time(when, sizeof(when), (__s64)ev->ts_ns + f->mono_to_real);
	format_access(orig, sizeof(orig), ev->orig_mode, ev->orig_flags);
	format_access(req, sizeof(req), ev->req_mode, ev->req_flags);
	json_add_str(obj, "type", "event");
	json_add_str(obj, "time", when);
	json_add_u64(obj, "ts_ns", ev->ts_ns);
	json_add_str(obj, "action", action_name(ev->action));
	json_add_str(obj, "rule", rule_name(ev->rule));
	json_add_str(obj, "kind", kind_name(ev->kind));
	json_add_str(obj, "reason", reason_name(ev->reason));
	json_add_str(obj, "hook", hook_name(ev->hook));
	json_add_u64(obj, "pid", ev->pid);
	json_add_u64(obj, "tid", ev->tid);
	json_add_u64(obj, "uid", ev->uid);
	json_add_bytes(obj, "comm", ev->comm, sizeof(ev->comm));
	json_add_u64(obj, "cgroup_id", ev->cgroup_id);
	json_add_str(obj, "cgroup_path", cgroup_path_cached(ev->cgroup_id));
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
	return obj;
}

#define PUT(...)                                                                               \
	do {                                                                                   \
		if (n < size)                                                                  \
			n += snprintf(buf + n, size - n, __VA_ARGS__);                         \
	} while (0)
#define PUT_ESCAPED(s, max)                                                                    \
	do {                                                                                   \
		if (n < size)                                                                  \
			n += put_escaped(buf + n, size - n, (s), (max));                       \
	} while (0)

void event_text(const struct event_fmt *f, const struct nodefd_event *ev, char *buf, size_t size)
{
	const char *cg = cgroup_path_cached(ev->cgroup_id);
	char when[32], orig[32], req[32];
	size_t n = 0;

	format_time(when, sizeof(when), (__s64)ev->ts_ns + f->mono_to_real);
	format_access(orig, sizeof(orig), ev->orig_mode, ev->orig_flags);
	format_access(req, sizeof(req), ev->req_mode, ev->req_flags);
	PUT("%s %s %s %s pid=%u comm=", when, action_name(ev->action), rule_name(ev->rule),
	    kind_name(ev->kind), ev->pid);
	PUT_ESCAPED(ev->comm, sizeof(ev->comm));
	PUT(" uid=%u cgroup=%llu cgroup_path=", ev->uid, (unsigned long long)ev->cgroup_id);
	PUT_ESCAPED(cg ? cg : "?", CGROUP_PATH_MAX);
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
	if (n >= size && size)
		buf[size - 1] = '\0';
}

static int event_handle(void *data, void *sample, size_t size)
{
	const struct nodefd_event *ev = sample;
	struct events_ctx *ctx = data;

	if (size < sizeof(*ev)) {
		if (!ctx->warned_size)
			p_warn("events: skipping records of %zu bytes, not %zu: loaded by another nodefdctl?",
			       size, sizeof(*ev));
		ctx->warned_size = true;
		return 0;
	}
	if (json_output) {
		struct json_object *obj = event_json(&ctx->fmt, ev);

		json_print(obj);
		json_object_put(obj);
	} else {
		char line[EVENT_TEXT_MAX];

		event_text(&ctx->fmt, ev, line, sizeof(line));
		puts(line);
		fflush(stdout);
	}
	ctx->seen++;
	/* Stop consuming right here: later events stay in the buffer for the next reader. */
	if (ctx->count && ctx->seen >= ctx->count)
		return -ECANCELED;
	return 0;
}

static int parse_number(const char *opt, const char *arg, unsigned long long max,
			unsigned long long *val)
{
	char *end;

	errno = 0;
	*val = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end || errno || *val > max) {
		p_err("events: %s '%s': not a number (0 to %llu)", opt, arg, max);
		return -EINVAL;
	}
	return 0;
}

static int events_args(int argc, char **argv, struct events_ctx *ctx, long long *timeout_ms)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		GLOBAL_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":c:t:" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		if (parse_global_opt(c))
			continue;
		switch (c) {
		case 'c':
			if (parse_number("--count", optarg, ULLONG_MAX, &v))
				return CMD_USAGE;
			if (!v) {
				p_err("events: --count 0: must be at least 1");
				return CMD_USAGE;
			}
			ctx->count = v;
			break;
		case 't':
			if (parse_number("--timeout", optarg, LLONG_MAX / 1000, &v))
				return CMD_USAGE;
			*timeout_ms = v * 1000;
			break;
		case OPT_HELP:
			events_help();
			return CMD_OK;
		case OPT_VERSION:
			return print_version();
		default:
			return opt_error(argv[0], c, argv);
		}
	}
	if (optind < argc && !strcmp(argv[optind], "help")) {
		events_help();
		return CMD_OK;
	}
	if (optind < argc) {
		p_err("events: unexpected argument '%s'; try 'nodefdctl events help'",
		      argv[optind]);
		return CMD_USAGE;
	}
	return -1;
}

static int events_loop(struct ring_buffer *rb, long long timeout_ms)
{
	__s64 deadline = timeout_ms >= 0 ? now_ns(CLOCK_MONOTONIC) + timeout_ms * 1000000 : 0;
	int n;

	while (!events_stop) {
		int wait_ms = -1;

		if (timeout_ms >= 0) {
			__s64 left = deadline - now_ns(CLOCK_MONOTONIC);

			/* Past the deadline: one last look at what is already waiting. */
			wait_ms = left > 0 ? (int)((left + 999999) / 1000000) : 0;
			if (left > (__s64)INT_MAX * 1000000)
				wait_ms = INT_MAX;
		}
		n = ring_buffer__poll(rb, wait_ms);
		if (n == -ECANCELED)
			return 0;
		if (n == -EINTR)
			continue;
		if (n < 0) {
			p_err("events: %s/events: %s", PIN_DIR, errstr(n));
			return n;
		}
		if (timeout_ms >= 0 && now_ns(CLOCK_MONOTONIC) >= deadline && !wait_ms)
			break;
	}
	return 0;
}

int do_events(int argc, char **argv)
{
	struct events_ctx ctx = {};
	long long timeout_ms = -1;
	struct sigaction sa = {};
	struct ring_buffer *rb;
	int ret, err, fd;
	pid_t pid;

	ret = events_args(argc, argv, &ctx, &timeout_ms);
	if (ret >= 0)
		return ret;

	if (pin_require("events"))
		return CMD_FAIL;
	pid = lock_daemon_pid();
	if (pid)
		p_warn("events: the daemon (pid %d) reads the same ring buffer: each event goes to one of you only",
		       pid);
	fd = pin_map_open("events", "events", BPF_MAP_TYPE_RINGBUF, 0);
	if (fd < 0)
		return CMD_FAIL;

	event_fmt_init(&ctx.fmt);
	rb = ring_buffer__new(fd, event_handle, &ctx, NULL);
	if (!rb) {
		err = -errno;
		p_err("events: %s/events: cannot map the ring buffer: %s", PIN_DIR, errstr(err));
		close(fd);
		return CMD_FAIL;
	}

	/* No SA_RESTART: a signal ends the wait in epoll_wait() at once. */
	sa.sa_handler = events_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	err = events_loop(rb, timeout_ms);
	ring_buffer__free(rb);
	close(fd);
	if (err)
		return CMD_FAIL;
	if (ctx.count && ctx.seen < ctx.count) {
		p_err("events: %s after %llu of %llu events",
		      events_stop ? "stopped by a signal" : "timed out",
		      (unsigned long long)ctx.seen, (unsigned long long)ctx.count);
		return CMD_FAIL;
	}
	return CMD_OK;
}
