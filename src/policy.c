// SPDX-License-Identifier: GPL-2.0
/* policy.c - the policy verbs and the atomic swap of the policy map */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "nodefdctl.h"
#include "policyfile.h"
#include "cgroup.h"

/*
 * The BPF programs look a task's policy up in the hash map that entry 0 of
 * cgroup_policy points to, and that map is never changed once it is there.
 * A change is made on a copy: a new map with the same definition, filled
 * with the whole new policy, then put into entry 0 in one update.  An open
 * sees the old map or the new one, never a mix; a failure anywhere before
 * that update leaves the old one in place, as it was.  The old map is
 * freed when its last reader is done with it.
 *
 * Writers hold LOCK_MAPS_PATH from reading the map to swapping the copy,
 * or two of them would each drop the other's change.
 */

#define POLICY_MAP_NAME "nodefd_policy"
#define READ_RETRIES 5

static void policy_help(void)
{
	printf("Usage: nodefdctl [-j|-p] policy { set | unset | show | check | load | help } ...\n"
	       "\n"
	       "  policy set CGROUP MODE [RULE=MODE]... [path_read=on|off]\n"
	       "        give CGROUP a policy of its own: MODE (enforce, audit or off) for every\n"
	       "        rule, but RULE=MODE for the rules named (upgrade, append, ancestors,\n"
	       "        reach); path_read=on lets an O_PATH or O_NODE origin be reopened\n"
	       "        read-only. Replaces CGROUP's own policy, if it had one.\n"
	       "  policy unset CGROUP | --id ID\n"
	       "        remove CGROUP's own policy (by cgroup id for a cgroup that is gone):\n"
	       "        it then inherits its nearest ancestor's.\n"
	       "  policy show [CGROUP]\n"
	       "        every policy; or the one CGROUP follows, its own or inherited.\n"
	       "  policy check FILE\n"
	       "        read FILE as the daemon would (nodefd-policy.conf(5)), change nothing.\n"
	       "  policy load FILE\n"
	       "        replace every policy with FILE's, as the daemon does on SIGHUP\n"
	       "        (sections for cgroups that do not exist yet are left out; the daemon\n"
	       "        applies them when the cgroups appear).\n"
	       "\n"
	       "CGROUP is a cgroup v2 directory: " CGROUP_ROOT "/PATH, or PATH relative to\n"
	       CGROUP_ROOT ". A cgroup without a policy of its own follows its nearest\n"
	       "ancestor's; with none anywhere every rule is enforced. Every change replaces\n"
	       "the whole policy map in one step: an open never sees half a change, and a\n"
	       "change that fails leaves the running policy as it was.\n");
}

/* ---- the policy map ---------------------------------------------------- */

int policy_outer_open(const char *verb)
{
	return pin_map_open(verb, "cgroup_policy", BPF_MAP_TYPE_ARRAY_OF_MAPS, sizeof(__u32));
}

void policy_list_free(struct policy_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

int policy_list_put(struct policy_list *l, __u64 id, const struct nodefd_policy *p)
{
	struct policy_item *items;

	for (size_t i = 0; i < l->n; i++) {
		if (l->items[i].id == id) {
			l->items[i].policy = *p;
			return 0;
		}
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;

		items = realloc(l->items, cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		l->items = items;
		l->cap = cap;
	}
	l->items[l->n].id = id;
	l->items[l->n].policy = *p;
	l->n++;
	return 0;
}

int policy_list_del(struct policy_list *l, __u64 id)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->items[i].id == id) {
			l->items[i] = l->items[--l->n];
			return 0;
		}
	}
	return -ENOENT;
}

static int item_cmp(const void *a, const void *b)
{
	const struct policy_item *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The inner map's entries, sorted by id; -errno. */
static int policy_inner_read(int fd, struct policy_list *l)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	__u64 key, next, *prev = NULL;
	struct nodefd_policy p;
	int err;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_HASH || info.key_size != sizeof(__u64) ||
	    info.value_size != sizeof(struct nodefd_policy))
		return -EPROTO;
	l->map_id = info.id;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &p))
			continue;
		err = policy_list_put(l, key, &p);
		if (err)
			return err;
	}
	if (errno != ENOENT)
		return -errno;
	qsort(l->items, l->n, sizeof(*l->items), item_cmp);
	return 0;
}

