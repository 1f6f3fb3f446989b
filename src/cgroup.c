// SPDX-License-Identifier: GPL-2.0
/* cgroup.c - cgroup v2 paths: checked and resolved to ids, and ids back to paths */

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include "text.h"
#include "cgroup.h"
#include "glob.h"

/*
 * A cgroup's id is what bpf_get_current_cgroup_id() gives its tasks: the
 * kernfs node id, which is the inode number of its directory in the
 * cgroup2 filesystem (64-bit, never reused while the system runs).  Paths
 * are taken beneath /sys/fs/cgroup, which must be the cgroup2 mount (no
 * v1 or hybrid layout), by openat2() with RESOLVE_BENEATH,
 * RESOLVE_NO_SYMLINKS and RESOLVE_NO_XDEV: no symbolic link (cgroupfs has
 * none of its own; one in a path is somebody's trick), no "..", no mount
 * on top of a cgroup directory.
 *
 * Nothing here prints: errors come back as -errno and a reason, for the
 * caller to say in its own words.
 */

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define WALK_MAX_DIRS 100000	/* cgroups an id-to-path search looks at */
#define PATH_CACHE_SIZE 64



void cgroup_path_absolute(const char *rel, char *abs, size_t size)
{
	snprintf(abs, size, "%s%s%s", CGROUP_ROOT, rel[0] ? "/" : "", rel);
}

/* An fd of CGROUP_ROOT, checked to be a cgroup2 mount: fd or -errno. */
static int cgroup_root_open(char *why, size_t wsize)
{
	struct statfs sfs;
	int fd, err;

	fd = open(CGROUP_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		why_set(why, wsize, CGROUP_ROOT ": %s", strerror(-err));
		return err;
	}
	if (fstatfs(fd, &sfs)) {
		err = -errno;
		why_set(why, wsize, CGROUP_ROOT ": %s", strerror(-err));
		close(fd);
		return err;
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		why_set(why, wsize,
			CGROUP_ROOT ": not a cgroup v2 filesystem (cgroup v1 or hybrid layout: nodefd needs the unified one)");
		close(fd);
		return -ENOTSUP;
	}
	return fd;
}

/* The id of the cgroup directory open as @fd. */
static int cgroup_fd_id(int fd, __u64 *id)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*id = st.st_ino;
	return 0;
}

int cgroup_resolve(const char *rel, __u64 *id, char *why, size_t wsize)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	char abs[CGROUP_PATH_MAX + 16], q[3 * 96 + 8];
	struct statfs sfs;
	int root, fd, err;

	cgroup_path_absolute(rel, abs, sizeof(abs));
	text_quote(abs, 96, q, sizeof(q));
	root = cgroup_root_open(why, wsize);
	if (root < 0)
		return root;
	fd = (int)syscall(SYS_openat2, root, rel[0] ? rel : ".", &how, sizeof(how)); /* an fd or -1 */
	err = fd < 0 ? -errno : 0;
	close(root);
	switch (err) {
	case 0:
		break;
	case -ENOENT:
		why_set(why, wsize, "%s: no such cgroup", q);
		return err;
	case -ENOTDIR:
		why_set(why, wsize, "%s: not a cgroup (a cgroup is a directory)", q);
		return err;
	case -ELOOP:
		why_set(why, wsize, "%s: a symbolic link in the path (refused)", q);
		return err;
	case -EXDEV:
		why_set(why, wsize, "%s: crosses a mount point (not a cgroup of %s)", q,
			CGROUP_ROOT);
		return err;
	case -ENOSYS:
		why_set(why, wsize, "%s: the kernel has no openat2() (Linux 5.6 or later needed)", q);
		return err;
	default:
		why_set(why, wsize, "%s: %s", q, strerror(-err));
		return err;
	}
	if (fstatfs(fd, &sfs)) {
		err = -errno;
		why_set(why, wsize, "%s: %s", q, strerror(-err));
	} else if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		err = -EXDEV;
		why_set(why, wsize, "%s: not on the cgroup v2 filesystem", q);
	} else {
		err = cgroup_fd_id(fd, id);
		if (err)
			why_set(why, wsize, "%s: %s", q,
				err == -ENOTDIR ? "not a cgroup (a cgroup is a directory)" :
						  strerror(-err));
	}
	close(fd);
	return err;
}

