// SPDX-License-Identifier: GPL-2.0
/* policy.c - the policy verbs: set, unset, show, check, load (the maps: policymap.c) */

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

static void policy_help(void)
{
	printf("Usage: nodefdctl [-j|-p] policy { set | unset | show | check | load | help } ...\n"
	       "\n"
	       "  policy set CGROUP MODE [RULE=MODE]... [path_read=on|off] [strict=on|off]\n"
	       "        give CGROUP a policy of its own: MODE (enforce, audit or off) for every\n"
	       "        rule, but RULE=MODE for the rules named (upgrade, append, ancestors,\n"
	       "        reach); path_read=on lets an O_PATH or O_NODE origin be reopened\n"
	       "        read-only; strict=on makes the fd's access a ceiling (a reopen never\n"
	       "        gains access the original file lacks, even where the opener could\n"
	       "        open the file by name). Replaces CGROUP's own policy, if it had one.\n"
	       "  policy unset CGROUP | --id ID\n"
	       "        remove CGROUP's own policy (by cgroup id for a cgroup that is gone):\n"
	       "        it then inherits its nearest ancestor's.\n"
	       "  policy show [CGROUP] [--file FILE]\n"
	       "        every policy; or the one CGROUP follows, its own or inherited, and\n"
	       "        the section of FILE (default " POLICY_FILE_DEFAULT ") it comes from:\n"
	       "        the one naming the cgroup, or the most specific pattern matching it.\n"
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

/* ---- arguments --------------------------------------------------------- */

/* policy show --file: the policy file whose sections `policy show CGROUP` explains. */
static const char *show_file = POLICY_FILE_DEFAULT;
static bool show_file_named;

/*
 * Global options, help, and --id for unset: operands left at argv[optind..].
 * Returns -1 to go on, else the exit status.
 */
static int policy_opts(int argc, char **argv, const char *verb, bool allow_id, __u64 *id,
		       bool *have_id)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "file", required_argument, NULL, 'f' },
		GLOBAL_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	char q[3 * 64 + 8], v[32], *end;
	int c, ret;

	snprintf(v, sizeof(v), "policy %s", verb);
	optind = 0;
	while ((c = getopt_long(argc, argv, ":" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		switch (c) {
		case 'f':
			if (strcmp(verb, "show")) {
				p_err("policy %s: unknown option '--file' (only 'policy show' takes it)",
				      verb);
				return CMD_USAGE;
			}
			show_file = optarg;
			show_file_named = true;
			break;
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
				      text_quote(optarg, 64, q, sizeof(q)));
				return CMD_USAGE;
			}
			*have_id = true;
			break;
		default:
			ret = verb_opt(c, v, argv, policy_help);
			if (ret >= 0)
				return ret;
		}
	}
	return verb_tail(argc, argv, v, policy_help, -1);
}

/* CGROUP as given, checked as a string: CMD_USAGE having said why, or 0. */
static int cgroup_arg(const char *verb, const char *arg, char *rel, size_t size)
{
	char why[REASON_MAX];

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
	char rel[CGROUP_PATH_MAX], abs[CGROUP_PATH_MAX + 16], why[REASON_MAX];
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
	char rel[CGROUP_PATH_MAX], abs[CGROUP_PATH_MAX + 16], why[REASON_MAX];
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
		      text_quote(argv[have_id ? 0 : 1], 64, why, sizeof(why)));
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

/*
 * Which section of show_file gives the cgroup at @rel, where the policy
 * @p in effect comes from (NULL: none), its policy, and why that one: into
 * @obj, or printed.
 */
