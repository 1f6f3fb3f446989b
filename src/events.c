// SPDX-License-Identifier: GPL-2.0
/* events.c - the events verb: refused and audited opens from the pinned ring buffer */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <fnmatch.h>
#include <stdint.h>
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
#include "policyfile.h"
#include "cgroup.h"
#include "feed.h"

/* Which events to print: every filter given must match (AND); a list matches any of its words. */
struct events_filter {
	unsigned int rules;	/* bit per enum nodefd_rule; 0: any */
	unsigned int actions;	/* bit per enum nodefd_mode; 0: any */
	bool has_cgroup, has_pid, has_uid;
	char cgroup[CGROUP_PATH_MAX];	/* fnmatch(3) pattern of a normalised cgroup path */
	__u32 pid, uid;
};

/* Long options without a short one. */
enum {
	OPT_RULE = 0x100,
	OPT_ACTION,
	OPT_CGROUP,
	OPT_PID,
	OPT_UID,
};

struct events_ctx {
	struct heldback held;
	__u64 count;		/* stop after this many printed; 0: never */
	__u64 seen;
	struct event_fmt fmt;
	struct events_filter filter;
	bool warned_size;
	bool warned_sweep;
};

static volatile sig_atomic_t events_stop;

static void events_help(void)
{
	printf("Usage: nodefdctl [-j|-p] events [--count N] [--timeout SECONDS] [--rule RULE,...]\n"
	       "                 [--action enforce|audit] [--cgroup CGROUP] [--pid PID] [--uid UID]\n"
	       "\n"
	       "Prints each refused (enforce) or audited (audit) open or walk through a proc magic\n"
	       "link as one line, or one JSON object per line with --json, as nodefd reports it,\n"
	       "with the opener's cgroup by id and by path (found under " CGROUP_ROOT ").\n"
	       "Events wait in the ring buffer until read, so a later reader sees earlier ones.\n"
	       "While 'nodefdctl daemon' runs it is the ring buffer's reader, and this command\n"
	       "gets every event from it (over " FEED_PATH ", root only) from its start on;\n"
	       "up to 16 of them may read at once.\n"
	       "\n"
	       "  -c, --count N          exit after N events\n"
	       "  -t, --timeout SECONDS  exit after SECONDS (0: print what is waiting and exit)\n"
	       "      --rule RULE,...    only events of these rules (upgrade, append, ancestors,\n"
	       "                         reach)\n"
	       "      --action ACTION,...  only refused (enforce) or audited (audit) events\n"
	       "      --cgroup CGROUP    only events of openers in CGROUP, a path under\n"
	       "                         " CGROUP_ROOT " or a glob(7) pattern of one ('*' also\n"
	       "                         matches '/': cli/* is every cgroup below cli)\n"
	       "      --pid PID          only events of the opener PID (its process id)\n"
	       "      --uid UID          only events of openers of real uid UID\n"
	       "\n"
	       "Filters combine: an event is printed when it matches every one given. Events\n"
	       "that do not match are read and dropped all the same; --count counts those\n"
	       "printed.\n"
	       "\n"
	       "Events held back by the rate limit (8 a second per source: uid, cgroup, rule,\n"
	       "reason, action and hook) are reported each second, and at exit, by a summary\n"
	       "record per source: \"suppressed N events\" (type \"suppressed\" under --json,\n"
	       "with count and count_total), once, by whichever reader reports first. --count\n"
	       "does not count them; the filters but --pid apply to them.\n"
	       "\n"
	       "Exit status 0, or 1 when --count N was given and fewer than N events came\n"
	       "before the timeout or a signal.\n");
}

static void events_on_signal(int sig)
{
	(void)sig;
	events_stop = 1;
}

