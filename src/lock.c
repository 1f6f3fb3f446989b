// SPDX-License-Identifier: GPL-2.0
/* lock.c - /run/nodefd: one writer of the maps at a time, one daemon at a time */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "nodefdctl.h"

/*
 * Two locks, both open file description locks on files in /run/nodefd (so
 * that they go with the process, whatever kills it, and a reader can ask
 * who holds one without taking it):
 *
 *   lock        held while a command reads, changes and writes back a map
 *               (policy set and unset, enable and disable, the daemon's
 *               policy reloads and its note of the drops it reported);
 *               without it two of them would each swap in a copy that lacks
 *               the other's change.
 *   daemon.pid  held by the daemon for as long as it runs; it holds its pid.
 */

#define LOCK_WAIT_MS 10000

static int run_dir_check(const char *verb)
{
	struct stat st;
	int err;

	if (mkdir(RUN_DIR, 0755) && errno != EEXIST) {
		err = -errno;
		p_err("%s: cannot create %s: %s", verb, RUN_DIR, errstr(err));
		return err;
	}
	if (lstat(RUN_DIR, &st)) {
		err = -errno;
		p_err("%s: %s: %s", verb, RUN_DIR, errstr(err));
		return err;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022)) {
		p_err("%s: %s: not a directory owned by root and writable by root only: refusing to lock there",
		      verb, RUN_DIR);
		return -EPERM;
	}
	return 0;
}

static int lock_file_open(const char *verb, const char *path)
{
	int fd, err;

	err = run_dir_check(verb);
	if (err)
		return err;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		p_err("%s: %s: %s", verb, path, errstr(err));
		return err;
	}
	return fd;
}

static int lock_try(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	return fcntl(fd, F_OFD_SETLK, &fl) ? -errno : 0;
}

int lock_maps(const char *verb)
{
	struct timespec pause = { .tv_nsec = 50 * 1000000 };
	int fd, err;

	fd = lock_file_open(verb, LOCK_MAPS_PATH);
	if (fd < 0)
		return fd;
	for (int waited = 0;; waited += 50) {
		err = lock_try(fd);
		if (!err)
			return fd;
		if ((err != -EAGAIN && err != -EACCES) || waited >= LOCK_WAIT_MS)
			break;
		nanosleep(&pause, NULL);
	}
	if (err == -EAGAIN || err == -EACCES)
		p_err("%s: %s: another nodefdctl has been changing the maps for %d s; nothing changed",
		      verb, LOCK_MAPS_PATH, LOCK_WAIT_MS / 1000);
	else
		p_err("%s: cannot lock %s: %s", verb, LOCK_MAPS_PATH, errstr(err));
	close(fd);
	return err == -EACCES ? -EAGAIN : err;
}

void lock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}

static pid_t pid_read(int fd)
{
	char buf[32] = "", *end;
	ssize_t n;
	long pid;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	if (end == buf || (*end && *end != '\n') || pid <= 0 || pid > 0x7fffffff)
		return -1;
	return (pid_t)pid;
}

int lock_daemon(const char *verb)
{
	char buf[32];
	pid_t pid;
	int fd, err, len;

	fd = lock_file_open(verb, LOCK_DAEMON_PATH);
	if (fd < 0)
		return fd;
	err = lock_try(fd);
	if (err == -EAGAIN || err == -EACCES) {
		pid = pid_read(fd);
		if (pid > 0)
			p_err("%s: already running as pid %d (%s is locked); one daemon at a time",
			      verb, pid, LOCK_DAEMON_PATH);
		else
			p_err("%s: already running (%s is locked); one daemon at a time", verb,
			      LOCK_DAEMON_PATH);
		close(fd);
		return -EBUSY;
	}
	if (err) {
		p_err("%s: cannot lock %s: %s", verb, LOCK_DAEMON_PATH, errstr(err));
		close(fd);
		return err;
	}
	len = snprintf(buf, sizeof(buf), "%d\n", getpid());
	if (len < 0 || ftruncate(fd, 0) || pwrite(fd, buf, (size_t)len, 0) != len)
		p_warn("%s: cannot write the pid into %s: %s", verb, LOCK_DAEMON_PATH,
		       errstr(errno));
	return fd;
}

pid_t lock_daemon_pid(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	pid_t pid;
	int fd;

	fd = open(LOCK_DAEMON_PATH, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fcntl(fd, F_OFD_GETLK, &fl) || fl.l_type == F_UNLCK) {
		close(fd);
		return 0;
	}
	pid = pid_read(fd);
	close(fd);
	return pid > 0 ? pid : -1;
}