static void show_section(const char *rel, const struct nodefd_policy *p, struct json_object *obj)
{
	char why[4 * REASON_MAX], q[3 * 256 + 8], qpath[3 * 128 + 8];
	const struct policy_entry *e;
	struct json_object *sec;
	struct policyfile pf;
	size_t matching;
	long idx;
	bool agrees;
	int err;

	err = policy_file_parse(show_file, &pf, why, sizeof(why));
	if (err == -ENOENT && !show_file_named) {
		if (obj)
			json_object_object_add(obj, "section", NULL);
		return;
	}
	if (err) {
		if (obj) {
			json_object_object_add(obj, "section", NULL);
			json_add_str(obj, "section_error", why);
		} else {
			printf("  section: cannot tell: %s\n", why);
		}
		return;
	}
	text_quote(show_file, 256, q, sizeof(q));
	idx = policyfile_rule(&pf, rel, &matching);
	if (idx < 0) {
		if (obj)
			json_object_object_add(obj, "section", NULL);
		else if (p)
			printf("  section: none of %s names or matches it (a policy set by 'nodefdctl policy set'?)\n",
			       q);
		else
			printf("  section: none of %s names or matches it\n", q);
		policyfile_free(&pf);
		return;
	}
	e = &pf.entries[idx];
	agrees = p && !memcmp(p, &e->policy, sizeof(*p));
	text_quote(e->path, 128, qpath, sizeof(qpath));
	if (obj) {
		sec = json_object_new_object();
		json_add_str(sec, "file", show_file);
		json_add_u64(sec, "line", (__u64)e->line);
		json_add_str(sec, "path", e->path);
		json_add_bool(sec, "pattern", e->pattern);
		json_add_u64(sec, "matching", matching);
		json_add_bool(sec, "in_effect", agrees);
		json_object_object_add(obj, "section", sec);
	} else {
		printf("  section: [cgroup \"%s\"] at %s:%d: %s%s\n", qpath, q, e->line,
		       !e->pattern	 ? "names it" :
		       matching == 1 ? "the one pattern matching it" :
				       "the most specific of the patterns matching it",
		       agrees ? "" :
		       p	? "; not what is in effect (the file changed since it was applied, or 'policy set' did)" :
			  "; not in effect (no daemon applied the file since the cgroup was made?)");
		if (e->pattern && matching > 1)
			printf("  (%zu sections match it: the one naming it wins, else the pattern with the most literal characters, else the earliest)\n",
			       matching);
	}
	policyfile_free(&pf);
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
	char why[REASON_MAX], buf[256];
	const struct nodefd_policy *p = NULL;
	char from_rel[CGROUP_PATH_MAX];
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
		p = policy_list_find(&l, aid);
		if (p) {
			from_id = aid;
			snprintf(from_rel, sizeof(from_rel), "%s", anc);
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
		show_section(p ? from_rel : rel, p, obj);
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
		show_section(p ? from_rel : rel, p, NULL);
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
		p_err("policy show: unexpected argument '%s'; usage: nodefdctl policy show [CGROUP] [--file FILE]",
		      text_quote(argv[1], 64, q, sizeof(q)));
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

/*
 * A section naming a cgroup that does not exist, which no pattern of the
 * file matches either, is most often a typo: say so (on stderr; the file
 * is valid all the same, as a unit not started yet is no error).
 */
static void file_warn(const char *file, const struct policyfile *pf, const __u64 *ids)
{
	char abs[CGROUP_PATH_MAX + 16], q[3 * 256 + 8];
	size_t matching;

	for (size_t i = 0; i < pf->n; i++) {
		const struct policy_entry *e = &pf->entries[i];

		if (e->pattern || ids[i])
			continue;
		policyfile_rule(pf, e->path, &matching);
		if (matching > 1)
			continue;	/* a pattern of the file expects such cgroups too */
		cgroup_path_absolute(e->path, abs, sizeof(abs));
		p_warn("%s:%d: %s: no such cgroup, and no pattern of the file matches it (a typo? fine for a unit not started yet)",
		       text_quote(file, 256, q, sizeof(q)), e->line, abs);
	}
}

static void file_report(const char *file, const struct policyfile *pf, const __u64 *ids,
			const struct policy_list *l, bool applied)
{
	char buf[256], abs[CGROUP_PATH_MAX + 16];
	size_t pending = 0;

	for (size_t i = 0; i < pf->n; i++)
		pending += !ids[i];
	file_warn(file, pf, ids);
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
			if (ids[i] && !pf->entries[i].pattern)
				json_add_u64(o, "cgroup_id", ids[i]);
			else
				json_object_object_add(o, "cgroup_id", NULL);
			json_add_u64(o, "line", (__u64)pf->entries[i].line);
			policy_json_add(o, &pf->entries[i].policy);
			json_add_bool(o, "pattern", pf->entries[i].pattern);
			if (pf->entries[i].pattern)
				json_add_u64(o, "cgroups", ids[i]);
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
		if (pf->entries[i].pattern)
			printf("  %s (line %d, pattern, %llu %s now): %s\n", abs, pf->entries[i].line,
			       (unsigned long long)ids[i], ids[i] == 1 ? "cgroup" : "cgroups", buf);
		else if (ids[i])
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
	char why[4 * REASON_MAX], q[3 * 64 + 8];
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
			      verb, text_quote(argv[1], 64, q, sizeof(q)), verb);
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