int policy_list_read(int outer_fd, struct policy_list *l)
{
	__u32 zero = 0, inner_id;
	int fd, err = -ENOENT;

	memset(l, 0, sizeof(*l));
	/* A map swapped out between the two lookups is gone: look again. */
	for (int i = 0; i < READ_RETRIES; i++) {
		if (bpf_map_lookup_elem(outer_fd, &zero, &inner_id))
			return -errno;
		fd = bpf_map_get_fd_by_id(inner_id);
		if (fd < 0) {
			err = -errno;
			if (err == -ENOENT)
				continue;
			return err;
		}
		err = policy_inner_read(fd, l);
		close(fd);
		if (err)
			policy_list_free(l);
		return err;
	}
	return err;
}

/*
 * The BTF of the map in entry 0, for the copy.  The kernel lets a map into
 * cgroup_policy only if it matches the inner map template in every way it
 * compares, and on Linux 6.1 that includes where a bpf_timer would be: -ENOENT
 * for a value with BTF and none, -EINVAL for a value without BTF.  So a copy
 * must carry BTF if the template did: the one of the map it replaces, which
 * goes back to the BPF object's own.  Sets *btf_fd to -1 for a map without.
 */
static int policy_btf_of_current(int outer_fd, int *btf_fd, struct bpf_map_info *info)
{
	__u32 zero = 0, inner_id, len = sizeof(*info);
	int fd, err = 0;

	*btf_fd = -1;
	memset(info, 0, sizeof(*info));
	if (bpf_map_lookup_elem(outer_fd, &zero, &inner_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(inner_id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		err = -errno;
	close(fd);
	if (err || !info->btf_id)
		return err;
	*btf_fd = bpf_btf_get_fd_by_id(info->btf_id);
	return *btf_fd < 0 ? -errno : 0;
}

int policy_swap(int outer_fd, struct policy_list *l)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	struct bpf_map_info cur;
	__u32 zero = 0;
	int fd, btf_fd, err = 0;

	if (l->n > NODEFD_MAX_POLICIES)
		return -E2BIG;
	err = policy_btf_of_current(outer_fd, &btf_fd, &cur);
	if (err)
		return err;
	if (btf_fd >= 0) {
		opts.btf_fd = btf_fd;
		opts.btf_key_type_id = cur.btf_key_type_id;
		opts.btf_value_type_id = cur.btf_value_type_id;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, POLICY_MAP_NAME, sizeof(__u64),
			    sizeof(struct nodefd_policy), NODEFD_MAX_POLICIES, &opts);
	err = fd < 0 ? -errno : 0;
	if (btf_fd >= 0)
		close(btf_fd);
	if (err)
		return err;
	for (size_t i = 0; i < l->n && !err; i++)
		if (bpf_map_update_elem(fd, &l->items[i].id, &l->items[i].policy, BPF_NOEXIST))
			err = -errno;
	if (!err && bpf_map_update_elem(outer_fd, &zero, &fd, BPF_ANY))
		err = -errno;
	if (!err)
		l->map_id = map_id_of_fd(fd);
	/* Entry 0 holds the new map now; before the update, closing frees it. */
	close(fd);
	return err;
}

/* ---- output ------------------------------------------------------------ */

void policy_json_add(struct json_object *obj, const struct nodefd_policy *p)
{
	for (int r = 0; r < NODEFD_RULE_NR; r++)
		json_add_str(obj, policy_rule_name(r), policy_mode_name(p->rule_mode[r]));
	json_add_bool(obj, "path_read", p->flags & NODEFD_POLICY_PATH_READ);
}

void policy_format(const struct nodefd_policy *p, char *buf, size_t size)
{
	size_t n = 0;

	for (int r = 0; r < NODEFD_RULE_NR && n < size; r++)
		n += snprintf(buf + n, size - n, "%s=%s ", policy_rule_name(r),
			      policy_mode_name(p->rule_mode[r]));
	if (n < size)
		snprintf(buf + n, size - n, "path_read=%s",
			 p->flags & NODEFD_POLICY_PATH_READ ? "on" : "off");
}

/* ---- arguments --------------------------------------------------------- */

/*
 * Global options, help, and --id for unset: operands left at argv[optind..].
 * Returns -1 to go on, else the exit status.
 */
static int policy_opts(int argc, char **argv, const char *verb, bool allow_id, __u64 *id,
		       bool *have_id)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'i' },
		GLOBAL_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	char q[3 * 64 + 8], *end;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		if (parse_global_opt(c))
			continue;
		switch (c) {
		case 'i':
			if (!allow_id) {
				p_err("policy %s: unknown option '--id' (only 'policy unset' takes it)",
				      verb);
				return CMD_USAGE;
			}
			errno = 0;
			*id = strtoull(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || *end || errno || !*id) {
				p_err("policy %s: --id '%s': not a cgroup id (a number from 1)", verb,
				      policy_quote(optarg, 64, q, sizeof(q)));
				return CMD_USAGE;
			}
			*have_id = true;
			break;
		case OPT_HELP:
			policy_help();
			return CMD_OK;
		case OPT_VERSION:
			return print_version();
		default:
			if (c == ':')
				p_err("policy %s: option '%s' needs an argument", verb, argv[optind - 1]);
			else
				p_err("policy %s: unknown option '%s'; try 'nodefdctl policy help'", verb,
				      policy_quote(optopt ? (char[]){ '-', (char)optopt, 0 } :
							    argv[optind - 1],
						   64, q, sizeof(q)));
			return CMD_USAGE;
		}
	}
	if (optind < argc && !strcmp(argv[optind], "help")) {
		policy_help();
		return CMD_OK;
	}
	return -1;
}

