// SPDX-License-Identifier: GPL-2.0
/* watch.c - inotify watches on the directories where the policy file's cgroups are made */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>

#include "nodefdctl.h"
#include "cgroup.h"
#include "watch.h"

int cgroup_watch_init(struct cgroup_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	return w->fd < 0 ? -errno : 0;
}

void cgroup_watch_free(struct cgroup_watch *w)
{
	free(w->wds);
	if (w->fd >= 0)
		close(w->fd);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}

static void watch_clear(struct cgroup_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		inotify_rm_watch(w->fd, w->wds[i]);
	w->n = 0;
}

/* Remember @wd once. */
static int watch_keep(struct cgroup_watch *w, int wd, const char *abs, char *why, size_t size)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->wds[i] == wd)
			return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		int *wds = realloc(w->wds, cap * sizeof(*wds));

		if (!wds) {
			why_set(why, size, "%s: cannot watch it: out of memory", abs);
			return -ENOMEM;
		}
		w->wds = wds;
		w->cap = cap;
	}
	w->wds[w->n++] = wd;
	return 0;
}

/* A watch on the directory @abs: its wd, -1 if it is not there, or -errno with the reason. */
static int watch_one(struct cgroup_watch *w, const char *abs, char *why, size_t size)
{
	int wd, err;

	wd = inotify_add_watch(w->fd, abs, IN_CREATE | IN_DELETE | IN_ONLYDIR | IN_DONT_FOLLOW);
	if (wd >= 0)
		return wd;
	if (errno == ENOENT || errno == ENOTDIR)
		return -1;
	err = -errno;
	why_set(why, size, "%s: cannot watch it for cgroups made and removed: %s", abs,
		errstr(err));
	if (err == -ENOSPC)
		why_set(why, size,
			"%s: cannot watch it for cgroups made and removed: no inotify watch left (fs.inotify.max_user_watches)",
			abs);
	return err;
}

/* The parent of @rel, or the nearest ancestor that exists: 0 or -errno with the reason. */
static int watch_add(struct cgroup_watch *w, const char *rel, char *why, size_t size)
{
	char dir[CGROUP_PATH_MAX], abs[CGROUP_PATH_MAX + 16];
	int wd = -1;

	snprintf(dir, sizeof(dir), "%s", rel);
	while (dir[0] && wd < 0) {
		char *slash = strrchr(dir, '/');

		if (slash)
			*slash = '\0';
		else
			dir[0] = '\0';
		cgroup_path_absolute(dir, abs, sizeof(abs));
		wd = watch_one(w, abs, why, size);
		if (wd < -1)
			return wd;
	}
	return wd < 0 ? 0 : watch_keep(w, wd, abs, why, size);
}

int cgroup_watch_dir(struct cgroup_watch *w, const char *rel, char *why, size_t size)
{
	char abs[CGROUP_PATH_MAX + 16];
	int wd;

	if (w->fd < 0)
		return 0;
	cgroup_path_absolute(rel, abs, sizeof(abs));
	wd = watch_one(w, abs, why, size);
	if (wd < -1)
		return wd;
	return wd < 0 ? 0 : watch_keep(w, wd, abs, why, size);
}

int cgroup_watch_reset(struct cgroup_watch *w, const char *const *paths, size_t n, char *why,
		       size_t size)
{
	int first = 0;

	if (w->fd < 0)
		return 0;
	watch_clear(w);
	for (size_t i = 0; i < n; i++) {
		int err;

		if (!paths[i][0])
			continue;
		err = watch_add(w, paths[i], first ? NULL : why, size);
		if (err && !first)
			first = err;
	}
	return first;
}

bool cgroup_watch_changed(struct cgroup_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;

	while (read(w->fd, buf, sizeof(buf)) > 0)
		changed = true;
	return changed;
}
