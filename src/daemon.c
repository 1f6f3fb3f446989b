// SPDX-License-Identifier: GPL-2.0
/* daemon.c - the daemon verb: load or adopt, apply the policy file, stream events */

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"
#include "policyfile.h"
#include "cgroup.h"
#include "watch.h"
#include "feed.h"
#include "glob.h"
#include "conf.h"
#include "http.h"
#include "status.h"

/*
 * The daemon never holds enforcement up: the programs run from their pinned
 * links whether it runs or not.  It loads them if nothing is loaded, else
 * adopts the pins as they are (no detach, no gap), applies the policy file,
 * and then reads the events ring buffer.  Killed, it leaves everything in
 * place, and events wait in the ring buffer; the next daemon prints those
 * first and says how many there were.  Events the BPF side could not even
 * queue (ring buffer full) are only counted (NODEFD_CNT_EVENTS_DROPPED);
 * settings.dropped_reported remembers the total the last daemon reported,
 * so that the next one reports only what is new.  Only `nodefdctl unload`
 * removes enforcement; when it happens the daemon sees its pins go and
 * exits.
 */

#define TICK_MS 1000		/* drops and pins are looked at this often */

enum daemon_output {
	OUT_JSON,
	OUT_TEXT,
	OUT_SYSLOG,
};

struct daemon {
	const char *policy_file;	/* NULL: --no-policy */
	bool policy_named;		/* --policy: the file must exist */
	const char *conf_file;
	bool conf_named;		/* --config: the file must exist */
	struct daemon_conf conf;
	enum daemon_output out;

	int settings_fd;
	int counters_fd;
	int events_fd;
	int outer_fd;
	__u32 events_map_id;
	struct ring_buffer *rb;
	struct event_fmt fmt;

	/*
	 * The policy file in effect, its sections' cgroup ids as applied (0:
	 * none yet; for a pattern how many cgroups it rules) and the policies.
	 */
	struct policyfile pf;
	__u64 *ids;
	struct policy_list applied;
	struct cgroup_watch watch;	/* where those cgroups are made and removed */
	bool watch_warned;
	bool refresh_warned;

	bool draining;			/* reading what waited from before the start */
	__u64 backlog;
	__u64 events;
	__u64 dropped_seen;		/* the drop counter's total, as last reported */
	struct heldback held;		/* summaries of what the rate limit held back */
	struct feed feed;		/* every event passed on to local readers */
	bool warned_size;
	bool warned_sweep;

	struct policy_state ps;		/* what became of the policy file, for metrics */
	bool ps_warned;
	/* How it came by its pins; for a replacement, what it replaced. */
	enum { PINS_ADOPTED, PINS_LOADED, PINS_REPLACED } pins;
	int old_abi;
	char old_object[LOAD_OBJECT_ID_MAX];
	int old_gone, old_wait_ms;
	bool prepare_rejected;		/* the policy file, rejected before a replacement */
	bool canary_pending;		/* a replacement's canary event, not read yet */

	struct http *http;		/* the endpoint nodefd.conf asks for, once it listens */
	int ep;				/* the loop's epoll set */
	bool http_warned;
};

static void daemon_help(void)
{
	printf("Usage: nodefdctl daemon [--policy FILE | --no-policy] [--config FILE]\n"
	       "                        [--output json|text|syslog]\n"
	       "\n"
	       "Loads nodefd if it is not loaded, else adopts the pinned programs and maps\n"
	       "without a gap in enforcement; applies the policy file (default\n"
	       POLICY_FILE_DEFAULT ", if it exists); then streams events, one JSON\n"
	       "object per line on standard output (text: the events verb's lines; syslog:\n"
	       "those lines to syslog, facility daemon).\n"
	       "\n"
	       "First it prints the events that waited in the ring buffer while no daemon ran,\n"
	       "and a \"missed\" record: how many that was, and how many were lost because the\n"
	       "ring buffer was full; later losses are reported as they happen.\n"
	       "\n"
	       "Policies are kept by cgroup id, and a cgroup made again is a new one: the daemon\n"
	       "watches where the file's cgroups are made and removed and applies the file again\n"
	       "when one comes or goes, so a section for a service applies whenever it starts.\n"
	       "\n"
	       "SIGHUP reads the policy file again: a bad file is rejected whole and the running\n"
	       "policy stays. SIGTERM and SIGINT end the daemon (exit 0), leaving enforcement in\n"
	       "place: only 'nodefdctl unload' removes it. One daemon at a time ("
	       LOCK_DAEMON_PATH ").\n"
	       "\n"
	       "With [metrics] listen in its settings, the daemon serves over HTTP /metrics (what\n"
	       "'nodefdctl metrics' prints), /healthz and /readyz (200, or 503 and why). A\n"
	       "settings or policy file rejected at start: exit 6.\n"
	       "\n"
	       "  -f, --policy FILE   the policy file (nodefd-policy.conf(5)); must exist\n"
	       "  -n, --no-policy     leave the running policy alone\n"
	       "  -c, --config FILE   the daemon's settings (nodefd.conf(5); default\n"
	       "                      " CONF_FILE_DEFAULT ", if it exists): the metrics endpoint\n"
	       "  -o, --output KIND   json (default), text or syslog\n");
}

/* ---- output ------------------------------------------------------------ */

/*
 * Priorities, for syslog and the journal: a refusal is a warning, an audit
 * (and a summary of events held back) a notice, the daemon's own failures
 * errors, the rest information.
 */
static int event_prio(const struct nodefd_event *ev)
{
	return ev->action == NODEFD_MODE_ENFORCE ? LOG_WARNING : LOG_NOTICE;
}

/* "<N>" in front of a line of stdout when it goes to the journal, else "". */
static const char *journal_tag(int prio)
{
	static char tag[8];

	if (!journal_stream(STDOUT_FILENO))
		return "";
	snprintf(tag, sizeof(tag), "<%d>", prio & 7);
	return tag;
}

