// SPDX-License-Identifier: GPL-2.0
/* pin.c - the pins under /sys/fs/bpf/nodefd: staging, publishing, opening, removing */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"

/*
 * A load pins everything into a staging directory beside the final one and
 * then renames it into place with RENAME_NOREPLACE: /sys/fs/bpf/nodefd
 * either does not exist or holds the whole set, and two loads racing
 * cannot both win.  A staging directory left by a load that was killed
 * half-way still holds attached links; the next load removes it.
 */

/* 1 if nodefd is loaded (its pin directory exists), 0 if not, or -errno. */
int pin_state(void)
{
	struct stat st;

	if (!stat(PIN_DIR, &st))
		return S_ISDIR(st.st_mode) ? 1 : -ENOTDIR;
	return errno == ENOENT ? 0 : -errno;
}

/* 0 if /sys/fs/bpf is a bpf filesystem, else -errno (-ENOTSUP for another filesystem). */
int pin_root_check(void)
{
	struct statfs sfs;

	if (statfs(PIN_ROOT, &sfs))
		return -errno;
	return sfs.f_type == BPF_FS_MAGIC ? 0 : -ENOTSUP;
}

int pin_abi_read(int *abi)
{
	char buf[32], *end;
	ssize_t n;
	long v;

	n = readlink(PIN_DIR "/" PIN_ABI_NAME, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || *end || v < 0 || v > INT_MAX)
		return -EINVAL;
	*abi = (int)v;
	return 0;
}

/*
 * The pinned map name, checked to be of the given type and value size
 * (value_size 0: any) so that a stale or foreign pin is not misread.
 * Returns an fd or -errno, having said why.
 */
int pin_map_open(const char *verb, const char *name, __u32 type, __u32 value_size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", PIN_DIR, name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = -errno;
		p_err("%s: %s: %s", verb, path, errstr(err));
		return err;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		p_err("%s: %s: cannot read map info: %s", verb, path, errstr(err));
		close(fd);
		return err;
	}
	if (info.type != type || (value_size && info.value_size != value_size)) {
		p_err("%s: %s: not the map this nodefdctl expects (type %u, value size %u instead of %u, %u): unload and load again",
		      verb, path, info.type, info.value_size, type, value_size);
		close(fd);
		return -EPROTO;
	}
	return fd;
}

/* Removes dir and everything under it, links first: unpinning them detaches the programs. */
int pin_tree_remove(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "%s/links", dir);
	if (!lstat(path, &st) && S_ISDIR(st.st_mode)) {
		err = pin_tree_remove(path);
		if (err)
			return err;
	}
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			err = pin_tree_remove(path);
		else if (unlink(path))
			err = -errno;
		if (err)
			break;
	}
	closedir(d);
	if (!err && rmdir(dir))
		err = -errno;
	return err;
}

/*
 * The ids of the links pinned under dir/links and of the programs they hold,
 * read through the pins and with no fd kept.  0, or -errno when there is no
 * links directory.  A pin that is not a link is skipped.
 */
int pin_links_read(const char *dir, struct pin_links *links)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	links->n = 0;
	snprintf(path, sizeof(path), "%s/links", dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && links->n < PIN_LINKS_MAX) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/links/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			links->link_id[links->n] = info.id;
			links->prog_id[links->n] = info.prog_id;
			snprintf(links->name[links->n], sizeof(links->name[0]), "%.31s", de->d_name);
			links->n++;
		}
		close(fd);
	}
	closedir(d);
	return 0;
}

/* 1 while the kernel still has the object (get_fd_by_id works), 0 once it is gone, or -errno. */
static int pin_id_present(__u32 id, bool link)
{
	int fd = link ? bpf_link_get_fd_by_id(id) : bpf_prog_get_fd_by_id(id);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == ENOENT ? 0 : -errno;
}