/* CGROUP as given, checked as a string: CMD_USAGE having said why, or 0. */
static int cgroup_arg(const char *verb, const char *arg, char *rel, size_t size)
{
	char why[POLICY_REASON_MAX];

	if (cgroup_path_normalize(arg, rel, size, why, sizeof(why))) {
		p_err("policy %s: %s", verb, why);
		return CMD_USAGE;
	}
	return 0;
}

/* The pins, privilege and the outer map: an fd, or -1 having said why. */
static int policy_prepare(const char *verb, bool write)
{
	char v[32];

	snprintf(v, sizeof(v), "policy %s", verb);
	if (write && require_privilege(v))
		return -1;
	if (pin_require(v))
		return -1;
	return policy_outer_open(v);
}

/* ---- set, unset -------------------------------------------------------- */

static void change_report(const char *abs, __u64 id, const struct nodefd_policy *p,
			  const struct policy_list *l)
{
	char buf[256];

	if (json_output) {
		struct json_object *obj = json_object_new_object();

		json_add_str(obj, "cgroup", abs);
		json_add_u64(obj, "cgroup_id", id);
		if (p)
			policy_json_add(obj, p);
		else
			json_add_bool(obj, "removed", true);
		json_add_u64(obj, "policies", l->n);
		json_add_u64(obj, "map_id", l->map_id);
		json_print(obj);
		json_object_put(obj);
		return;
	}
	if (p) {
		policy_format(p, buf, sizeof(buf));
		printf("nodefd: %s (cgroup %llu): %s; %zu %s in effect\n", abs,
		       (unsigned long long)id, buf, l->n, l->n == 1 ? "policy" : "policies");
	} else {
		printf("nodefd: %s (cgroup %llu): own policy removed, it follows its ancestors'; %zu %s in effect\n",
		       abs, (unsigned long long)id, l->n, l->n == 1 ? "policy" : "policies");
	}
}

