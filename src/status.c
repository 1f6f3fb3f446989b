// SPDX-License-Identifier: GPL-2.0
/* status.c - the status verb: loaded or not, the LSM list, programs, counters, policies */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "nodefdctl.h"
#include "policyfile.h"
#include "status.h"

static void status_help(void)
{
	printf("Usage: nodefdctl [-j|-p] status [-q|--quiet]\n"
	       "\n"
	       "Shows whether nodefd is loaded (pins under " PIN_DIR "), whether it is\n"
	       "enabled, the kernel's LSM list, the attached programs, the pinned maps, the\n"
	       "number of cgroups with a policy, whether a daemon runs, and the counters summed\n"
	       "over all CPUs, with the events lost because the ring buffer was full and how\n"
	       "many of those no daemon has reported yet.\n"
	       "\n"
	       "  -q, --quiet   print nothing: the exit status says it all\n"
	       "\n"
	       "Exit status: 0 loaded and enabled (enforcing), 3 loaded but disabled, 4 not\n"
	       "loaded, 5 no permission to tell (not root), 1 loaded but its pins cannot be\n"
	       "read (or are of another ABI), 2 bad command line.\n");
}

/* The exit status for an error reading the pins: no permission, or a failure. */
static int status_of_err(int err)
{
	return err == -EACCES || err == -EPERM ? STATUS_NO_PERMISSION : CMD_FAIL;
}

/* --quiet: the exit status alone, found without a word printed. */
static int status_quiet(void)
{
	struct nodefd_config cfg;
	__u32 zero = 0;
	int err, fd, abi;

	err = pin_state();
	if (err <= 0)
		return err ? status_of_err(err) : STATUS_NOT_LOADED;
	err = pin_abi_read(&abi);
	if (err)
		return status_of_err(err);
	if (abi != NODEFD_ABI_VERSION)
		return CMD_FAIL;
	fd = bpf_obj_get(PIN_DIR "/settings");
	if (fd < 0)
		return status_of_err(-errno);
	err = bpf_map_lookup_elem(fd, &zero, &cfg) ? -errno : 0;
	close(fd);
	if (err)
		return status_of_err(err);
	return cfg.enabled ? CMD_OK : STATUS_DISABLED;
}

/* Options: -q; -1 to go on, else the exit status. */
static int status_args(int argc, char **argv, bool *quiet)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		GLOBAL_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":q" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		if (c == 'q') {
			*quiet = true;
			continue;
		}
		ret = verb_opt(c, argv[0], argv, status_help);
		if (ret >= 0)
			return ret;
	}
	return verb_tail(argc, argv, argv[0], status_help, 0);
}

static void status_prog_read(struct status_prog *p)
{
	struct bpf_link_info link = {};
	struct bpf_prog_info prog = {};
	__u32 len = sizeof(link);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", PIN_LINKS_DIR, p->name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		p->err = -errno;
		return;
	}
	if (bpf_obj_get_info_by_fd(fd, &link, &len)) {
		p->err = -errno;
		close(fd);
		return;
	}
	close(fd);
	p->link_id = link.id;
	p->prog_id = link.prog_id;
	if (link.type == BPF_LINK_TYPE_TRACING)
		p->attach_type = link.tracing.attach_type;
	fd = bpf_prog_get_fd_by_id(link.prog_id);
	if (fd < 0)
		return;
	len = sizeof(prog);
	if (!bpf_obj_get_info_by_fd(fd, &prog, &len))
		snprintf(p->prog_name, sizeof(p->prog_name), "%s", prog.name);
	close(fd);
}

static int status_progs_read(struct status *s)
{
	struct dirent *de;
	DIR *d;

	d = opendir(PIN_LINKS_DIR);
	if (!d) {
		int err = -errno;

		p_err("status: %s: %s", PIN_LINKS_DIR, errstr(err));
		return err;
	}
	while ((de = readdir(d)) && s->nprogs < MAX_LINKS) {
		struct status_prog *p = &s->progs[s->nprogs];

		if (de->d_name[0] == '.')
			continue;
		snprintf(p->name, sizeof(p->name), "%s", de->d_name);
		status_prog_read(p);
		if (!p->err && !strcmp(p->name, "nodefd_nd_jump_link"))
			s->jump = p->attach_type == BPF_LSM_MAC ? JUMP_HOOK :
				  p->attach_type == BPF_TRACE_FENTRY ? JUMP_GUARD : JUMP_UNKNOWN;
		s->nprogs++;
	}
	closedir(d);
	return 0;
}

