// SPDX-License-Identifier: GPL-2.0
/* metrics.c - nodefd's state and counters in Prometheus' text format; the daemon's policy record */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "nodefdctl.h"
#include "policyfile.h"
#include "status.h"

/* ---- the daemon's policy record ------------------------------------------ */

/* Written whole to a new file and renamed over the old: a reader sees one or the other. */
int policy_state_write(const struct policy_state *ps)
{
	char tmp[sizeof(POLICY_STATE_PATH) + 8];
	FILE *f;
	int err = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", POLICY_STATE_PATH);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f,
		"pid %d\ngeneration %llu\nloads_ok %llu\nloads_failed %llu\nrefreshes %llu\n"
		"last_ok %d\nlast_load %lld\nlast_ok_time %lld\n",
		(int)ps->pid, (unsigned long long)ps->generation,
		(unsigned long long)ps->loads_ok, (unsigned long long)ps->loads_failed,
		(unsigned long long)ps->refreshes, ps->last_ok ? 1 : 0,
		(long long)ps->last_load_s, (long long)ps->last_ok_s);
	if (fflush(f) || ferror(f))
		err = -errno ?: -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, POLICY_STATE_PATH))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* 0, or -ENOENT (no record), -EINVAL (not one of ours), -errno. */
int policy_state_read(struct policy_state *ps)
{
	unsigned long long gen, ok, failed, refreshes;
	long long last_load, last_ok_time;
	int pid, last_ok, n;
	FILE *f;

	f = fopen(POLICY_STATE_PATH, "re");
	if (!f)
		return -errno;
	n = fscanf(f,
		   "pid %d\ngeneration %llu\nloads_ok %llu\nloads_failed %llu\nrefreshes %llu\n"
		   "last_ok %d\nlast_load %lld\nlast_ok_time %lld\n",
		   &pid, &gen, &ok, &failed, &refreshes, &last_ok, &last_load, &last_ok_time);
	fclose(f);
	if (n != 8)
		return -EINVAL;
	*ps = (struct policy_state){
		.pid = pid,
		.generation = gen,
		.loads_ok = ok,
		.loads_failed = failed,
		.refreshes = refreshes,
		.last_ok = last_ok != 0,
		.last_load_s = last_load,
		.last_ok_s = last_ok_time,
	};
	return 0;
}

/* ---- the text format ---------------------------------------------------- */

/* One metric's HELP and TYPE lines. */
static void metric_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A metric of one sample, without labels. */
static void metric_one(FILE *f, const char *name, const char *type, const char *help,
		       unsigned long long value)
{
	metric_head(f, name, type, help);
	fprintf(f, "%s %llu\n", name, value);
}

/*
 * Refusals or audits by rule and reason: every pair, zeros too, so that a series exists
 * before its first increase (48 of each: bounded).
 */
static void metric_rules(FILE *f, const char *name, const char *help, const __u64 *first)
{
	metric_head(f, name, "counter", help);
	for (unsigned int r = 0; r < NODEFD_RULE_NR; r++)
		for (unsigned int why = 0; why < NODEFD_REASON_NR; why++)
			fprintf(f, "%s{rule=\"%s\",reason=\"%s\"} %llu\n", name,
				policy_rule_name(r), reason_name(why),
				(unsigned long long)first[r * NODEFD_REASON_SLOTS + why]);
}

static void metrics_policy(FILE *f, const struct policy_state *ps)
{
	metric_one(f, "nodefd_policy_generation", "gauge",
		   "Policy maps the running daemon swapped in since its start (file read or cgroups changed).",
		   ps->generation);
	metric_head(f, "nodefd_policy_loads_total", "counter",
		    "Reads of the policy file by the running daemon (start, SIGHUP), by result.");
	fprintf(f, "nodefd_policy_loads_total{result=\"applied\"} %llu\n",
		(unsigned long long)ps->loads_ok);
	fprintf(f, "nodefd_policy_loads_total{result=\"rejected\"} %llu\n",
		(unsigned long long)ps->loads_failed);
	metric_one(f, "nodefd_policy_refreshes_total", "counter",
		   "Times the policy file was applied again because a cgroup it names came or went.",
		   ps->refreshes);
	metric_one(f, "nodefd_policy_last_load_successful", "gauge",
		   "1 if the last read of the policy file was applied, 0 if it was rejected.",
		   ps->last_ok);
	metric_one(f, "nodefd_policy_last_load_timestamp_seconds", "gauge",
		   "When the policy file was last read (Unix time).",
		   (unsigned long long)ps->last_load_s);
	metric_one(f, "nodefd_policy_last_applied_timestamp_seconds", "gauge",
		   "When the policy file was last applied (Unix time; 0 never).",
		   (unsigned long long)ps->last_ok_s);
}

