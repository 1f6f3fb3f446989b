// SPDX-License-Identifier: GPL-2.0
/* policymap.c - the middle layer: policies in the maps, their atomic swap, policy files read */

#include <errno.h>
#include <fcntl.h>
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

bool policy_list_same(struct policy_list *a, struct policy_list *b)
{
	if (a->n != b->n)
		return false;
	qsort(a->items, a->n, sizeof(*a->items), item_cmp);
	qsort(b->items, b->n, sizeof(*b->items), item_cmp);
	for (size_t i = 0; i < a->n; i++)
		if (a->items[i].id != b->items[i].id ||
		    memcmp(&a->items[i].policy, &b->items[i].policy, sizeof(a->items[i].policy)))
			return false;
	return true;
}

const struct nodefd_policy *policy_list_find(const struct policy_list *l, __u64 id)
{
	struct policy_item key = { .id = id };
	const struct policy_item *it = bsearch(&key, l->items, l->n, sizeof(*l->items), item_cmp);

	return it ? &it->policy : NULL;
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
		opts.btf_fd = (__u32)btf_fd;	/* >= 0 here */
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
	for (unsigned int r = 0; r < NODEFD_RULE_NR; r++)
		json_add_str(obj, policy_rule_name(r), policy_mode_name(p->rule_mode[r]));
	json_add_bool(obj, "path_read", p->flags & NODEFD_POLICY_PATH_READ);
	json_add_bool(obj, "strict", p->flags & NODEFD_POLICY_STRICT);
}

void policy_format(const struct nodefd_policy *p, char *buf, size_t size)
{
	size_t n = 0;

	for (unsigned int r = 0; r < NODEFD_RULE_NR; r++)
		n = text_append(buf, size, n, "%s=%s ", policy_rule_name(r),
				policy_mode_name(p->rule_mode[r]));
	text_append(buf, size, n, "path_read=%s strict=%s",
		    p->flags & NODEFD_POLICY_PATH_READ ? "on" : "off",
		    p->flags & NODEFD_POLICY_STRICT ? "on" : "off");
}

/* ---- the policy file --------------------------------------------------- */

/*
 * The whole of @file, checked: a regular file, root's and writable by root
 * only (whoever can write it decides what nodefd enforces), of at most
 * POLICYFILE_SIZE_MAX bytes.
 */
int root_file_read(const char *file, const char *qfile, char **text, size_t *len,
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
		n += (size_t)r;	/* r > 0 */
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
	char qfile[3 * 256 + 8], reason[REASON_MAX];
	size_t len = 0;
	char *text = NULL;
	int err, line;

	memset(pf, 0, sizeof(*pf));
	text_quote(file, 256, qfile, sizeof(qfile));
	err = root_file_read(file, qfile, &text, &len, why, size);
	if (err)
		return err;
	err = policyfile_parse(text, len, pf, &line, reason, sizeof(reason));
	free(text);
	if (err && line)
		why_set(why, size, "%s:%d: %s", qfile, line, reason);
	else if (err)
		why_set(why, size, "%s: %s", qfile, reason);
	return err;
}

/* A pattern's walk: the cgroups it rules, into the list. */
struct pattern_resolve {
	const struct policyfile *pf;
	size_t entry;
	__u64 ruled;
	bool failed;		/* said why, in @why */
	struct policy_list *l;
	const char *qfile;
	char *why;
	size_t size;
};

static int pattern_found(const char *rel, __u64 id, enum cgroup_glob_kind kind, void *arg)
{
	struct pattern_resolve *r = arg;
	const struct policy_entry *e = &r->pf->entries[r->entry];

	if (kind != CGROUP_GLOB_MATCH || policyfile_rule(r->pf, rel, NULL) != (long)r->entry)
		return 0;
	if (r->l->n >= NODEFD_MAX_POLICIES) {
		snprintf(r->why, r->size,
			 "%s:%d: the file's sections and patterns give more than %d cgroups a policy",
			 r->qfile, e->line, NODEFD_MAX_POLICIES);
		r->failed = true;
		return -E2BIG;
	}
	if (policy_list_put(r->l, id, &e->policy)) {
		snprintf(r->why, r->size, "%s: out of memory", r->qfile);
		r->failed = true;
		return -ENOMEM;
	}
	r->ruled++;
	return 0;
}

/*
 * A section may name a cgroup that does not exist yet (a service not
 * started): its id is 0 and it is left out of @l, to be applied when the
 * cgroup appears (the daemon watches for it).  Anything else wrong with a
 * path (not a directory, a symbolic link, another filesystem) rejects the
 * file, as does a cgroup named twice under two spellings.  A pattern gives
 * its policy to every cgroup it rules now (policyfile_rule()); ids[i] is
 * how many, 0 (pending) for none.
 */
int policy_file_resolve(const char *file, const struct policyfile *pf, __u64 *ids,
			size_t *pending, struct policy_list *l, char *why, size_t size)
{
	char qfile[3 * 256 + 8], reason[REASON_MAX];
	int err = 0;

	memset(l, 0, sizeof(*l));
	*pending = 0;
	text_quote(file, 256, qfile, sizeof(qfile));
	for (size_t i = 0; i < pf->n && !err; i++) {
		const struct policy_entry *e = &pf->entries[i];

		ids[i] = 0;
		if (e->pattern)
			continue;
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
			if (!pf->entries[j].pattern && ids[j] == ids[i]) {
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
	for (size_t i = 0; i < pf->n && !err; i++) {
		struct pattern_resolve r = {
			.pf = pf, .entry = i, .l = l, .qfile = qfile, .why = why, .size = size,
		};

		if (!pf->entries[i].pattern)
			continue;
		err = cgroup_glob_walk(pf->entries[i].path, pattern_found, &r, reason,
				       sizeof(reason));
		if (err && !r.failed)
			snprintf(why, size, "%s:%d: %s", qfile, pf->entries[i].line, reason);
		ids[i] = r.ruled;
		*pending += !r.ruled;
	}
	if (err)
		policy_list_free(l);
	return err;
}