/*
 * Unpinning a link does not detach its program there and then: the pin's
 * inode is freed after an RCU grace period, and the last reference to the
 * link is dropped from a work item after that, which only then unhooks the
 * trampoline and puts the program.  Polls until every link and program of
 * links is gone from the kernel, for timeout_ms at most.  0 when they are
 * all gone, with *waited_ms how long it took; -ETIMEDOUT, with links left
 * holding those still there (their ids zero where the link alone is gone),
 * or another -errno if the kernel would not say.
 */
int pin_links_wait_gone(struct pin_links *links, int timeout_ms, int *waited_ms)
{
	const struct timespec tick = { .tv_nsec = 5 * 1000 * 1000 };
	struct timespec t0, t;
	int left, ret, ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		left = 0;
		for (int i = 0; i < links->n; i++) {
			ret = links->link_id[i] ? pin_id_present(links->link_id[i], true) : 0;
			if (ret < 0)
				return ret;
			if (!ret)
				links->link_id[i] = 0;
			ret = links->prog_id[i] ? pin_id_present(links->prog_id[i], false) : 0;
			if (ret < 0)
				return ret;
			if (!ret)
				links->prog_id[i] = 0;
			left += !!links->link_id[i] + !!links->prog_id[i];
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		/* At most timeout_ms, an int, from t0. */
		ms = (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		*waited_ms = ms;
		if (!left)
			return 0;
		if (ms >= timeout_ms)
			return -ETIMEDOUT;
		nanosleep(&tick, NULL);
	}
}

/* Removes staging directories whose load is gone. */
static void pin_staging_sweep(void)
{
	const char *prefix = strrchr(PIN_STAGING_PREFIX, '/') + 1;
	char path[PATH_MAX], *end;
	struct dirent *de;
	DIR *d;
	bool alive;
	long pid;
	int err;

	d = opendir(PIN_ROOT);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		pid = strtol(de->d_name + strlen(prefix), &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		alive = pid != getpid() && (!kill((pid_t)pid, 0) || errno != ESRCH);
		if (alive)
			continue;
		snprintf(path, sizeof(path), "%s/%s", PIN_ROOT, de->d_name);
		err = pin_tree_remove(path);
		if (err)
			p_warn("%s: left by an interrupted load, cannot remove it: %s", path,
			       errstr(err));
		else
			p_warn("%s: left by an interrupted load, removed", path);
	}
	closedir(d);
}

int pin_staging_create(char *dir, size_t size)
{
	char links[PATH_MAX];

	pin_staging_sweep();
	snprintf(dir, size, "%s%d", PIN_STAGING_PREFIX, getpid());
	snprintf(links, sizeof(links), "%s/links", dir);
	if (mkdir(dir, 0700))
		return -errno;
	if (mkdir(links, 0700)) {
		int err = -errno;

		rmdir(dir);
		return err;
	}
	return 0;
}

/* Pins fd as dir[/sub]/name. */
int pin_staging_add(const char *dir, const char *sub, const char *name, int fd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s%s/%s", dir, sub ? "/" : "", sub ? sub : "", name);
	return bpf_obj_pin(fd, path) ? -errno : 0;
}

/* The staging directory's record of what made it: its ABI and its object. */
static int pin_staging_sign(const char *dir, const char *object)
{
	char path[PATH_MAX], abi[16];

	snprintf(path, sizeof(path), "%s/%s", dir, PIN_ABI_NAME);
	snprintf(abi, sizeof(abi), "%d", NODEFD_ABI_VERSION);
	if (symlink(abi, path))
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", dir, PIN_OBJECT_NAME);
	return symlink(object, path) ? -errno : 0;
}

/*
 * Records the ABI and the object, and moves the staging directory into place: -EEXIST if
 * already loaded.
 */
int pin_staging_publish(const char *dir, const char *object)
{
	int err;

	err = pin_staging_sign(dir, object);
	if (err)
		return err;
	if (renameat2(AT_FDCWD, dir, AT_FDCWD, PIN_DIR, RENAME_NOREPLACE)) {
		err = -errno;
		return err == -ENOTEMPTY ? -EEXIST : err;
	}
	return 0;
}

/*
 * As pin_staging_publish(), but in place of the pins there: the two directories swap in one
 * step (RENAME_EXCHANGE), and the old tree is then at @dir, for the caller to remove.
 */
int pin_staging_exchange(const char *dir, const char *object)
{
	int err;

	err = pin_staging_sign(dir, object);
	if (err)
		return err;
	return renameat2(AT_FDCWD, dir, AT_FDCWD, PIN_DIR, RENAME_EXCHANGE) ? -errno : 0;
}

/* The pins' object, as pin_staging_publish() recorded it: 0, or -errno (-ENOENT: none). */
int pin_object_read(char *buf, size_t size)
{
	ssize_t n;

	n = readlink(PIN_DIR "/" PIN_OBJECT_NAME, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * Whether the pinned programs judge anyone: the settings map's first word, which is
 * struct nodefd_config's enabled in every ABI (read whatever the value's size).
 * 0, or -errno.
 */
int pin_enabled_read(bool *enabled)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	void *val;
	int fd, err = 0;

	fd = bpf_obj_get(PIN_DIR "/settings");
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size < sizeof(__u32)) {
		err = -EINVAL;
		goto out;
	}
	val = calloc(1, info.value_size);
	if (!val) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, val))
		err = -errno;
	else
		*enabled = *(__u32 *)val != 0;
	free(val);