void metrics_write(FILE *f, const struct status *s, const struct policy_state *ps)
{
	int attached = 0;

	for (int i = 0; i < s->nprogs; i++)
		attached += !s->progs[i].err;
	metric_head(f, "nodefd_info", "gauge", "nodefdctl's version and ABI, always 1.");
	fprintf(f, "nodefd_info{version=\"%s\",abi=\"%d\"} 1\n", NODEFDCTL_VERSION,
		NODEFD_ABI_VERSION);
	metric_one(f, "nodefd_bpf_lsm_active", "gauge",
		   "1 if bpf is in the kernel's active LSM list (without it nothing is enforced).",
		   !s->lsm_err && lsm_list_has(s->lsm, "bpf"));
	metric_one(f, "nodefd_loaded", "gauge", "1 if nodefd's programs are loaded and pinned.",
		   s->loaded);
	metric_one(f, "nodefd_daemon_running", "gauge", "1 if nodefdctl daemon runs.",
		   s->daemon_pid > 0);
	if (ps)
		metrics_policy(f, ps);
	if (!s->loaded)
		return;
	metric_one(f, "nodefd_enabled", "gauge", "1 if the checks are on (nodefdctl enable).",
		   s->enabled);
	metric_one(f, "nodefd_programs_attached", "gauge", "BPF LSM programs attached.",
		   (unsigned long long)attached);
	metric_one(f, "nodefd_policies", "gauge", "Cgroups with a policy of their own.",
		   s->policies);
	metric_one(f, "nodefd_checked_total", "counter",
		   "Opens and walks through a proc magic link that were judged.",
		   s->counters[NODEFD_CNT_CHECKED]);
	metric_rules(f, "nodefd_refused_total",
		     "Opens and walks refused (mode enforce), by rule and reason.",
		     &s->counters[NODEFD_CNT_DENIED_BY]);
	metric_rules(f, "nodefd_audited_total",
		     "Opens and walks that enforce would refuse, allowed and reported (mode audit), by rule and reason.",
		     &s->counters[NODEFD_CNT_AUDITED_BY]);
	metric_one(f, "nodefd_allowed_by_name_total", "counter",
		   "Accesses beyond the fd's allowed because the opener could have them by name.",
		   s->counters[NODEFD_CNT_BY_NAME]);
	metric_head(f, "nodefd_fail_closed_total", "counter",
		    "Times nodefd could not compute the kernel's answer and refused, by cause.");
	fprintf(f, "nodefd_fail_closed_total{cause=\"depth_limit\"} %llu\n",
		(unsigned long long)s->counters[NODEFD_CNT_DEPTH_LIMIT]);
	fprintf(f, "nodefd_fail_closed_total{cause=\"race\"} %llu\n",
		(unsigned long long)s->counters[NODEFD_CNT_RACE]);
	fprintf(f, "nodefd_fail_closed_total{cause=\"no_memory\"} %llu\n",
		(unsigned long long)s->counters[NODEFD_CNT_NOMEM]);
	metric_one(f, "nodefd_events_dropped_total", "counter",
		   "Events lost because the ring buffer was full.",
		   s->counters[NODEFD_CNT_EVENTS_DROPPED]);
	metric_one(f, "nodefd_events_suppressed_total", "counter",
		   "Events held back by the rate limit (reported in summary records).",
		   s->counters[NODEFD_CNT_EVENTS_SUPPRESSED]);
	metric_one(f, "nodefd_jump_watched_total", "counter",
		   "Walks through another process's link whose jump the guard watched (0 where the kernel has a hook at the jump).",
		   s->counters[NODEFD_CNT_JUMP_WATCHED]);
}

/* ---- the verb ----------------------------------------------------------- */

static void metrics_help(void)
{
	printf("Usage: nodefdctl metrics\n"
	       "\n"
	       "Prints nodefd's state and counters in Prometheus' text exposition format, for\n"
	       "node_exporter's textfile collector (write to a temporary file in its directory,\n"
	       "then rename it to NAME.prom). Counters are summed over all CPUs and count from\n"
	       "the load; nodefd_loaded 0 when nothing is loaded (the counters then left out).\n"
	       "While a daemon runs, what it did with its policy file (nodefd_policy_*) too.\n"
	       "The daemon serves the same on HTTP when nodefd.conf(5) says where.\n"
	       "Exit status 0, or 1 when the state cannot be read.\n");
}

static int metrics_args(int argc, char **argv)
{
	static const struct option opts[] = {
		GLOBAL_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		ret = verb_opt(c, argv[0], argv, metrics_help);
		if (ret >= 0)
			return ret;
	}
	return verb_tail(argc, argv, argv[0], metrics_help, 0);
}

int do_metrics(int argc, char **argv)
{
	struct policy_state ps;
	struct status s = {};
	bool have_ps;
	int ret;

	ret = metrics_args(argc, argv);
	if (ret >= 0)
		return ret;
	if (status_gather(&s, "metrics"))
		return CMD_FAIL;
	/* The record of the daemon that runs, not of one that ran before it. */
	have_ps = s.daemon_pid > 0 && !policy_state_read(&ps) && ps.pid == s.daemon_pid;
	metrics_write(stdout, &s, have_ps ? &ps : NULL);
	fflush(stdout);
	return ferror(stdout) ? CMD_FAIL : CMD_OK;
}
