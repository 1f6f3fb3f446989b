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

/* The absolute path of cgroup @id, remembered; NULL if there is none. */
const char *cgroup_path_cached(__u64 id);

#endif /* __NODEFD_CGROUP_H */