static const char *jump_mechanism_name(enum jump_mechanism j)
{
	return j == JUMP_HOOK ? "hook" : j == JUMP_GUARD ? "guard" : NULL;
}

static void status_pins_read(struct status *s)
{
	struct dirent *de;
	DIR *d;

	d = opendir(PIN_DIR);
	if (!d)
		return;
	while ((de = readdir(d)) && s->npins < MAX_PINS) {
		struct status_pin *p = &s->pins[s->npins];

		if (de->d_name[0] == '.' || de->d_type != DT_REG)
			continue;
		snprintf(p->name, sizeof(p->name), "%s", de->d_name);
		p->map_id = pin_map_id(de->d_name);
		s->npins++;
	}
	closedir(d);
}

static int status_maps_read(struct status *s)
{
	struct nodefd_config cfg;
	__u64 key, next, *prev = NULL;
	__u32 zero = 0, inner_id;
	int fd, err;

	fd = pin_map_open("status", "settings", BPF_MAP_TYPE_ARRAY, sizeof(cfg));
	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &zero, &cfg) ? -errno : 0;
	close(fd);
	if (err) {
		p_err("status: %s/settings: %s", PIN_DIR, errstr(err));
		return err;
	}
	s->enabled = cfg.enabled;
	s->dropped_reported = cfg.dropped_reported;

	fd = pin_map_open("status", "counters", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u64));
	if (fd < 0)
		return fd;
	err = counters_read(fd, s->counters);
	close(fd);
	if (err) {
		p_err("status: %s/counters: %s", PIN_DIR, errstr(err));
		return err;
	}

	/* The policies in use are the hash map in entry 0 of cgroup_policy. */
	fd = pin_map_open("status", "cgroup_policy", BPF_MAP_TYPE_ARRAY_OF_MAPS, sizeof(__u32));
	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &zero, &inner_id) ? -errno : 0;
	close(fd);
	if (!err) {
		fd = bpf_map_get_fd_by_id(inner_id);
		err = fd < 0 ? -errno : 0;
	}
	if (err) {
		p_err("status: %s/cgroup_policy: %s", PIN_DIR, errstr(err));
		return err;
	}
	s->policy_map_id = map_id_of_fd(fd);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		s->policies++;
		key = next;
		prev = &key;
	}
	err = errno == ENOENT ? 0 : -errno;
	close(fd);
	if (err)
		p_err("status: %s/cgroup_policy: %s", PIN_DIR, errstr(err));
	return err;
}

static struct json_object *json_rules(const __u64 *first)
{
	struct json_object *obj = json_object_new_object();

	for (unsigned int r = 0; r < NODEFD_RULE_NR; r++)
		json_add_u64(obj, policy_rule_name(r), first[r]);
	return obj;
}