static bool event_matches(const struct events_filter *f, const struct nodefd_event *ev)
{
	char cgbuf[CGROUP_PATH_MAX + 16];
	const char *cg, *rel;

	if (f->rules && (ev->rule >= NODEFD_RULE_NR || !(f->rules & (1U << ev->rule))))
		return false;
	if (f->actions && (ev->action >= NODEFD_MODE_NR || !(f->actions & (1U << ev->action))))
		return false;
	if (f->has_pid && ev->pid != f->pid)
		return false;
	if (f->has_uid && ev->uid != f->uid)
		return false;
	if (f->has_cgroup) {
		cg = event_cgroup_path(ev, cgbuf, sizeof(cgbuf));
		if (!cg || strncmp(cg, CGROUP_ROOT, strlen(CGROUP_ROOT)))
			return false;
		rel = cg + strlen(CGROUP_ROOT);
		rel += *rel == '/';
		if (fnmatch(f->cgroup, rel, 0))
			return false;
	}
	return true;
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
	if (!event_matches(&ctx->filter, ev))
		return 0;
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

/* "upgrade,append" into a bit per word, each a rule (or mode) by @parse: 0 or -EINVAL said. */
static int word_list_parse(const char *opt, const char *arg, const char *words, bool rules,
			   unsigned int *bits)
{
	char buf[256], q[3 * 64 + 8], *save = NULL, *w;

	if (strlen(arg) >= sizeof(buf) || !arg[0]) {
		p_err("events: %s '%s': not a list of %s", opt, text_quote(arg, 64, q, sizeof(q)),
		      words);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	*bits = 0;
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		unsigned int rule;
		__u8 mode;

		if (rules ? policy_rule_parse(w, &rule) : policy_mode_parse(w, &mode)) {
			p_err("events: %s: unknown '%s' (%s)", opt, text_quote(w, 64, q, sizeof(q)),
			      words);
			return -EINVAL;
		}
		*bits |= 1U << (rules ? rule : mode);
	}
	if (!*bits) {
		p_err("events: %s '%s': not a list of %s", opt, text_quote(arg, 64, q, sizeof(q)),
		      words);
		return -EINVAL;
	}
	return 0;
}

/* The filter options: 0, or CMD_USAGE having said why. */
static int events_filter_opt(struct events_filter *f, int c, const char *arg)
{
	char why[REASON_MAX];
	unsigned long long v;

	switch (c) {
	case OPT_RULE:
		return word_list_parse("--rule", arg, "upgrade, append, ancestors, reach", true,
				       &f->rules) ? CMD_USAGE : 0;
	case OPT_ACTION:
		return word_list_parse("--action", arg, "enforce, audit", false, &f->actions) ?
			       CMD_USAGE : 0;
	case OPT_CGROUP:
		if (cgroup_path_normalize(arg, f->cgroup, sizeof(f->cgroup), why, sizeof(why))) {
			p_err("events: --cgroup: %s", why);
			return CMD_USAGE;
		}
		f->has_cgroup = true;
		return 0;
	case OPT_PID:
		if (parse_number("--pid", arg, UINT32_MAX, &v))
			return CMD_USAGE;
		f->has_pid = true;
		f->pid = (__u32)v;
		return 0;
	case OPT_UID:
		if (parse_number("--uid", arg, UINT32_MAX, &v))
			return CMD_USAGE;
		f->has_uid = true;
		f->uid = (__u32)v;
		return 0;
	}
	return -1;
}

static int events_args(int argc, char **argv, struct events_ctx *ctx, long long *timeout_ms)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "rule", required_argument, NULL, OPT_RULE },
		{ "action", required_argument, NULL, OPT_ACTION },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "uid", required_argument, NULL, OPT_UID },
		GLOBAL_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":c:t:" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
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
			*timeout_ms = (long long)v * 1000;
			break;
		case OPT_RULE:
		case OPT_ACTION:
		case OPT_CGROUP:
		case OPT_PID:
		case OPT_UID:
			ret = events_filter_opt(&ctx->filter, c, optarg);
			if (ret)
				return ret;
			break;
		default:
			ret = verb_opt(c, argv[0], argv, events_help);
			if (ret >= 0)
				return ret;
		}
	}
	return verb_tail(argc, argv, argv[0], events_help, 0);
}

static void events_heldback(void *data, const struct nodefd_event_source *src, __u64 count,
			    __u64 total)
{
	struct events_ctx *ctx = data;
	struct nodefd_event ev;

	heldback_event(src, &ev);
	if (ctx->filter.has_pid || !event_matches(&ctx->filter, &ev))
		return;
	if (json_output) {
		struct json_object *obj = heldback_json(src, count, total);

		json_print(obj);
		json_object_put(obj);
	} else {
		char line[EVENT_TEXT_MAX];

		heldback_text(src, count, total, line, sizeof(line));
		puts(line);
		fflush(stdout);
	}
}

static void events_sweep(struct events_ctx *ctx)
{
	int err = heldback_sweep(&ctx->held, events_heldback, ctx);

	if (err && !ctx->warned_sweep)
		p_warn("events: %s/event_reported: cannot note a summary: %s (it may be said again)",
		       PIN_DIR, errstr(err));
	ctx->warned_sweep = ctx->warned_sweep || err;
}

#define SWEEP_MS 1000	/* summaries of what was held back, this often */