static void note_v(struct daemon *d, int prio, struct json_object *obj, const char *fmt,
		   va_list ap)
{
	char text[2048], when[32];

	vsnprintf(text, sizeof(text), fmt, ap);
	switch (d->out) {
	case OUT_JSON:
		format_time(when, sizeof(when), now_ns(CLOCK_REALTIME));
		json_add_str(obj, "time", when);
		json_print_prio(obj, prio);
		break;
	case OUT_TEXT:
		printf("%snodefd: %s\n", journal_tag(prio), text);
		fflush(stdout);
		break;
	case OUT_SYSLOG:
		syslog(prio, "%s", text);
		break;
	}
	json_object_put(obj);
}

/*
 * One record of the daemon's own: @obj (whose "type" says what it is) under
 * JSON, the sentence @fmt otherwise.  Takes @obj.
 */
static void note(struct daemon *d, int prio, struct json_object *obj, const char *fmt, ...)
	__printf(4, 5);

static void note(struct daemon *d, int prio, struct json_object *obj, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_v(d, prio, obj, fmt, ap);
	va_end(ap);
}

static struct json_object *record(const char *type)
{
	struct json_object *obj = json_object_new_object();

	json_add_str(obj, "type", type);
	return obj;
}

static void note_error(struct daemon *d, const char *fmt, ...) __printf(2, 3);

static void note_error(struct daemon *d, const char *fmt, ...)
{
	struct json_object *obj = record("error");
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_add_str(obj, "error", msg);
	note(d, LOG_ERR, obj, "error: %s", msg);
}

/* The event to the readers of the feed, as the ring buffer had it. */
static void daemon_feed_event(struct daemon *d, const struct nodefd_event *ev)
{
	struct feed_record rec = { .type = FEED_EVENT, .ev = *ev };

	if (d->feed.n)
		feed_send(&d->feed, &rec, offsetof(struct feed_record, ev) + sizeof(rec.ev));
}

static int daemon_event(void *ctx, void *data, size_t size)
{
	const struct nodefd_event *ev = data;
	struct daemon *d = ctx;
	char line[EVENT_TEXT_MAX];

	if (size < sizeof(*ev)) {
		if (!d->warned_size)
			note_error(d, "skipping event records of %zu bytes, not %zu: loaded by another nodefdctl?",
				   size, sizeof(*ev));
		d->warned_size = true;
		return 0;
	}
	/* A replacement's canary: its refusal was nodefd's own, not another LSM's. */
	if (d->canary_pending && ev->pid == (__u32)getpid() && ev->kind == NODEFD_KIND_FD &&
	    ev->rule == NODEFD_RULE_UPGRADE && ev->action == NODEFD_MODE_ENFORCE)
		d->canary_pending = false;
	d->events++;
	if (d->draining)
		d->backlog++;
	if (d->out == OUT_JSON) {
		struct json_object *obj = event_json(&d->fmt, ev);

		if (d->draining)
			json_add_bool(obj, "backlog", true);
		json_print_prio(obj, event_prio(ev));
		json_object_put(obj);
		daemon_feed_event(d, ev);
		return 0;
	}
	event_text(&d->fmt, ev, line, sizeof(line));
	if (d->out == OUT_TEXT) {
		printf("%s%s%s\n", journal_tag(event_prio(ev)), line, d->draining ? " backlog=yes" : "");
		fflush(stdout);
	} else {
		syslog(event_prio(ev), "%s%s", line, d->draining ? " backlog=yes" : "");
	}
	daemon_feed_event(d, ev);
	return 0;
}

/* ---- the policy file --------------------------------------------------- */

/*
 * Policies are keyed by cgroup id, and a cgroup gets a new id each time it
 * is made: a service restarted is a new cgroup.  So the daemon keeps the
 * file it applied and watches, with inotify, the directories in which its
 * sections' cgroups are made and removed (the nearest one that exists, for
 * a cgroup whose parent is not there yet).  When one changes it resolves
 * the file again and, if an id changed, swaps in the policy anew: a section
 * for a service not started yet applies once it starts, and one whose
 * cgroup is gone stops holding a dead id.  Between the cgroup's birth and
 * the swap its tasks follow its ancestors' policy.  On a kernel without
 * inotify (CONFIG_INOTIFY_USER) the daemon resolves the file again every
 * TICK_MS instead.
 */

struct pattern_watch {
	struct cgroup_watch *w;
	char *why;
	size_t size;
	int err;
};

static int pattern_watch_dir(const char *rel, __u64 id, enum cgroup_glob_kind kind, void *arg)
{
	struct pattern_watch *pw = arg;
	int err;

	(void)id;
	if (kind != CGROUP_GLOB_PARENT)
		return 0;
	err = cgroup_watch_dir(pw->w, rel, pw->err ? NULL : pw->why, pw->size);
	if (err && !pw->err)
		pw->err = err;
	return 0;
}

/*
 * Watch where the sections' cgroups are made and removed: the parent of
 * each exact path and of each pattern's base, and every cgroup below a
 * base that a match may be made in.  Says the first failure only.
 */
static void watches_reset(struct daemon *d)
{
	struct pattern_watch pw = { .w = &d->watch };
	char why[REASON_MAX];
	char (*bases)[CGROUP_PATH_MAX];
	const char **paths;
	int err;

	if (d->watch.fd < 0)
		return;
	paths = calloc(d->pf.n + 1, sizeof(*paths));
	bases = calloc(d->pf.n + 1, sizeof(*bases));
	if (!paths || !bases)
		goto out;
	for (size_t i = 0; i < d->pf.n; i++) {
		paths[i] = d->pf.entries[i].path;
		if (d->pf.entries[i].pattern) {
			glob_base(paths[i], bases[i], sizeof(bases[i]));
			paths[i] = bases[i];
		}
	}
	err = cgroup_watch_reset(&d->watch, paths, d->pf.n, why, sizeof(why));
	pw.why = err ? NULL : why;
	pw.size = sizeof(why);
	pw.err = err;
	for (size_t i = 0; i < d->pf.n; i++) {
		if (!d->pf.entries[i].pattern)
			continue;
		if (cgroup_glob_walk(d->pf.entries[i].path, pattern_watch_dir, &pw,
				     pw.err ? NULL : why, sizeof(why)) && !pw.err)
			pw.err = -EIO;
	}
	if (pw.err && !d->watch_warned) {
		note_error(d, "%s", why);
		d->watch_warned = true;
	}
out:
	free(paths);
	free(bases);
}

