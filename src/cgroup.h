/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup.h - cgroup v2 paths and ids (cgroup.c), from the filesystem (their syntax: text.h) */
#ifndef __NODEFD_CGROUP_H
#define __NODEFD_CGROUP_H

#include <stddef.h>
#include <linux/types.h>

/* CGROUP_ROOT "/" @rel, or CGROUP_ROOT for the root (""). */
void cgroup_path_absolute(const char *rel, char *abs, size_t size);

/*
 * The id of the cgroup at normalised path @rel: 0, or -errno with the
 * reason in @why (-ENOENT: no such cgroup, -ENOTDIR: not a directory,
 * -ELOOP: a symbolic link, -EXDEV: another filesystem, -ENOTSUP:
 * CGROUP_ROOT is no cgroup2 mount).
 */
int cgroup_resolve(const char *rel, __u64 *id, char *why, size_t wsize);

/*
 * The relative paths of @n cgroup ids, in one walk of the tree: paths[i]
 * is malloc()ed, or NULL for an id that no cgroup has now.  0 or -errno.
 */
int cgroup_paths_of(const __u64 *ids, size_t n, char **paths);

/* What cgroup_glob_walk() reports of a directory. */
enum cgroup_glob_kind {
	CGROUP_GLOB_MATCH,	/* a cgroup matching the pattern, with its id */
	CGROUP_GLOB_PARENT,	/* a cgroup below which a match may yet be made */
};

typedef int (*cgroup_glob_fn)(const char *rel, __u64 id, enum cgroup_glob_kind kind, void *arg);

/*
 * Calls @fn for the cgroups matching @pattern (glob.h), each once, and for
 * the ones a match could be made below, looking below glob_base() only and
 * at WALK_MAX_DIRS directories at most (beyond: -E2BIG).  0 (also when
 * there is nothing below glob_base(), or not even it), @fn's first nonzero
 * return, or -errno with the reason in @why.
 */
int cgroup_glob_walk(const char *pattern, cgroup_glob_fn fn, void *arg, char *why,
		     size_t wsize);

/* The absolute path of cgroup @id, remembered; NULL if there is none. */
const char *cgroup_path_cached(__u64 id);
/* Remember @abs as cgroup @id's path (an event recorded it, maybe after the cgroup went). */
void cgroup_path_remember(__u64 id, const char *abs);

#endif /* __NODEFD_CGROUP_H */