out:
	close(fd);
	return err;
}

/* Sums each of the NODEFD_CNT_NR per-CPU counters over the possible CPUs. */
int counters_read(int map_fd, __u64 *sums)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *vals;
	__u32 i;
	int err = 0;

	if (ncpus < 0)
		return ncpus;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (i = 0; i < NODEFD_CNT_NR; i++) {
		sums[i] = 0;
		if (bpf_map_lookup_elem(map_fd, &i, vals)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < ncpus; c++)
			sums[i] += vals[c];
	}
	free(vals);
	return err;
}

/*
 * What every verb that uses the pins checks first: nodefd is loaded, and by
 * a nodefdctl of this ABI.  0, or -errno having said why.
 */
int pin_require(const char *verb)
{
	int err, abi;

	err = pin_state();
	if (err < 0) {
		p_err("%s: %s: %s", verb, PIN_DIR, errstr(err));
		return err;
	}
	if (!err) {
		p_err("%s: not loaded (no %s); 'nodefdctl load' or 'nodefdctl daemon' first", verb,
		      PIN_DIR);
		return -ENOENT;
	}
	err = pin_abi_read(&abi);
	if (err == -ENOENT) {
		p_err("%s: %s/%s: missing: these pins were not made by nodefdctl, or by a load that broke off; 'nodefdctl unload' and load again",
		      verb, PIN_DIR, PIN_ABI_NAME);
		return -EPROTO;
	}
	if (err) {
		p_err("%s: %s/%s: %s", verb, PIN_DIR, PIN_ABI_NAME,
		      err == -EINVAL ? "not an ABI version number" : errstr(err));
		return -EPROTO;
	}
	if (abi != NODEFD_ABI_VERSION) {
		p_err("%s: %s was made for abi %d, this nodefdctl reads abi %d: nothing touched; 'nodefdctl daemon' replaces them without a gap (or 'nodefdctl unload' and load again)",
		      verb, PIN_DIR, abi, NODEFD_ABI_VERSION);
		return -EPROTO;
	}
	return 0;
}

int settings_read(int fd, struct nodefd_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(fd, &zero, cfg) ? -errno : 0;
}

int settings_write(int fd, const struct nodefd_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, cfg, BPF_ANY) ? -errno : 0;
}

/* The id of the map pinned as @name, or 0. */
__u32 pin_map_id(const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", PIN_DIR, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

__u32 map_id_of_fd(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}