static void policy_record_add(struct json_object *obj, const struct policyfile *pf,
			      const __u64 *ids, const struct policy_list *l)
{
	struct json_object *arr = json_object_new_array();
	char abs[CGROUP_PATH_MAX + 16];
	size_t pending = 0;

	for (size_t i = 0; i < pf->n; i++) {
		if (ids[i])
			continue;
		pending++;
		cgroup_path_absolute(pf->entries[i].path, abs, sizeof(abs));
		json_object_array_add(arr, json_object_new_string(abs));
	}
	json_add_u64(obj, "policies", l->n);
	json_add_u64(obj, "pending", pending);
	json_object_object_add(obj, "pending_cgroups", arr);
	json_add_u64(obj, "map_id", l->map_id);
}

/* The record of what became of the policy file, for `nodefdctl metrics`. */
static void daemon_ps_save(struct daemon *d)
{
	int err = policy_state_write(&d->ps);

	if (err && !d->ps_warned)
		note_error(d, "%s: %s; 'nodefdctl metrics' leaves out the nodefd_policy_* metrics",
			   POLICY_STATE_PATH, errstr(err));
	d->ps_warned = err != 0;
}

static void daemon_ps_load(struct daemon *d, bool ok)
{
	__s64 now = (__s64)time(NULL);

	d->ps.last_load_s = now;
	d->ps.last_ok = ok;
	if (ok) {
		d->ps.loads_ok++;
		d->ps.generation++;
		d->ps.last_ok_s = now;
	} else {
		d->ps.loads_failed++;
	}
	daemon_ps_save(d);
}

/*
 * The parsed file's policies, resolved now (*@ids, *@pending, @l as policy_file_resolve()
 * gives them) and swapped in as @outer_fd's map: 0, or -errno with the reason in @why.
 */
static int policy_put(const struct daemon *d, int outer_fd, const struct policyfile *pf,
		      __u64 **ids, size_t *pending, struct policy_list *l, char *why, size_t size)
{
	int err;

	*ids = calloc(pf->n + 1, sizeof(**ids));
	if (!*ids) {
		snprintf(why, size, "out of memory");
		return -ENOMEM;
	}
	err = policy_file_resolve(d->policy_file, pf, *ids, pending, l, why, size);
	if (err)
		return err;
	err = policy_swap(outer_fd, l);
	if (err)
		snprintf(why, size, "%s: cannot swap in the new policy map: %s", d->policy_file,
			 errstr(err));
	return err;
}

/* 0 if applied or there was nothing to apply; -errno if the file was rejected. */
static int daemon_policy_apply(struct daemon *d, const char *why_now)
{
	char why[4 * REASON_MAX];
	struct policy_list l = {};
	struct json_object *obj;
	struct policyfile pf;
	size_t pending = 0;
	__u64 *ids = NULL;
	int lock, err;

	if (!d->policy_file)
		return 0;
	lock = lock_maps("daemon");
	if (lock < 0) {
		note_error(d, "%s: cannot lock %s to apply %s; the running policy is unchanged",
			   why_now, LOCK_MAPS_PATH, d->policy_file);
		return lock;
	}
	err = policy_file_parse(d->policy_file, &pf, why, sizeof(why));
	if (err == -ENOENT && !d->policy_named) {
		obj = record("policy");
		json_add_str(obj, "result", "none");
		json_add_str(obj, "file", d->policy_file);
		note(d, LOG_INFO, obj, "policy: %s: no such file; the running policy is kept",
		     d->policy_file);
		err = 0;
		goto out_unlock;
	}
	if (!err)
		err = policy_put(d, d->outer_fd, &pf, &ids, &pending, &l, why, sizeof(why));
	obj = record("policy");
	json_add_str(obj, "file", d->policy_file);
	if (err) {
		json_add_str(obj, "result", "rejected");
		json_add_str(obj, "error", why);
		note(d, LOG_ERR, obj, "policy: %s: %s; rejected whole, the running policy is unchanged",
		     why_now, why);
		policyfile_free(&pf);
		free(ids);
		daemon_ps_load(d, false);
	} else {
		json_add_str(obj, "result", "applied");
		policy_record_add(obj, &pf, ids, &l);
		note(d, LOG_INFO, obj, "policy: %s: %s: %zu %s in effect, %zu for cgroups not there yet",
		     why_now, d->policy_file, l.n, l.n == 1 ? "policy" : "policies", pending);
		policyfile_free(&d->pf);
		free(d->ids);
		policy_list_free(&d->applied);
		d->pf = pf;
		d->ids = ids;
		d->applied = l;
		memset(&l, 0, sizeof(l));
		watches_reset(d);
		daemon_ps_load(d, true);
	}
	policy_list_free(&l);
out_unlock:
	lock_release(lock);
	return err;
}

/* The file in effect resolved now: true if a cgroup of it came or went since it was applied. */
static bool policy_ids_changed(struct daemon *d, __u64 *ids)
{
	char why[4 * REASON_MAX];
	struct policy_list l;
	size_t pending;
	bool changed;

	if (policy_file_resolve(d->policy_file, &d->pf, ids, &pending, &l, why, sizeof(why)))
		return true;	/* said when done again under the lock */
	changed = memcmp(ids, d->ids, d->pf.n * sizeof(*ids)) || !policy_list_same(&l, &d->applied);
	policy_list_free(&l);
	return changed;
}