static void status_print_json(const struct status *s)
{
	struct json_object *obj = json_object_new_object();
	struct json_object *progs, *pins, *cnt;

	json_add_str(obj, "state", !s->loaded ? "not_loaded" : s->enabled ? "enforcing" : "disabled");
	json_add_bool(obj, "loaded", s->loaded);
	json_add_str(obj, "pin_dir", PIN_DIR);
	json_add_str(obj, "lsm", s->lsm_err ? NULL : s->lsm);
	if (s->lsm_err)
		json_add_str(obj, "lsm_error", errstr(s->lsm_err));
	json_add_bool(obj, "bpf_lsm", !s->lsm_err && lsm_list_has(s->lsm, "bpf"));
	if (!s->loaded)
		goto out;

	json_add_u64(obj, "abi_version", (__u64)s->abi);
	json_add_bool(obj, "enabled", s->enabled);
	json_add_str(obj, "jump", jump_mechanism_name(s->jump));
	progs = json_object_new_array();
	for (int i = 0; i < s->nprogs; i++) {
		const struct status_prog *p = &s->progs[i];
		struct json_object *o = json_object_new_object();

		json_add_str(o, "name", p->name);
		if (p->err) {
			json_add_str(o, "error", errstr(p->err));
		} else {
			json_add_u64(o, "link_id", p->link_id);
			json_add_u64(o, "prog_id", p->prog_id);
			json_add_str(o, "prog_name", p->prog_name);
		}
		json_object_array_add(progs, o);
	}
	json_object_object_add(obj, "programs", progs);
	pins = json_object_new_array();
	for (int i = 0; i < s->npins; i++) {
		struct json_object *o = json_object_new_object();

		json_add_str(o, "name", s->pins[i].name);
		if (s->pins[i].map_id)
			json_add_u64(o, "map_id", s->pins[i].map_id);
		else
			json_object_object_add(o, "map_id", NULL);
		json_object_array_add(pins, o);
	}
	json_object_object_add(obj, "pins", pins);
	json_add_u64(obj, "policies", s->policies);
	json_add_u64(obj, "policy_map_id", s->policy_map_id);
	if (s->daemon_pid > 0)
		json_add_u64(obj, "daemon_pid", (__u64)s->daemon_pid);
	else
		json_object_object_add(obj, "daemon_pid", NULL);
	json_add_bool(obj, "daemon", s->daemon_pid != 0);
	json_add_u64(obj, "events_dropped_unreported",
		     s->counters[NODEFD_CNT_EVENTS_DROPPED] >= s->dropped_reported ?
			     s->counters[NODEFD_CNT_EVENTS_DROPPED] - s->dropped_reported :
			     s->counters[NODEFD_CNT_EVENTS_DROPPED]);

	cnt = json_object_new_object();
	json_add_u64(cnt, "checked", s->counters[NODEFD_CNT_CHECKED]);
	json_object_object_add(cnt, "denied", json_rules(&s->counters[NODEFD_CNT_DENIED]));
	json_object_object_add(cnt, "audited", json_rules(&s->counters[NODEFD_CNT_AUDITED]));
	json_add_u64(cnt, "depth_limit", s->counters[NODEFD_CNT_DEPTH_LIMIT]);
	json_add_u64(cnt, "race", s->counters[NODEFD_CNT_RACE]);
	json_add_u64(cnt, "events_dropped", s->counters[NODEFD_CNT_EVENTS_DROPPED]);
	json_add_u64(cnt, "nomem", s->counters[NODEFD_CNT_NOMEM]);
	json_add_u64(cnt, "by_name", s->counters[NODEFD_CNT_BY_NAME]);
	json_add_u64(cnt, "events_suppressed", s->counters[NODEFD_CNT_EVENTS_SUPPRESSED]);
	json_add_u64(cnt, "jump_watched", s->counters[NODEFD_CNT_JUMP_WATCHED]);
	json_object_object_add(obj, "counters", cnt);
out:
	json_print(obj);
	json_object_put(obj);
}

static void print_rules(const char *label, const __u64 *first)
{
	printf("  %-15s", label);
	for (unsigned int r = 0; r < NODEFD_RULE_NR; r++)
		printf("%s %s %llu", r ? "," : "", policy_rule_name(r), (unsigned long long)first[r]);
	printf("\n");
}