/* Read, change (put @p, or remove @id's entry if @p is NULL), swap, under the lock. */
static int policy_change(const char *verb, int outer, __u64 id, const char *abs,
			 const struct nodefd_policy *p)
{
	struct policy_list l;
	int lock, err;

	lock = lock_maps(verb);
	if (lock < 0)
		return CMD_FAIL;
	err = policy_list_read(outer, &l);
	if (err) {
		p_err("%s: cannot read the policies in %s/cgroup_policy: %s; nothing changed",
		      verb, PIN_DIR, errstr(err));
		goto out_unlock;
	}
	if (p) {
		if (l.n >= NODEFD_MAX_POLICIES) {
			bool have = false;

			for (size_t i = 0; i < l.n; i++)
				have |= l.items[i].id == id;
			if (!have) {
				p_err("%s: %s: already %d cgroups with a policy, the most nodefd holds; nothing changed",
				      verb, abs, NODEFD_MAX_POLICIES);
				err = -E2BIG;
				goto out_free;
			}
		}
		err = policy_list_put(&l, id, p);
	} else {
		err = policy_list_del(&l, id);
		if (err == -ENOENT) {
			p_err("%s: %s (cgroup %llu) has no policy of its own; nothing changed", verb,
			      abs, (unsigned long long)id);
			goto out_free;
		}
	}
	if (!err)
		err = policy_swap(outer, &l);
	if (err) {
		p_err("%s: %s: cannot swap in the new policy map: %s; the running policy is unchanged",
		      verb, abs, errstr(err));
		goto out_free;
	}
	change_report(abs, id, p, &l);
out_free:
	policy_list_free(&l);
out_unlock:
	lock_release(lock);
	return err ? CMD_FAIL : CMD_OK;
}

static int do_policy_set(int argc, char **argv)
{
	char rel[CGROUP_PATH_MAX], abs[CGROUP_PATH_MAX + 16], why[POLICY_REASON_MAX];
	struct nodefd_policy p;
	int ret, outer;
	__u64 id;

	ret = policy_opts(argc, argv, "set", false, NULL, NULL);
	if (ret >= 0)
		return ret;
	argc -= optind;
	argv += optind;
	if (argc < 2) {
		p_err("policy set: missing %s; usage: nodefdctl policy set CGROUP MODE [RULE=MODE]...",
		      argc ? "MODE" : "CGROUP and MODE");
		return CMD_USAGE;
	}
	ret = cgroup_arg("set", argv[0], rel, sizeof(rel));
	if (ret)
		return ret;
	if (policy_spec_parse(argc - 1, argv + 1, &p, why, sizeof(why))) {
		p_err("policy set: %s", why);
		return CMD_USAGE;
	}
	outer = policy_prepare("set", true);
	if (outer < 0)
		return CMD_FAIL;
	cgroup_path_absolute(rel, abs, sizeof(abs));
	if (cgroup_resolve(rel, &id, why, sizeof(why))) {
		p_err("policy set: %s; nothing changed", why);
		close(outer);
		return CMD_FAIL;
	}
	ret = policy_change("policy set", outer, id, abs, &p);
	close(outer);
	return ret;
}

static int do_policy_unset(int argc, char **argv)
{
	char rel[CGROUP_PATH_MAX], abs[CGROUP_PATH_MAX + 16], why[POLICY_REASON_MAX];
	bool have_id = false;
	__u64 id = 0;
	int ret, outer;

	ret = policy_opts(argc, argv, "unset", true, &id, &have_id);
	if (ret >= 0)
		return ret;
	argc -= optind;
	argv += optind;
	if (argc > (have_id ? 0 : 1)) {
		p_err("policy unset: unexpected argument '%s'; usage: nodefdctl policy unset CGROUP | --id ID",
		      policy_quote(argv[have_id ? 0 : 1], 64, why, sizeof(why)));
		return CMD_USAGE;
	}
	if (!have_id && argc < 1) {
		p_err("policy unset: missing CGROUP; usage: nodefdctl policy unset CGROUP | --id ID");
		return CMD_USAGE;
	}
	if (!have_id) {
		ret = cgroup_arg("unset", argv[0], rel, sizeof(rel));
		if (ret)
			return ret;
	}
	outer = policy_prepare("unset", true);
	if (outer < 0)
		return CMD_FAIL;
	if (have_id) {
		const char *p = cgroup_path_cached(id);

		snprintf(abs, sizeof(abs), "%s", p ? p : "(gone)");
	} else {
		cgroup_path_absolute(rel, abs, sizeof(abs));
		if (cgroup_resolve(rel, &id, why, sizeof(why))) {
			bool gone = strstr(why, "no such cgroup");

			p_err("policy unset: %s%s; nothing changed", why,
			      gone ? " (for a cgroup that is gone: --id ID)" : "");
			close(outer);
			return CMD_FAIL;
		}
	}
	ret = policy_change("policy unset", outer, id, abs, NULL);
	close(outer);
	return ret;
}