/* A watched directory changed (or a tick passed): apply the file again if a cgroup came or went. */
static void daemon_policy_refresh(struct daemon *d)
{
	char why[4 * REASON_MAX];
	struct policy_list l = {};
	struct json_object *obj;
	size_t pending;
	__u64 *ids;
	int lock, err;

	if (!d->ids)
		return;
	ids = calloc(d->pf.n + 1, sizeof(*ids));
	if (!ids)
		return;
	/* Cheap enough to do unlocked every tick; the lock only for a change. */
	if (!policy_ids_changed(d, ids))
		goto out_free;
	lock = lock_maps("daemon");
	if (lock < 0)
		goto out_free;
	err = policy_file_resolve(d->policy_file, &d->pf, ids, &pending, &l, why, sizeof(why));
	if (err) {
		if (!d->refresh_warned)
			note_error(d, "cgroups changed: %s; the running policy is unchanged", why);
		d->refresh_warned = true;
		goto out_unlock;
	}
	d->refresh_warned = false;
	if (!memcmp(ids, d->ids, d->pf.n * sizeof(*ids)) && policy_list_same(&l, &d->applied))
		goto out_unlock;
	err = policy_swap(d->outer_fd, &l);
	if (err) {
		note_error(d, "cgroups changed: cannot swap in the new policy map: %s; the running policy is unchanged",
			   errstr(err));
		goto out_unlock;
	}
	obj = record("policy");
	json_add_str(obj, "file", d->policy_file);
	json_add_str(obj, "result", "reapplied");
	json_add_str(obj, "reason", "cgroups made or removed");
	policy_record_add(obj, &d->pf, ids, &l);
	note(d, LOG_INFO, obj,
	     "policy: cgroups made or removed: %s applied again: %zu %s in effect, %zu for cgroups not there yet",
	     d->policy_file, l.n, l.n == 1 ? "policy" : "policies", pending);
	memcpy(d->ids, ids, d->pf.n * sizeof(*ids));
	policy_list_free(&d->applied);
	d->applied = l;
	memset(&l, 0, sizeof(l));
	d->ps.refreshes++;
	d->ps.generation++;
	daemon_ps_save(d);
out_unlock:
	lock_release(lock);
	policy_list_free(&l);
out_free:
	free(ids);
	/* Parents made meanwhile are the places to watch now. */
	watches_reset(d);
}

/* ---- lost events --------------------------------------------------------- */

static int dropped_read(struct daemon *d, __u64 *total)
{
	__u64 sums[NODEFD_CNT_NR];
	int err;

	err = counters_read(d->counters_fd, sums);
	if (!err)
		*total = sums[NODEFD_CNT_EVENTS_DROPPED];
	return err;
}

/* settings.dropped_reported = @total, keeping what enable and disable write. */
static void dropped_remember(struct daemon *d, __u64 total)
{
	struct nodefd_config cfg;
	int lock, err;

	d->dropped_seen = total;
	lock = lock_maps("daemon");
	if (lock < 0)
		return;
	err = settings_read(d->settings_fd, &cfg);
	if (!err) {
		cfg.dropped_reported = total;
		err = settings_write(d->settings_fd, &cfg);
	}
	lock_release(lock);
	if (err)
		note_error(d, "%s/settings: cannot note the drops reported: %s", PIN_DIR,
			   errstr(err));
}

/* What waited in the ring buffer, and what was lost, while no daemon read it. */
static int daemon_catch_up(struct daemon *d)
{
	struct nodefd_config cfg;
	struct json_object *obj;
	__u64 total, since;
	int err;

	d->draining = true;
	err = ring_buffer__consume(d->rb);
	d->draining = false;
	if (err < 0) {
		note_error(d, "%s/events: cannot read the ring buffer: %s", PIN_DIR, errstr(err));
		return err;
	}
	err = dropped_read(d, &total);
	if (!err)
		err = settings_read(d->settings_fd, &cfg);
	if (err) {
		note_error(d, "%s: cannot read the drop counter: %s", PIN_DIR, errstr(err));
		return err;
	}
	if (d->canary_pending)
		note_error(d, "the new programs refused the canary's reopen but reported no event for it: another LSM refused it, or the event was lost (events_dropped says); 'nodefdctl status' shows what runs");
	d->canary_pending = false;
	/* Fewer than reported: the maps are newer than the note (a load in between). */
	since = total >= cfg.dropped_reported ? total - cfg.dropped_reported : total;
	/* Noted before it is said, so that whoever reads the record finds the note made. */
	dropped_remember(d, total);
	obj = record("missed");
	json_add_u64(obj, "events_waiting", d->backlog);
	json_add_u64(obj, "events_dropped", since);
	json_add_u64(obj, "events_dropped_total", total);
	note(d, since ? LOG_WARNING : LOG_INFO, obj,
	     "while no daemon ran: %llu events waited in the ring buffer (printed above), %llu were lost because it was full (%llu lost in all)",
	     (unsigned long long)d->backlog, (unsigned long long)since,
	     (unsigned long long)total);
	return 0;
}

static void daemon_heldback(void *ctx, const struct nodefd_event_source *src, __u64 count,
			    __u64 total)
{
	struct feed_record rec = { .type = FEED_HELD };
	struct daemon *d = ctx;
	char line[EVENT_TEXT_MAX];

	rec.held.src = *src;
	rec.held.count = count;
	rec.held.total = total;
	if (d->feed.n)
		feed_send(&d->feed, &rec, offsetof(struct feed_record, held) + sizeof(rec.held));
	if (d->out == OUT_JSON) {
		struct json_object *obj = heldback_json(src, count, total);

		json_print_prio(obj, LOG_NOTICE);
		json_object_put(obj);
		return;
	}
	heldback_text(src, count, total, line, sizeof(line));
	if (d->out == OUT_TEXT) {
		printf("%s%s\n", journal_tag(LOG_NOTICE), line);
		fflush(stdout);
	} else {
		syslog(LOG_NOTICE, "%s", line);
	}
}