static void status_print_text(const struct status *s)
{
	if (!s->loaded)
		printf("nodefd: not loaded (no %s)\n", PIN_DIR);
	else
		printf("nodefd: loaded, %s (pins in %s, abi %d)\n",
		       s->enabled ? "enabled" : "disabled", PIN_DIR, s->abi);
	if (s->lsm_err)
		printf("lsm: unknown (%s: %s)\n", LSM_LIST_PATH, errstr(s->lsm_err));
	else
		printf("lsm: %s (bpf %s)\n", s->lsm,
		       lsm_list_has(s->lsm, "bpf") ? "active" : "NOT active: nodefd cannot run");
	if (!s->loaded)
		return;

	printf("programs:\n");
	for (int i = 0; i < s->nprogs; i++) {
		const struct status_prog *p = &s->progs[i];

		if (p->err)
			printf("  %-26s %s\n", p->name, errstr(p->err));
		else
			printf("  %-26s link %u, prog %u\n", p->name, p->link_id, p->prog_id);
	}
	if (!s->nprogs)
		printf("  none: nothing is attached\n");
	if (s->jump == JUMP_HOOK)
		printf("jump: hook (the kernel's lsm/%s refuses a magic link's jump itself)\n",
		       JUMP_HOOK_NAME);
	else if (s->jump == JUMP_GUARD)
		printf("jump: guard (fentry/nd_jump_link; what a refused jump would do is refused after it)\n");
	else
		printf("jump: unknown (nodefd_nd_jump_link unreadable)\n");
	printf("pins:\n");
	for (int i = 0; i < s->npins; i++) {
		if (s->pins[i].map_id)
			printf("  %-26s map %u\n", s->pins[i].name, s->pins[i].map_id);
		else
			printf("  %-26s (not a map)\n", s->pins[i].name);
	}
	printf("policies: %u %s%s (map %u)\n", s->policies, s->policies == 1 ? "cgroup" : "cgroups",
	       s->policies ? "" : ", no policy: every rule enforced everywhere", s->policy_map_id);
	if (s->daemon_pid > 0)
		printf("daemon: running, pid %d\n", s->daemon_pid);
	else if (s->daemon_pid < 0)
		printf("daemon: running (%s is locked, pid unknown)\n", LOCK_DAEMON_PATH);
	else
		printf("daemon: not running (events wait in the ring buffer)\n");
	printf("counters:\n");
	printf("  %-15s %llu\n", "checked", (unsigned long long)s->counters[NODEFD_CNT_CHECKED]);
	print_rules("denied", &s->counters[NODEFD_CNT_DENIED]);
	print_rules("audited", &s->counters[NODEFD_CNT_AUDITED]);
	printf("  %-15s %llu\n", "depth_limit",
	       (unsigned long long)s->counters[NODEFD_CNT_DEPTH_LIMIT]);
	printf("  %-15s %llu\n", "race", (unsigned long long)s->counters[NODEFD_CNT_RACE]);
	printf("  %-15s %llu (%llu not reported by a daemon yet)\n", "events_dropped",
	       (unsigned long long)s->counters[NODEFD_CNT_EVENTS_DROPPED],
	       (unsigned long long)(s->counters[NODEFD_CNT_EVENTS_DROPPED] >= s->dropped_reported ?
			s->counters[NODEFD_CNT_EVENTS_DROPPED] - s->dropped_reported :
			s->counters[NODEFD_CNT_EVENTS_DROPPED]));
	printf("  %-15s %llu\n", "nomem", (unsigned long long)s->counters[NODEFD_CNT_NOMEM]);
	printf("  %-15s %llu\n", "by_name", (unsigned long long)s->counters[NODEFD_CNT_BY_NAME]);
	printf("  %-15s %llu (held back by the rate limit; each source's next event counts them)\n",
	       "events_suppressed",
	       (unsigned long long)s->counters[NODEFD_CNT_EVENTS_SUPPRESSED]);
	printf("  %-15s %llu (walks whose magic-link jump the guard watched; 0 with the hook)\n",
	       "jump_watched", (unsigned long long)s->counters[NODEFD_CNT_JUMP_WATCHED]);
}

/* Everything status and metrics show: 0, or -errno having said why. */
int status_gather(struct status *s, const char *verb)
{
	int err;

	s->lsm_err = lsm_list_read(s->lsm, sizeof(s->lsm));
	err = pin_state();
	if (err < 0) {
		p_err("%s: %s: %s", verb, PIN_DIR, errstr(err));
		return err;
	}
	s->loaded = err;
	if (s->loaded) {
		err = pin_require(verb);
		if (!err)
			err = status_maps_read(s);
		if (!err)
			err = status_progs_read(s);
		if (err)
			return err;
		s->abi = NODEFD_ABI_VERSION;
		status_pins_read(s);
	}
	s->daemon_pid = lock_daemon_pid();
	return 0;
}

int do_status(int argc, char **argv)
{
	struct status s = {};
	bool quiet = false;
	int ret, err;

	ret = status_args(argc, argv, &quiet);
	if (ret >= 0)
		return ret;
	if (quiet)
		return status_quiet();

	err = status_gather(&s, "status");
	if (err)
		return status_of_err(err);
	if (json_output)
		status_print_json(&s);
	else
		status_print_text(&s);
	if (!s.loaded)
		return STATUS_NOT_LOADED;
	return s.enabled ? CMD_OK : STATUS_DISABLED;
}