/* ---- show -------------------------------------------------------------- */

static int show_all(int outer)
{
	struct policy_list l;
	__u64 *ids = NULL;
	char **paths = NULL;
	char buf[256], abs[CGROUP_PATH_MAX + 16];
	int err;

	err = policy_list_read(outer, &l);
	if (err) {
		p_err("policy show: cannot read the policies in %s/cgroup_policy: %s", PIN_DIR,
		      errstr(err));
		return CMD_FAIL;
	}
	if (l.n) {
		ids = calloc(l.n, sizeof(*ids));
		paths = calloc(l.n, sizeof(*paths));
		if (!ids || !paths) {
			p_err("policy show: out of memory");
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < l.n; i++)
			ids[i] = l.items[i].id;
		/* No cgroup2 at all: every path shows as gone. */
		cgroup_paths_of(ids, l.n, paths);
	}
	if (json_output) {
		struct json_object *obj = json_object_new_object();
		struct json_object *arr = json_object_new_array();

		json_add_u64(obj, "map_id", l.map_id);
		for (size_t i = 0; i < l.n; i++) {
			struct json_object *o = json_object_new_object();

			if (paths[i])
				cgroup_path_absolute(paths[i], abs, sizeof(abs));
			json_add_str(o, "cgroup", paths[i] ? abs : NULL);
			json_add_u64(o, "cgroup_id", l.items[i].id);
			policy_json_add(o, &l.items[i].policy);
			json_object_array_add(arr, o);
		}
		json_object_object_add(obj, "policies", arr);
		json_print(obj);
		json_object_put(obj);
	} else if (!l.n) {
		printf("no policies: every rule enforced everywhere\n");
	} else {
		for (size_t i = 0; i < l.n; i++) {
			if (paths[i])
				cgroup_path_absolute(paths[i], abs, sizeof(abs));
			policy_format(&l.items[i].policy, buf, sizeof(buf));
			printf("%s (cgroup %llu): %s\n", paths[i] ? abs : "(gone)",
			       (unsigned long long)l.items[i].id, buf);
		}
	}
out:
	for (size_t i = 0; paths && i < l.n; i++)
		free(paths[i]);
	free(paths);
	free(ids);
	policy_list_free(&l);
	return err ? CMD_FAIL : CMD_OK;
}

static const struct nodefd_policy *list_find(const struct policy_list *l, __u64 id)
{
	struct policy_item key = { .id = id };
	const struct policy_item *it = bsearch(&key, l->items, l->n, sizeof(*l->items), item_cmp);

	return it ? &it->policy : NULL;
}

/*
 * The policy @rel follows, found as the BPF programs find it: its own
 * entry, else the nearest ancestor's, looking CGROUP_LOOKUP_DEPTH levels up.
 */