/* A summary record per source whose events the rate limit held back since the last. */
static void daemon_check_heldback(struct daemon *d)
{
	int err = heldback_sweep(&d->held, daemon_heldback, d);

	if (err && !d->warned_sweep)
		note_error(d, "%s/event_reported: cannot note a summary: %s (it may be said again)",
			   PIN_DIR, errstr(err));
	d->warned_sweep = d->warned_sweep || err;
}

static void daemon_check_drops(struct daemon *d)
{
	struct json_object *obj;
	__u64 total;
	__u64 before = d->dropped_seen;

	if (dropped_read(d, &total) || total <= before)
		return;
	dropped_remember(d, total);
	obj = record("dropped");
	json_add_u64(obj, "events_dropped", total - before);
	json_add_u64(obj, "events_dropped_total", total);
	note(d, LOG_WARNING, obj, "%llu events lost because the ring buffer was full (%llu in all)",
	     (unsigned long long)(total - before), (unsigned long long)total);
}

/*
 * systemd's readiness protocol (sd_notify(3)) without libsystemd, which has no
 * static library to link: one datagram to the socket $NOTIFY_SOCKET names ('@'
 * first: the abstract namespace).  READY=1 goes only once the programs are
 * attached and the policy file applied, so that what nodefd.service is ordered
 * before (sysinit.target, and so every ordinary service) starts judged.
 */
static void daemon_notify(struct daemon *d, const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd, err = 0;

	if (!path || !*path)
		return;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len < 2 || len >= sizeof(sa.sun_path)) {
		note_error(d, "NOTIFY_SOCKET=%s: not a socket address", path);
		return;
	}
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		err = errno;
	else if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
			(socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err)
		note_error(d, "NOTIFY_SOCKET=%s: cannot tell systemd: %s", path, errstr(err));
}

/* ---- life -------------------------------------------------------------- */

static int daemon_args(int argc, char **argv, struct daemon *d)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'f' },
		{ "no-policy", no_argument, NULL, 'n' },
		{ "config", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		GLOBAL_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	char q[3 * 64 + 8];
	bool no_policy = false;
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":f:nc:o:" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		switch (c) {
		case 'f':
			if (!optarg[0] || strnlen(optarg, PATH_MAX) >= PATH_MAX) {
				p_err("daemon: --policy: %s", optarg[0] ? "longer than PATH_MAX" :
									   "empty file name");
				return CMD_USAGE;
			}
			d->policy_file = optarg;
			d->policy_named = true;
			break;
		case 'n':
			no_policy = true;
			break;
		case 'c':
			if (!optarg[0] || strnlen(optarg, PATH_MAX) >= PATH_MAX) {
				p_err("daemon: --config: %s", optarg[0] ? "longer than PATH_MAX" :
									   "empty file name");
				return CMD_USAGE;
			}
			d->conf_file = optarg;
			d->conf_named = true;
			break;
		case 'o':
			if (!strcmp(optarg, "json")) {
				d->out = OUT_JSON;
			} else if (!strcmp(optarg, "text")) {
				d->out = OUT_TEXT;
			} else if (!strcmp(optarg, "syslog")) {
				d->out = OUT_SYSLOG;
			} else {
				p_err("daemon: --output '%s': unknown (json, text or syslog)",
				      text_quote(optarg, 64, q, sizeof(q)));
				return CMD_USAGE;
			}
			break;
		default:
			ret = verb_opt(c, argv[0], argv, daemon_help);
			if (ret >= 0)
				return ret;
		}
	}
	ret = verb_tail(argc, argv, argv[0], daemon_help, 0);
	if (ret >= 0)
		return ret;
	if (no_policy && d->policy_named) {
		p_err("daemon: --policy and --no-policy: give one");
		return CMD_USAGE;
	}
	if (no_policy)
		d->policy_file = NULL;
	return -1;
}

/* The pins, checked and opened: 0 or -1 having said why. */
static int daemon_adopt(struct daemon *d)
{
	char why[REASON_MAX];

	if (pin_require("daemon") || load_links_check("daemon"))
		return -1;
	d->settings_fd = pin_map_open("daemon", "settings", BPF_MAP_TYPE_ARRAY,
				      sizeof(struct nodefd_config));
	if (d->settings_fd < 0)
		return -1;
	d->counters_fd = pin_map_open("daemon", "counters", BPF_MAP_TYPE_PERCPU_ARRAY,
				      sizeof(__u64));
	if (d->counters_fd < 0)
		return -1;
	d->events_fd = pin_map_open("daemon", "events", BPF_MAP_TYPE_RINGBUF, 0);
	if (d->events_fd < 0)
		return -1;
	d->outer_fd = policy_outer_open("daemon");
	if (d->outer_fd < 0)
		return -1;
	if (heldback_open(&d->held, "daemon"))
		return -1;
	d->events_map_id = map_id_of_fd(d->events_fd);
	/* Without inotify (ENOSYS: CONFIG_INOTIFY_USER off), ticks do. */
	cgroup_watch_init(&d->watch);
	d->rb = ring_buffer__new(d->events_fd, daemon_event, d, NULL);
	if (!d->rb) {
		p_err("daemon: %s/events: cannot map the ring buffer: %s", PIN_DIR, errstr(errno));
		return -1;
	}
	/* Without it `nodefdctl events` cannot read while the daemon runs: said, not fatal. */
	if (feed_listen(&d->feed, why, sizeof(why)))
		p_warn("daemon: %s; 'nodefdctl events' gets nothing while this daemon runs", why);
	return 0;
}