static int events_loop(struct ring_buffer *rb, long long timeout_ms, struct events_ctx *ctx)
{
	__s64 deadline = timeout_ms >= 0 ? now_ns(CLOCK_MONOTONIC) + timeout_ms * 1000000 : 0;
	__s64 next_sweep = now_ns(CLOCK_MONOTONIC) + (__s64)SWEEP_MS * 1000000;
	int n;

	while (!events_stop) {
		int wait_ms = SWEEP_MS;
		__s64 now = now_ns(CLOCK_MONOTONIC);

		if (now >= next_sweep) {
			events_sweep(ctx);
			next_sweep = now + (__s64)SWEEP_MS * 1000000;
		}
		if (timeout_ms >= 0) {
			__s64 left = deadline - now;

			/* Past the deadline: one last look at what is already waiting. */
			if (left <= 0)
				wait_ms = 0;
			else if (left < (__s64)SWEEP_MS * 1000000)
				wait_ms = (int)((left + 999999) / 1000000);
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
	/* What was held back up to the end, unless --count ended it. */
	if (!ctx->count || ctx->seen < ctx->count)
		events_sweep(ctx);
	return 0;
}

/* The exit status, having said why a --count was not reached. */
static int events_end(const struct events_ctx *ctx, int err)
{
	if (err)
		return CMD_FAIL;
	if (ctx->count && ctx->seen < ctx->count) {
		p_err("events: %s after %llu of %llu events",
		      events_stop ? "stopped by a signal" : "timed out",
		      (unsigned long long)ctx->seen, (unsigned long long)ctx->count);
		return CMD_FAIL;
	}
	return CMD_OK;
}

/* A FEED_LOST record: said in the stream, where a reader of it looks. */
static void events_lost(__u64 lost)
{
	char when[32];

	format_time(when, sizeof(when), now_ns(CLOCK_REALTIME));
	if (json_output) {
		struct json_object *obj = json_object_new_object();

		json_add_str(obj, "type", "lost");
		json_add_str(obj, "time", when);
		json_add_u64(obj, "count", lost);
		json_print(obj);
		json_object_put(obj);
	} else {
		printf("%s lost %llu events: this reader was too slow for the daemon's feed\n", when,
		       (unsigned long long)lost);
		fflush(stdout);
	}
}

/* One record of the daemon's feed: 0, 1 to stop (--count reached), or -errno said. */
static int events_feed_record(struct events_ctx *ctx, const struct feed_record *rec, size_t n)
{
	size_t head = offsetof(struct feed_record, ev);

	if (n < head || rec->abi != NODEFD_ABI_VERSION) {
		p_err("events: %s: a record of %zu bytes, ABI %u: not this nodefdctl's (%u)", FEED_PATH,
		      n, n >= head ? rec->abi : 0, NODEFD_ABI_VERSION);
		return -EPROTO;
	}
	switch (rec->type) {
	case FEED_EVENT:
		if (n < head + sizeof(rec->ev))
			break;
		return event_handle(ctx, (void *)&rec->ev, sizeof(rec->ev)) == -ECANCELED;
	case FEED_HELD:
		if (n < head + sizeof(rec->held))
			break;
		events_heldback(ctx, &rec->held.src, rec->held.count, rec->held.total);
		return 0;
	case FEED_LOST:
		if (n < head + sizeof(rec->lost))
			break;
		events_lost(rec->lost);
		return 0;
	default:
		return 0;	/* a kind this nodefdctl does not know */
	}
	p_err("events: %s: a record of type %u cut short (%zu bytes)", FEED_PATH, rec->type, n);
	return -EPROTO;
}

/* Events from the daemon's feed instead of the ring buffer, until the timeout, --count or a signal. */
static int events_feed_loop(int fd, long long timeout_ms, struct events_ctx *ctx, pid_t pid)
{
	__s64 deadline = timeout_ms >= 0 ? now_ns(CLOCK_MONOTONIC) + timeout_ms * 1000000 : 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct feed_record rec;
	ssize_t n;
	int ret;

	while (!events_stop) {
		int wait_ms = -1;

		if (timeout_ms >= 0) {
			__s64 left = deadline - now_ns(CLOCK_MONOTONIC);

			if (left <= 0)
				break;
			wait_ms = (int)((left + 999999) / 1000000);
		}
		ret = poll(&pfd, 1, wait_ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			p_err("events: %s: %s", FEED_PATH, errstr(errno));
			return -errno;
		}
		if (!ret)
			continue;
		n = recv(fd, &rec, sizeof(rec), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			p_err("events: the daemon (pid %d) stopped serving events%s%s", pid,
			      n ? ": " : "", n ? errstr(errno) : "");
			return -EPIPE;
		}
		ret = events_feed_record(ctx, &rec, (size_t)n);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	return 0;
}

int do_events(int argc, char **argv)
{
	struct events_ctx ctx = { .held = { .sources_fd = -1, .reported_fd = -1 } };
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
	if (pid) {
		fd = feed_connect(5000);
		if (fd >= 0) {
			/* No SA_RESTART: a signal ends the wait in poll() at once. */
			sa.sa_handler = events_on_signal;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
			event_fmt_init(&ctx.fmt);
			err = events_feed_loop(fd, timeout_ms, &ctx, pid);
			close(fd);
			return events_end(&ctx, err);
		}
		/* A daemon that serves them, but not to us now: never take its events. */
		if (fd != -ENOENT) {
			p_err("events: the daemon (pid %d) did not take this reader on %s: %s%s",
			      pid, FEED_PATH, errstr(fd),
			      fd == -ECONNREFUSED ? " (16 readers already?)" : "");
			return CMD_FAIL;
		}
		p_warn("events: the daemon (pid %d) serves no events on %s: reading the ring buffer it reads, each event goes to one of you only",
		       pid, FEED_PATH);
	}
	fd = pin_map_open("events", "events", BPF_MAP_TYPE_RINGBUF, 0);
	if (fd < 0)
		return CMD_FAIL;
	if (heldback_open(&ctx.held, "events")) {
		close(fd);
		return CMD_FAIL;
	}

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

	err = events_loop(rb, timeout_ms, &ctx);
	ring_buffer__free(rb);
	heldback_close(&ctx.held);
	close(fd);
	return events_end(&ctx, err);
}