static int show_one(int outer, const char *rel)
{
	static const struct nodefd_policy all_enforced = {
		.rule_mode = { NODEFD_MODE_ENFORCE, NODEFD_MODE_ENFORCE, NODEFD_MODE_ENFORCE,
			       NODEFD_MODE_ENFORCE },
	};
	char abs[CGROUP_PATH_MAX + 16], from_abs[CGROUP_PATH_MAX + 16], anc[CGROUP_PATH_MAX];
	char why[POLICY_REASON_MAX], buf[256];
	const struct nodefd_policy *p = NULL;
	struct policy_list l;
	__u64 id, from_id = 0;
	int err, level = 0;

	cgroup_path_absolute(rel, abs, sizeof(abs));
	if (cgroup_resolve(rel, &id, why, sizeof(why))) {
		p_err("policy show: %s", why);
		return CMD_FAIL;
	}
	err = policy_list_read(outer, &l);
	if (err) {
		p_err("policy show: cannot read the policies in %s/cgroup_policy: %s", PIN_DIR,
		      errstr(err));
		return CMD_FAIL;
	}
	for (const char *c = rel; *c; c++)
		level += *c == '/';
	level += rel[0] != '\0';
	snprintf(anc, sizeof(anc), "%s", rel);
	for (int i = 0; i < CGROUP_LOOKUP_DEPTH && level - i >= 0; i++) {
		__u64 aid;

		if (i) {
			char *slash = strrchr(anc, '/');

			if (slash)
				*slash = '\0';
			else
				anc[0] = '\0';
		}
		if (cgroup_resolve(anc, &aid, why, sizeof(why)))
			continue;
		p = list_find(&l, aid);
		if (p) {
			from_id = aid;
			cgroup_path_absolute(anc, from_abs, sizeof(from_abs));
			break;
		}
	}
	if (json_output) {
		struct json_object *obj = json_object_new_object();

		json_add_str(obj, "cgroup", abs);
		json_add_u64(obj, "cgroup_id", id);
		json_add_str(obj, "source", !p ? "none" : from_id == id ? "own" : "inherited");
		json_add_str(obj, "from", p ? from_abs : NULL);
		if (p)
			json_add_u64(obj, "from_id", from_id);
		else
			json_object_object_add(obj, "from_id", NULL);
		policy_json_add(obj, p ? p : &all_enforced);
		json_add_u64(obj, "map_id", l.map_id);
		json_print(obj);
		json_object_put(obj);
	} else {
		policy_format(p ? p : &all_enforced, buf, sizeof(buf));
		if (!p)
			printf("%s (cgroup %llu): no policy on it or its ancestors: %s\n", abs,
			       (unsigned long long)id, buf);
		else if (from_id == id)
			printf("%s (cgroup %llu): own policy: %s\n", abs, (unsigned long long)id,
			       buf);
		else
			printf("%s (cgroup %llu): inherited from %s (cgroup %llu): %s\n", abs,
			       (unsigned long long)id, from_abs, (unsigned long long)from_id, buf);
	}
	policy_list_free(&l);
	return CMD_OK;
}

static int do_policy_show(int argc, char **argv)
{
	char rel[CGROUP_PATH_MAX], q[3 * 64 + 8];
	int ret, outer;

	ret = policy_opts(argc, argv, "show", false, NULL, NULL);
	if (ret >= 0)
		return ret;
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		p_err("policy show: unexpected argument '%s'; usage: nodefdctl policy show [CGROUP]",
		      policy_quote(argv[1], 64, q, sizeof(q)));
		return CMD_USAGE;
	}
	if (argc == 1) {
		ret = cgroup_arg("show", argv[0], rel, sizeof(rel));
		if (ret)
			return ret;
	}
	outer = policy_prepare("show", false);
	if (outer < 0)
		return CMD_FAIL;
	ret = argc ? show_one(outer, rel) : show_all(outer);
	close(outer);
	return ret;
}

/* ---- the policy file --------------------------------------------------- */

/*
 * The whole of @file, checked: a regular file, root's and writable by root
 * only (whoever can write it decides what nodefd enforces), of at most
 * POLICYFILE_SIZE_MAX bytes.
 */
static int policy_file_read(const char *file, const char *qfile, char **text, size_t *len,
			    char *why, size_t size)
{
	struct stat st;
	size_t n = 0;
	char *buf;
	int fd, err;

	/* O_NONBLOCK: a FIFO put in the file's place must not hang the daemon. */
	fd = open(file, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, size, "%s: %s", qfile, errstr(err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(why, size, "%s: %s", qfile, errstr(err));
		goto out_close;
	}
	err = -EINVAL;
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, size, "%s: not a regular file", qfile);
		goto out_close;
	}
	if (st.st_uid != 0) {
		snprintf(why, size,
			 "%s: owned by uid %u, not root: whoever can write it could relax nodefd",
			 qfile, st.st_uid);
		err = -EPERM;
		goto out_close;
	}
	if (st.st_mode & 0022) {
		snprintf(why, size,
			 "%s: writable by group or others (mode %04o): whoever can write it could relax nodefd",
			 qfile, st.st_mode & 07777);
		err = -EPERM;
		goto out_close;
	}
	if (st.st_size > POLICYFILE_SIZE_MAX) {
		snprintf(why, size, "%s: larger than %d bytes (%lld)", qfile, POLICYFILE_SIZE_MAX,
			 (long long)st.st_size);
		err = -EFBIG;
		goto out_close;
	}
	/* One byte more than allowed, to see a file that grew since fstat(). */
	buf = malloc(POLICYFILE_SIZE_MAX + 1);
	if (!buf) {
		snprintf(why, size, "%s: out of memory", qfile);
		err = -ENOMEM;
		goto out_close;
	}
	while (n < POLICYFILE_SIZE_MAX + 1) {
		ssize_t r = read(fd, buf + n, POLICYFILE_SIZE_MAX + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			snprintf(why, size, "%s: %s", qfile, errstr(err));
			free(buf);
			goto out_close;
		}
		if (!r)
			break;
		n += r;
	}
	if (n > POLICYFILE_SIZE_MAX) {
		snprintf(why, size, "%s: larger than %d bytes", qfile, POLICYFILE_SIZE_MAX);
		free(buf);
		err = -EFBIG;
		goto out_close;
	}
	*text = buf;
	*len = n;
	err = 0;