static void daemon_close(struct daemon *d)
{
	policyfile_free(&d->pf);
	free(d->ids);
	policy_list_free(&d->applied);
	cgroup_watch_free(&d->watch);
	feed_close(&d->feed);
	ring_buffer__free(d->rb);
	if (d->outer_fd >= 0)
		close(d->outer_fd);
	if (d->events_fd >= 0)
		close(d->events_fd);
	if (d->counters_fd >= 0)
		close(d->counters_fd);
	if (d->settings_fd >= 0)
		close(d->settings_fd);
	heldback_close(&d->held);
}

/*
 * The new programs' policy, in their own map before they judge anyone: the policy file's,
 * as the start applies it after. 0, or -errno having said why.
 */
static int daemon_prepare(void *ctx, int outer_fd)
{
	char why[4 * REASON_MAX];
	struct daemon *d = ctx;
	struct policy_list l = {};
	struct policyfile pf;
	size_t pending = 0;
	__u64 *ids = NULL;
	int err;

	if (!d->policy_file) {
		p_warn("daemon: --no-policy: the new programs start with no policy (every rule enforced everywhere); policies set by hand are not carried over");
		return 0;
	}
	err = policy_file_parse(d->policy_file, &pf, why, sizeof(why));
	if (err == -ENOENT && !d->policy_named) {
		p_warn("daemon: %s: no such file: the new programs start with no policy (every rule enforced everywhere)",
		       d->policy_file);
		return 0;
	}
	if (!err) {
		err = policy_put(d, outer_fd, &pf, &ids, &pending, &l, why, sizeof(why));
		policyfile_free(&pf);
	}
	free(ids);
	policy_list_free(&l);
	if (err) {
		p_err("daemon: %s; the pinned programs stay as they were", why);
		d->prepare_rejected = true;
	}
	return err;
}

/*
 * Pins of another ABI or object (an upgrade): ours take their place without a gap, with
 * the policy file and the old switch's state (load_run()). 0, or -errno having said why.
 */
static int daemon_replace(struct daemon *d)
{
	struct load_replace rep = { .prepare = daemon_prepare, .ctx = d, .enabled = true };
	bool enabled;
	int err;

	if (pin_abi_read(&d->old_abi))
		d->old_abi = -1;
	if (pin_object_read(d->old_object, sizeof(d->old_object)))
		snprintf(d->old_object, sizeof(d->old_object), "unknown");
	err = pin_enabled_read(&enabled);
	if (err)
		p_warn("daemon: %s/settings: %s; the new programs start enabled", PIN_DIR,
		       errstr(err));
	else
		rep.enabled = enabled;
	err = load_run("daemon", false, &rep);
	d->old_gone = rep.gone;
	d->old_wait_ms = rep.wait_ms;
	return err;
}

static void note_start(struct daemon *d)
{
	static const char *const how[] = {
		[PINS_ADOPTED] = "adopted the pins in",
		[PINS_LOADED] = "loaded nodefd and pinned it in",
		[PINS_REPLACED] = "replaced the programs of another nodefdctl, without a gap, in",
	};
	struct json_object *obj = record("start");
	struct nodefd_config cfg = {};

	settings_read(d->settings_fd, &cfg);
	json_add_u64(obj, "pid", (__u64)getpid());
	json_add_str(obj, "version", NODEFDCTL_VERSION);
	json_add_u64(obj, "abi_version", NODEFD_ABI_VERSION);
	json_add_str(obj, "pins", d->pins == PINS_LOADED ? "loaded" :
				  d->pins == PINS_REPLACED ? "replaced" : "adopted");
	if (d->pins == PINS_REPLACED) {
		struct json_object *o = json_object_new_object();

		json_add_s64(o, "abi_version", d->old_abi);
		json_add_str(o, "object", d->old_object);
		json_add_u64(o, "programs_gone", (__u64)d->old_gone);
		json_add_u64(o, "wait_ms", (__u64)d->old_wait_ms);
		json_object_object_add(obj, "replaced", o);
	}
	json_add_bool(obj, "enabled", cfg.enabled);
	json_add_str(obj, "policy_file", d->policy_file);
	json_add_str(obj, "cgroup_watch", d->watch.fd >= 0 ? "inotify" : "poll");
	note(d, LOG_INFO, obj, "daemon %d started: %s %s, %s", getpid(), how[d->pins], PIN_DIR,
	     cfg.enabled ? "enabled" : "disabled ('nodefdctl enable' to enforce)");
}

/* 1 to go on, 0 to end well (unloaded), -1 to end badly (pins replaced). */
static int daemon_check_pins(struct daemon *d)
{
	struct json_object *obj;
	__u32 id = pin_map_id("events");

	if (id == d->events_map_id)
		return 1;
	obj = record("stop");
	json_add_str(obj, "reason", id ? "replaced" : "unloaded");
	if (id) {
		note(d, LOG_ERR, obj,
		     "the pins in %s are not the ones this daemon adopted (another load?): stopping; start the daemon again to adopt them",
		     PIN_DIR);
		return -1;
	}
	note(d, LOG_NOTICE, obj, "nodefd was unloaded (no %s): stopping", PIN_DIR);
	return 0;
}

/* ---- the HTTP endpoint --------------------------------------------------- */