/* Id to path: a depth-first walk of the cgroup tree, one fstatat() per cgroup. */
struct walk {
	const __u64 *ids;	/* sorted */
	size_t n;
	char **paths;		/* relative; paths[i] for ids[i] */
	size_t found;
	size_t dirs;
	char path[CGROUP_PATH_MAX];
};

static int id_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* A subdirectory (a child cgroup) whose path, @len bytes and a '/' before its name, fits. */
static bool walk_child(const struct dirent *de, size_t len, size_t nlen, size_t size)
{
	return de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
	       len + 1 + nlen + 1 <= size;
}

static void walk_found(struct walk *w, __u64 id)
{
	const __u64 *hit = bsearch(&id, w->ids, w->n, sizeof(*w->ids), id_cmp);

	if (!hit || w->paths[hit - w->ids])
		return;
	w->paths[hit - w->ids] = strdup(w->path);
	if (w->paths[hit - w->ids])
		w->found++;
}

static void walk_dir(struct walk *w, int dfd, size_t len, int depth)
{
	struct dirent *de;
	DIR *d;

	if (depth > CGROUP_PATH_MAX / 2)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while (w->found < w->n && w->dirs < WALK_MAX_DIRS && (de = readdir(d))) {
		size_t nlen = strlen(de->d_name);
		struct stat st;
		int fd;

		if (!walk_child(de, len, nlen, sizeof(w->path)))
			continue;
		w->dirs++;
		if (len)
			w->path[len] = '/';
		memcpy(w->path + len + !!len, de->d_name, nlen + 1);
		if (!fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
			walk_found(w, st.st_ino);
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			walk_dir(w, fd, len + !!len + nlen, depth + 1);
		w->path[len] = '\0';
	}
	closedir(d);
}

int cgroup_paths_of(const __u64 *ids, size_t n, char **paths)
{
	struct walk w = { .n = n, .paths = paths };
	__u64 *sorted, root_id = 0;
	int root, fd, err;

	for (size_t i = 0; i < n; i++)
		paths[i] = NULL;
	if (!n)
		return 0;
	root = cgroup_root_open(NULL, 0);
	if (root < 0)
		return root;
	err = cgroup_fd_id(root, &root_id);
	fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(root);
	if (err || fd < 0) {
		if (fd >= 0)
			close(fd);
		return err ? err : -errno;
	}
	sorted = malloc(n * sizeof(*sorted));
	w.paths = calloc(n, sizeof(*w.paths));
	if (!sorted || !w.paths) {
		free(sorted);
		free(w.paths);
		close(fd);
		return -ENOMEM;
	}
	memcpy(sorted, ids, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), id_cmp);
	w.ids = sorted;
	w.path[0] = '\0';
	walk_found(&w, root_id);
	walk_dir(&w, fd, 0, 0);
	for (size_t i = 0; i < n; i++) {
		const __u64 *hit = bsearch(&ids[i], sorted, n, sizeof(*sorted), id_cmp);

		if (hit && w.paths[hit - sorted])
			paths[i] = strdup(w.paths[hit - sorted]);
	}
	for (size_t i = 0; i < n; i++)
		free(w.paths[i]);
	free(w.paths);
	free(sorted);
	return 0;
}

/* Patterns: a depth-first walk below the pattern's base, pruned where nothing can match. */
struct glob_walk {
	const char *pattern;
	cgroup_glob_fn fn;
	void *arg;
	bool fn_failed;		/* the error is @fn's, which said why */
	size_t dirs;
	char path[CGROUP_PATH_MAX];
};

static int glob_call(struct glob_walk *w, const char *rel, __u64 id, enum cgroup_glob_kind kind)
{
	int ret = w->fn(rel, id, kind, w->arg);

	w->fn_failed = ret != 0;
	return ret;
}

static int glob_dir(struct glob_walk *w, int dfd, size_t len)
{
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		return ret == -ENOENT ? 0 : ret;	/* removed meanwhile */
	}
	while (!ret && (de = readdir(d))) {
		size_t nlen = strlen(de->d_name);
		bool match, below;
		struct stat st;
		int fd;

		if (!walk_child(de, len, nlen, sizeof(w->path)))
			continue;
		if (++w->dirs > WALK_MAX_DIRS) {
			ret = -E2BIG;
			break;
		}
		if (len)
			w->path[len] = '/';
		memcpy(w->path + len + !!len, de->d_name, nlen + 1);
		match = glob_match(w->pattern, w->path);
		below = glob_below(w->pattern, w->path);
		if (match && !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISDIR(st.st_mode))
			ret = glob_call(w, w->path, st.st_ino, CGROUP_GLOB_MATCH);
		if (!ret && below) {
			ret = glob_call(w, w->path, 0, CGROUP_GLOB_PARENT);
			fd = ret ? -1 :
				   openat(dirfd(d), de->d_name,
					  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				ret = glob_dir(w, fd, len + !!len + nlen);
		}
		w->path[len] = '\0';
	}
	closedir(d);
	return ret;
}