out_close:
	close(fd);
	return err;
}

int policy_file_parse(const char *file, struct policyfile *pf, char *why, size_t size)
{
	char qfile[3 * 256 + 8];
	struct policy_error perr;
	size_t len = 0;
	char *text = NULL;
	int err;

	memset(pf, 0, sizeof(*pf));
	policy_quote(file, 256, qfile, sizeof(qfile));
	err = policy_file_read(file, qfile, &text, &len, why, size);
	if (err)
		return err;
	err = policyfile_parse(text, len, pf, &perr);
	free(text);
	if (err && perr.line)
		snprintf(why, size, "%s:%d: %s", qfile, perr.line, perr.reason);
	else if (err)
		snprintf(why, size, "%s: %s", qfile, perr.reason);
	return err;
}

/*
 * A section may name a cgroup that does not exist yet (a service not
 * started): its id is 0 and it is left out of @l, to be applied when the
 * cgroup appears (the daemon watches for it).  Anything else wrong with a
 * path (not a directory, a symbolic link, another filesystem) rejects the
 * file, as does a cgroup named twice under two spellings.
 */
int policy_file_resolve(const char *file, const struct policyfile *pf, __u64 *ids,
			size_t *pending, struct policy_list *l, char *why, size_t size)
{
	char qfile[3 * 256 + 8], reason[POLICY_REASON_MAX];
	int err = 0;

	memset(l, 0, sizeof(*l));
	*pending = 0;
	policy_quote(file, 256, qfile, sizeof(qfile));
	for (size_t i = 0; i < pf->n && !err; i++) {
		const struct policy_entry *e = &pf->entries[i];

		ids[i] = 0;
		err = cgroup_resolve(e->path, &ids[i], reason, sizeof(reason));
		if (err == -ENOENT) {
			ids[i] = 0;
			(*pending)++;
			err = 0;
			continue;
		}
		if (err) {
			snprintf(why, size, "%s:%d: %s", qfile, e->line, reason);
			break;
		}
		for (size_t j = 0; j < i; j++) {
			if (ids[j] == ids[i]) {
				snprintf(why, size, "%s:%d: the same cgroup (%llu) as line %d",
					 qfile, e->line, (unsigned long long)ids[i],
					 pf->entries[j].line);
				err = -EINVAL;
				break;
			}
		}
		if (!err && policy_list_put(l, ids[i], &e->policy)) {
			snprintf(why, size, "%s: out of memory", qfile);
			err = -ENOMEM;
		}
	}
	if (err)
		policy_list_free(l);
	return err;
}