/* /readyz: enforcing as it should. False with the reason in @out. */
static bool daemon_ready(const struct daemon *d, const struct status *s, FILE *out)
{
	if (s->lsm_err) {
		fprintf(out, "not ready: cannot read the kernel's LSM list: %s\n", errstr(s->lsm_err));
		return false;
	}
	if (!lsm_list_has(s->lsm, "bpf")) {
		fprintf(out, "not ready: bpf is not in the kernel's LSM list (%s): nothing is enforced\n",
			s->lsm);
		return false;
	}
	if (!s->loaded) {
		fprintf(out, "not ready: nodefd is not loaded\n");
		return false;
	}
	for (int i = 0; i < s->nprogs; i++) {
		if (s->progs[i].err) {
			fprintf(out, "not ready: %s is not attached: %s\n", s->progs[i].name,
				errstr(s->progs[i].err));
			return false;
		}
	}
	fprintf(out, "ready: %s, %zu %s%s\n",
		s->enabled ? "enforcing" : "loaded but disabled ('nodefdctl enable')",
		d->applied.n, d->applied.n == 1 ? "policy" : "policies",
		d->ps.last_ok ? "" : "; the last policy file read was rejected (the one before runs)");
	return true;
}

static unsigned int daemon_page(void *ctx, const char *path, FILE *out, const char **type)
{
	struct daemon *d = ctx;
	struct status s = {};

	if (!strcmp(path, "/healthz")) {
		/* Served from the daemon's loop: that it answers is that the loop runs. */
		fprintf(out, "ok\n");
		return 200;
	}
	if (strcmp(path, "/metrics") && strcmp(path, "/readyz")) {
		fprintf(out, "not found: this is nodefd; it serves /metrics, /healthz and /readyz\n");
		return 404;
	}
	if (status_gather(&s, "daemon")) {
		fprintf(out, "cannot read nodefd's state (the daemon's log says why)\n");
		return 503;
	}
	if (!strcmp(path, "/readyz"))
		return daemon_ready(d, &s, out) ? 200 : 503;
	*type = "text/plain; version=0.0.4; charset=utf-8";
	metrics_write(out, &s, &d->ps);
	return 200;
}

/* Listens where nodefd.conf says, if not yet: a port taken now may be free at the next tick. */
static void daemon_http_try(struct daemon *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct json_object *obj;
	char why[REASON_MAX];

	if (d->http || !d->conf.metrics_listen[0])
		return;
	d->http = http_start(d->conf.metrics_listen, daemon_page, d, why, sizeof(why));
	if (!d->http) {
		if (!d->http_warned)
			note_error(d, "metrics: %s; trying again every %d ms", why, TICK_MS);
		d->http_warned = true;
		return;
	}
	ev.data.fd = http_fd(d->http);
	if (d->ep >= 0 && epoll_ctl(d->ep, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		note_error(d, "metrics: epoll: %s", errstr(errno));
		http_stop(d->http);
		d->http = NULL;
		return;
	}
	obj = record("metrics");
	json_add_str(obj, "listen", d->conf.metrics_listen);
	note(d, LOG_INFO, obj, "metrics: serving /metrics, /healthz and /readyz on http://%s",
	     d->conf.metrics_listen);
	d->http_warned = false;
}

static int daemon_loop(struct daemon *d, int sfd)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[4];
	int ep, n, err, ret = CMD_OK;
	__s64 next_tick = 0;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		note_error(d, "epoll: %s", errstr(errno));
		return CMD_FAIL;
	}
	d->ep = ep;
	daemon_http_try(d);
	ev.data.fd = ring_buffer__epoll_fd(d->rb);
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		note_error(d, "epoll: %s", errstr(errno));
		close(ep);
		return CMD_FAIL;
	}
	ev.data.fd = sfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev)) {
		note_error(d, "epoll: %s", errstr(errno));
		close(ep);
		return CMD_FAIL;
	}
	ev.data.fd = d->watch.fd;
	if (d->watch.fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, d->watch.fd, &ev)) {
		note_error(d, "epoll: %s", errstr(errno));
		close(ep);
		return CMD_FAIL;
	}
	ev.data.fd = d->feed.fd;
	if (d->feed.fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, d->feed.fd, &ev)) {
		note_error(d, "epoll: %s", errstr(errno));
		close(ep);
		return CMD_FAIL;
	}
	for (;;) {
		bool stop = false;
		__s64 now;

		n = epoll_wait(ep, evs, 4, TICK_MS);
		if (n < 0 && errno != EINTR) {
			note_error(d, "epoll_wait: %s", errstr(errno));
			ret = CMD_FAIL;
			break;
		}
		for (int i = 0; i < n; i++) {
			struct signalfd_siginfo si;
			struct json_object *obj;

			if (d->watch.fd >= 0 && evs[i].data.fd == d->watch.fd) {
				if (cgroup_watch_changed(&d->watch))
					daemon_policy_refresh(d);
				continue;
			}
			if (d->feed.fd >= 0 && evs[i].data.fd == d->feed.fd) {
				feed_accept(&d->feed);
				continue;
			}
			if (d->http && evs[i].data.fd == http_fd(d->http)) {
				http_run(d->http);
				continue;
			}
			if (evs[i].data.fd != sfd) {
				err = ring_buffer__consume(d->rb);
				if (err < 0)
					note_error(d, "%s/events: %s", PIN_DIR, errstr(err));
				continue;
			}
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGHUP) {
				daemon_policy_apply(d, "SIGHUP");
				continue;
			}
			obj = record("stop");
			json_add_str(obj, "reason", strsignal((int)si.ssi_signo));
			json_add_str(obj, "signal", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
			json_add_u64(obj, "events", d->events);
			note(d, LOG_INFO, obj,
			     "%s: stopping after %llu events; enforcement stays in place ('nodefdctl unload' removes it)",
			     si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM",
			     (unsigned long long)d->events);
			stop = true;
		}
		if (stop)
			break;
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= next_tick) {
			next_tick = now + (__s64)TICK_MS * 1000000;
			/*
			 * The ring buffer wakes its reader only when the reader had caught up as
			 * a record was committed; under a burst a record can be left with no
			 * wakeup after it until the next one comes (seen under TCG on 6.1 and
			 * 6.12). Reading on every tick as well bounds its wait to TICK_MS.
			 */
			err = ring_buffer__consume(d->rb);
			if (err < 0)
				note_error(d, "%s/events: %s", PIN_DIR, errstr(err));
			daemon_check_drops(d);
			daemon_check_heldback(d);
			if (d->http)
				http_run(d->http);	/* connections that timed out */
			else
				daemon_http_try(d);
			if (d->watch.fd < 0)
				daemon_policy_refresh(d);
			err = daemon_check_pins(d);
			if (err <= 0) {
				ret = err ? CMD_FAIL : CMD_OK;
				break;
			}
		}
	}
	http_stop(d->http);
	d->http = NULL;
	d->ep = -1;
	close(ep);
	return ret;
}

