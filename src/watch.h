/* SPDX-License-Identifier: GPL-2.0 */
/* watch.h - inotify watches on where cgroups are made and removed (watch.c), for the daemon */
#ifndef __NODEFD_WATCH_H
#define __NODEFD_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct cgroup_watch {
	int fd;				/* inotify; -1 without (poll instead) */
	int *wds;
	size_t n;
	size_t cap;
};

/* 0, or -errno with w->fd == -1 (a kernel without CONFIG_INOTIFY_USER). */
int cgroup_watch_init(struct cgroup_watch *w);
void cgroup_watch_free(struct cgroup_watch *w);
/*
 * Watch, for each of the @n normalised cgroup paths, the directory it
 * would be made in (the nearest ancestor that exists), and nothing else.
 * 0, or the first -errno with the reason in @why (the others are watched
 * all the same).
 */
int cgroup_watch_reset(struct cgroup_watch *w, const char *const *paths, size_t n, char *why,
		       size_t size);
/*
 * Watch the cgroup at @rel itself too (one a pattern's match may be made
 * below), after cgroup_watch_reset().  0 (also when it is not there), or
 * -errno with the reason in @why.
 */
int cgroup_watch_dir(struct cgroup_watch *w, const char *rel, char *why, size_t size);
/* Reads what inotify has: true if a watched directory changed. */
bool cgroup_watch_changed(struct cgroup_watch *w);

#endif /* __NODEFD_WATCH_H */