static void file_report(const char *file, const struct policyfile *pf, const __u64 *ids,
			const struct policy_list *l, bool applied)
{
	char buf[256], abs[CGROUP_PATH_MAX + 16];
	size_t pending = 0;

	for (size_t i = 0; i < pf->n; i++)
		pending += !ids[i];
	if (json_output) {
		struct json_object *obj = json_object_new_object();
		struct json_object *arr = json_object_new_array();

		json_add_str(obj, "file", file);
		json_add_bool(obj, "applied", applied);
		if (applied)
			json_add_u64(obj, "map_id", l->map_id);
		json_add_u64(obj, "pending", pending);
		for (size_t i = 0; i < pf->n; i++) {
			struct json_object *o = json_object_new_object();

			cgroup_path_absolute(pf->entries[i].path, abs, sizeof(abs));
			json_add_str(o, "cgroup", abs);
			if (ids[i])
				json_add_u64(o, "cgroup_id", ids[i]);
			else
				json_object_object_add(o, "cgroup_id", NULL);
			json_add_u64(o, "line", pf->entries[i].line);
			policy_json_add(o, &pf->entries[i].policy);
			json_object_array_add(arr, o);
		}
		json_object_object_add(obj, "policies", arr);
		json_print(obj);
		json_object_put(obj);
		return;
	}
	printf("nodefd: %s: %zu %s, %s", file, l->n, l->n == 1 ? "policy" : "policies",
	       applied ? "now in effect" : "valid (nothing changed)");
	if (pending)
		printf("; %zu for cgroups that do not exist (yet)", pending);
	printf("\n");
	for (size_t i = 0; i < pf->n; i++) {
		cgroup_path_absolute(pf->entries[i].path, abs, sizeof(abs));
		policy_format(&pf->entries[i].policy, buf, sizeof(buf));
		if (ids[i])
			printf("  %s (cgroup %llu): %s\n", abs, (unsigned long long)ids[i], buf);
		else
			printf("  %s (line %d, no such cgroup yet): %s\n", abs, pf->entries[i].line,
			       buf);
	}
}

/* check FILE and load FILE. */
static int policy_file_verb(int argc, char **argv, bool apply)
{
	const char *verb = apply ? "load" : "check";
	char why[4 * POLICY_REASON_MAX], q[3 * 64 + 8];
	int ret, outer = -1, lock = -1, err;
	struct policy_list l = {};
	struct policyfile pf;
	__u64 *ids = NULL;
	size_t pending;

	ret = policy_opts(argc, argv, verb, false, NULL, NULL);
	if (ret >= 0)
		return ret;
	argc -= optind;
	argv += optind;
	if (argc != 1) {
		if (argc)
			p_err("policy %s: unexpected argument '%s'; usage: nodefdctl policy %s FILE",
			      verb, policy_quote(argv[1], 64, q, sizeof(q)), verb);
		else
			p_err("policy %s: missing FILE; usage: nodefdctl policy %s FILE", verb, verb);
		return CMD_USAGE;
	}
	if (strnlen(argv[0], PATH_MAX) >= PATH_MAX || !argv[0][0]) {
		p_err("policy %s: FILE: %s", verb, argv[0][0] ? "longer than PATH_MAX" : "empty");
		return CMD_USAGE;
	}
	if (apply) {
		outer = policy_prepare(verb, true);
		if (outer < 0)
			return CMD_FAIL;
		lock = lock_maps("policy load");
		if (lock < 0) {
			close(outer);
			return CMD_FAIL;
		}
	}
	err = policy_file_parse(argv[0], &pf, why, sizeof(why));
	if (!err) {
		ids = calloc(pf.n + 1, sizeof(*ids));
		err = ids ? policy_file_resolve(argv[0], &pf, ids, &pending, &l, why, sizeof(why)) :
			    -ENOMEM;
		if (err == -ENOMEM && !ids)
			snprintf(why, sizeof(why), "%s: out of memory", argv[0]);
	}
	if (!err && apply) {
		err = policy_swap(outer, &l);
		if (err)
			snprintf(why, sizeof(why), "%s: cannot swap in the new policy map: %s",
				 argv[0], errstr(err));
	}
	if (err)
		p_err("policy %s: %s%s", verb, why,
		      apply ? "; rejected whole, the running policy is unchanged" : "");
	else
		file_report(argv[0], &pf, ids, &l, apply);
	policy_list_free(&l);
	policyfile_free(&pf);
	free(ids);
	lock_release(lock);
	if (outer >= 0)
		close(outer);
	return err ? CMD_FAIL : CMD_OK;
}

static int do_policy_check(int argc, char **argv)
{
	return policy_file_verb(argc, argv, false);
}

static int do_policy_load(int argc, char **argv)
{
	return policy_file_verb(argc, argv, true);
}

static const struct cmd policy_cmds[] = {
	{ "set", do_policy_set },
	{ "unset", do_policy_unset },
	{ "show", do_policy_show },
	{ "check", do_policy_check },
	{ "load", do_policy_load },
	{ NULL, NULL },
};

int do_policy(int argc, char **argv)
{
	return cmd_select(policy_cmds, argc - 1, argv + 1, "policy", policy_help);
}
