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

#define MAX_LINKS 16

struct status_prog {
	char name[NAME_MAX + 1];	/* the pin's name: the program's full name */
	char prog_name[BPF_OBJ_NAME_LEN];	/* the kernel's, cut at 15 characters */
	__u32 link_id;
	__u32 prog_id;
	int err;
};

struct status {
	char lsm[512];
	int lsm_err;
	bool loaded;
	int abi;
	bool enabled;
	__u64 counters[NODEFD_CNT_NR];
	__u32 policies;
	struct status_prog progs[MAX_LINKS];
	int nprogs;
};

static void status_help(void)
{
	printf("Usage: nodefdctl [-j|-p] status\n"
	       "\n"
	       "Shows whether nodefd is loaded (pins under " PIN_DIR "), whether it is\n"
	       "enabled, the kernel's LSM list, the attached programs, the number of cgroups\n"
	       "with a policy, and the counters summed over all CPUs. Exit status 0 whether or\n"
	       "not nodefd is loaded; 1 if it is but its pins cannot be read.\n");
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
		s->nprogs++;
	}
	closedir(d);
	return 0;
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

	for (int r = 0; r < NODEFD_RULE_NR; r++)
		json_add_u64(obj, rule_name(r), first[r]);
	return obj;
}

static void status_print_json(const struct status *s)
{
	struct json_object *obj = json_object_new_object();
	struct json_object *progs, *cnt;

	json_add_bool(obj, "loaded", s->loaded);
	json_add_str(obj, "pin_dir", PIN_DIR);
	json_add_str(obj, "lsm", s->lsm_err ? NULL : s->lsm);
	if (s->lsm_err)
		json_add_str(obj, "lsm_error", errstr(s->lsm_err));
	json_add_bool(obj, "bpf_lsm", !s->lsm_err && lsm_list_has(s->lsm, "bpf"));
	if (!s->loaded)
		goto out;

	json_add_u64(obj, "abi_version", s->abi);
	json_add_bool(obj, "enabled", s->enabled);
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
	json_add_u64(obj, "policies", s->policies);

	cnt = json_object_new_object();
	json_add_u64(cnt, "checked", s->counters[NODEFD_CNT_CHECKED]);
	json_object_object_add(cnt, "denied", json_rules(&s->counters[NODEFD_CNT_DENIED]));
	json_object_object_add(cnt, "audited", json_rules(&s->counters[NODEFD_CNT_AUDITED]));
	json_add_u64(cnt, "depth_limit", s->counters[NODEFD_CNT_DEPTH_LIMIT]);
	json_add_u64(cnt, "race", s->counters[NODEFD_CNT_RACE]);
	json_add_u64(cnt, "events_dropped", s->counters[NODEFD_CNT_EVENTS_DROPPED]);
	json_add_u64(cnt, "nomem", s->counters[NODEFD_CNT_NOMEM]);
	json_object_object_add(obj, "counters", cnt);
out:
	json_print(obj);
	json_object_put(obj);
}

static void print_rules(const char *label, const __u64 *first)
{
	printf("  %-15s", label);
	for (int r = 0; r < NODEFD_RULE_NR; r++)
		printf("%s %s %llu", r ? "," : "", rule_name(r), (unsigned long long)first[r]);
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
	printf("policies: %u cgroups%s\n", s->policies,
	       s->policies ? "" : " (no policy: every rule enforced everywhere)");
	printf("counters:\n");
	printf("  %-15s %llu\n", "checked", (unsigned long long)s->counters[NODEFD_CNT_CHECKED]);
	print_rules("denied", &s->counters[NODEFD_CNT_DENIED]);
	print_rules("audited", &s->counters[NODEFD_CNT_AUDITED]);
	printf("  %-15s %llu\n", "depth_limit",
	       (unsigned long long)s->counters[NODEFD_CNT_DEPTH_LIMIT]);
	printf("  %-15s %llu\n", "race", (unsigned long long)s->counters[NODEFD_CNT_RACE]);
	printf("  %-15s %llu\n", "events_dropped",
	       (unsigned long long)s->counters[NODEFD_CNT_EVENTS_DROPPED]);
	printf("  %-15s %llu\n", "nomem", (unsigned long long)s->counters[NODEFD_CNT_NOMEM]);
}

int do_status(int argc, char **argv)
{
	struct status s = {};
	int ret, err;

	ret = verb_no_args(argc, argv, status_help);
	if (ret >= 0)
		return ret;

	s.lsm_err = lsm_list_read(s.lsm, sizeof(s.lsm));
	err = pin_state();
	if (err < 0) {
		p_err("status: %s: %s", PIN_DIR, errstr(err));
		return CMD_FAIL;
	}
	s.loaded = err;
	if (s.loaded) {
		err = pin_abi_read(&s.abi);
		if (err) {
			p_err("status: %s/%s: %s", PIN_DIR, PIN_ABI_NAME, errstr(err));
			return CMD_FAIL;
		}
		if (s.abi != NODEFD_ABI_VERSION) {
			p_err("status: %s was made for abi %d, this nodefdctl reads abi %d: 'nodefdctl unload' and load again",
			      PIN_DIR, s.abi, NODEFD_ABI_VERSION);
			return CMD_FAIL;
		}
		if (status_maps_read(&s) || status_progs_read(&s))
			return CMD_FAIL;
	}
	if (json_output)
		status_print_json(&s);
	else
		status_print_text(&s);
	return CMD_OK;
}