int cgroup_glob_walk(const char *pattern, cgroup_glob_fn fn, void *arg, char *why, size_t wsize)
{
	struct glob_walk w = { .pattern = pattern, .fn = fn, .arg = arg };
	char base[CGROUP_PATH_MAX], q[3 * 96 + 8];
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	int root, fd, ret;
	__u64 id = 0;

	glob_base(pattern, base, sizeof(base));
	root = cgroup_root_open(why, wsize);
	if (root < 0)
		return root;
	fd = (int)syscall(SYS_openat2, root, base[0] ? base : ".", &how, sizeof(how));
	ret = fd < 0 ? -errno : 0;
	close(root);
	if (ret == -ENOENT || ret == -ENOTDIR)
		return 0;
	if (ret) {
		why_set(why, wsize, "%s: %s", text_quote(base, 96, q, sizeof(q)), strerror(-ret));
		return ret;
	}
	snprintf(w.path, sizeof(w.path), "%s", base);
	if (glob_match(pattern, base) && !cgroup_fd_id(fd, &id))
		ret = glob_call(&w, base, id, CGROUP_GLOB_MATCH); /* a trailing double star: base too */
	if (!ret)
		ret = glob_call(&w, base, 0, CGROUP_GLOB_PARENT);
	if (!ret)
		ret = glob_dir(&w, fd, strlen(w.path));
	else
		close(fd);
	if (w.fn_failed)
		return ret;
	if (ret == -E2BIG)
		why_set(why, wsize, "'%s': more than %d cgroups to look at below %s",
			text_quote(pattern, 96, q, sizeof(q)), WALK_MAX_DIRS, base[0] ? base : "the root");
	else if (ret < 0)
		why_set(why, wsize, "'%s': walking the cgroups below %s: %s",
			text_quote(pattern, 96, q, sizeof(q)), base[0] ? base : "the root",
			strerror(-ret));
	return ret;
}

/*
 * Events name few cgroups, over and over: remember the last ones.  A
 * cgroup not found is remembered too, since its id will never come back.
 */
static struct {
	__u64 id;
	char *path;	/* absolute; NULL: not found */
	bool used;
} path_cache[PATH_CACHE_SIZE];
static unsigned int path_cache_next;

const char *cgroup_path_cached(__u64 id)
{
	char abs[CGROUP_PATH_MAX + 16];
	unsigned int slot;
	char *rel;

	for (unsigned int i = 0; i < PATH_CACHE_SIZE; i++)
		if (path_cache[i].used && path_cache[i].id == id)
			return path_cache[i].path;
	if (cgroup_paths_of(&id, 1, &rel))
		return NULL;	/* no cgroup2 at all: not remembered */
	slot = path_cache_next++ % PATH_CACHE_SIZE;
	free(path_cache[slot].path);
	path_cache[slot].path = NULL;
	if (rel) {
		cgroup_path_absolute(rel, abs, sizeof(abs));
		path_cache[slot].path = strdup(abs);
		free(rel);
	}
	path_cache[slot].id = id;
	path_cache[slot].used = true;
	return path_cache[slot].path;
}

void cgroup_path_remember(__u64 id, const char *abs)
{
	unsigned int slot = PATH_CACHE_SIZE;

	for (unsigned int i = 0; i < PATH_CACHE_SIZE; i++)
		if (path_cache[i].used && path_cache[i].id == id)
			slot = i;
	if (slot == PATH_CACHE_SIZE)
		slot = path_cache_next++ % PATH_CACHE_SIZE;
	else if (path_cache[slot].path && !strcmp(path_cache[slot].path, abs))
		return;
	free(path_cache[slot].path);
	path_cache[slot].path = strdup(abs);
	path_cache[slot].id = id;
	path_cache[slot].used = true;
}