/* An endpoint asked for that this nodefdctl can serve: 0, or -errno with "FILE: reason". */
static int daemon_conf_check(const struct daemon *d, char *why, size_t size)
{
	char reason[REASON_MAX], qfile[3 * 128 + 8];
	struct sockaddr_storage ss;
	int err;

	err = http_parse_listen(d->conf.metrics_listen, &ss, reason, sizeof(reason));
	if (!err && !http_built_in) {
		snprintf(reason, sizeof(reason),
			 "this nodefdctl was built without the HTTP endpoint (a static build cannot link libmicrohttpd): use the packaged nodefdctl, or 'nodefdctl metrics'");
		err = -EOPNOTSUPP;
	}
	if (err)
		snprintf(why, size, "%s: [metrics] listen: %s",
			 text_quote(d->conf_file, 128, qfile, sizeof(qfile)), reason);
	return err;
}

int do_daemon(int argc, char **argv)
{
	struct daemon d = {
		.policy_file = POLICY_FILE_DEFAULT,
		.settings_fd = -1,
		.counters_fd = -1,
		.events_fd = -1,
		.outer_fd = -1,
		.held = { .sources_fd = -1, .reported_fd = -1 },
		.watch.fd = -1,
		.feed.fd = -1,
		.conf_file = CONF_FILE_DEFAULT,
		.ep = -1,
	};
	char why[3 * REASON_MAX];
	sigset_t mask;
	int ret, lock, sfd, err;

	ret = daemon_args(argc, argv, &d);
	if (ret >= 0)
		return ret;
	if (require_privilege("daemon"))
		return CMD_FAIL;
	/* Settings first: one that cannot be honoured stops the start, with exit 6 as a policy. */
	err = daemon_conf_read(d.conf_file, &d.conf, why, sizeof(why));
	if (err == -ENOENT && !d.conf_named)
		err = 0;
	else if (!err && d.conf.metrics_listen[0])
		err = daemon_conf_check(&d, why, sizeof(why));
	if (err) {
		char status[3 * REASON_MAX + 64];

		p_err("daemon: %s", why);
		snprintf(status, sizeof(status), "STATUS=not started: %s (exit %d)", why,
			 DAEMON_POLICY_REJECTED);
		daemon_notify(&d, status);
		return DAEMON_POLICY_REJECTED;
	}
	/* Before the lock: a daemon in a PID namespace of its own never runs. */
	if (pidns_host_check("daemon")) {
		daemon_notify(&d, "STATUS=not started: not in the host's PID namespace");
		return CMD_FAIL;
	}
	d.ps.pid = getpid();
	d.ps.last_ok = true;	/* nothing rejected yet */
	lock = lock_daemon("daemon");
	if (lock < 0)
		return CMD_FAIL;

	/* Signals wait in the signalfd from here on: none is lost while loading. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		p_err("daemon: signalfd: %s", errstr(errno));
		goto out_unlock;
	}
	if (d.out == OUT_SYSLOG)
		openlog("nodefd", LOG_PID | LOG_NDELAY, LOG_DAEMON);

	err = pin_state();
	if (err == 0) {
		err = load_run("daemon", false, NULL);
		if (!err)
			d.pins = PINS_LOADED;
		else if (err != -EEXIST)
			goto out_close_sfd;
	} else if (err > 0 && !load_pins_current()) {
		err = daemon_replace(&d);
		if (err && d.prepare_rejected) {
			snprintf(why, sizeof(why),
				 "STATUS=stopped: %s rejected (exit %d); the pinned programs stay as they were",
				 d.policy_file, DAEMON_POLICY_REJECTED);
			daemon_notify(&d, why);
			close(sfd);
			lock_release(lock);
			return DAEMON_POLICY_REJECTED;
		}
		if (err)
			goto out_close_sfd;
		d.pins = PINS_REPLACED;
		d.canary_pending = true;
	} else if (err < 0) {
		p_err("daemon: %s: %s", PIN_DIR, errstr(err));
		goto out_close_sfd;
	}
	if (daemon_adopt(&d))
		goto out_close;
	event_fmt_init(&d.fmt);
	note_start(&d);
	if (daemon_policy_apply(&d, "start")) {
		struct json_object *obj = record("stop");
		char status[256];

		json_add_str(obj, "reason", "policy rejected");
		note(&d, LOG_ERR, obj,
		     "stopping: the policy file was rejected at start; enforcement stays in place with the policy it had");
		snprintf(status, sizeof(status),
			 "STATUS=stopped: %s rejected (exit %d); enforcing with the policy it had",
			 d.policy_file, DAEMON_POLICY_REJECTED);
		daemon_notify(&d, status);
		daemon_close(&d);
		close(sfd);
		lock_release(lock);
		return DAEMON_POLICY_REJECTED;
	}
	if (daemon_catch_up(&d))
		goto out_close;
	daemon_notify(&d, "READY=1\nSTATUS=enforcing; streaming events");
	ret = daemon_loop(&d, sfd);
	daemon_notify(&d, "STOPPING=1");
	daemon_close(&d);
	close(sfd);
	lock_release(lock);
	return ret;

out_close:
	daemon_close(&d);
out_close_sfd:
	if (sfd >= 0)
		close(sfd);
out_unlock:
	lock_release(lock);
	return CMD_FAIL;
}
