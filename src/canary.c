// SPDX-License-Identifier: GPL-2.0
/* canary.c - proves that the attached programs run: a reopen nodefd must refuse */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"

/*
 * Attaching proves nothing: with bpf missing from the active LSMs, or a
 * hook the kernel never calls, the programs attach and never run.  So the
 * loader does what the article's attack does, on a file of its own: it
 * opens the file read-only and reopens it read-write through
 * /proc/self/fd/N.  The settings map names this process as the canary, for
 * which every rule is enforced whatever the policy and the fd's access is
 * a ceiling (it could open its own file by name), so the reopen must
 * fail with EACCES, and nodefd must report it in the events ring buffer;
 * reading the event back also leaves the buffer empty for the first
 * reader of `nodefdctl events`.
 */

struct canary_seen {
	pid_t pid;
	int fd;
	bool found;
};

static int canary_event(void *ctx, void *data, size_t size)
{
	const struct nodefd_event *ev = data;
	struct canary_seen *seen = ctx;

	if (size < sizeof(*ev))
		return 0;
	if (ev->pid == (__u32)seen->pid && ev->holder_fd == seen->fd &&
	    ev->kind == NODEFD_KIND_FD && ev->rule == NODEFD_RULE_UPGRADE &&
	    ev->action == NODEFD_MODE_ENFORCE)
		seen->found = true;
	return 0;
}

static int canary_dir(char *dir, size_t size)
{
	static const char *const bases[] = { "/tmp", "/run" };
	int err = -ENOENT;

	for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
		snprintf(dir, size, "%s/nodefd-canary.XXXXXX", bases[i]);
		if (mkdtemp(dir))
			return 0;
		err = -errno;
	}
	return err;
}

/* 0 if nodefd refused the reopen; else -errno and why, in words. */
int canary_run(int events_fd, bool read_event, char *why, size_t size)
{
	struct canary_seen seen = { .pid = getpid() };
	char dir[64], file[96], link[64];
	struct ring_buffer *rb;
	int fd, rfd, err;

	err = canary_dir(dir, sizeof(dir));
	if (err) {
		snprintf(why, size, "cannot make a private directory in /tmp or /run: %s",
			 errstr(err));
		return err;
	}
	snprintf(file, sizeof(file), "%s/canary", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		snprintf(why, size, "cannot create %s: %s", file, errstr(err));
		goto out_rmdir;
	}
	close(fd);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, size, "cannot open %s: %s", file, errstr(err));
		goto out_unlink;
	}

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDWR | O_CLOEXEC);
	if (rfd >= 0) {
		close(rfd);
		err = -EPROTO;
		snprintf(why, size,
			 "canary reopen was not refused: %s (read-only) opened read-write", link);
		goto out_close;
	}
	if (errno != EACCES) {
		err = -errno;
		snprintf(why, size, "canary reopen of %s failed with '%s', not 'permission denied'",
			 link, errstr(err));
		goto out_close;
	}

	/*
	 * Beside other programs' events (a replacement: the new programs judge everyone by
	 * now), reading the ring buffer would take theirs too: the event is left to the
	 * daemon, which reads everything.
	 */
	if (!read_event) {
		err = 0;
		goto out_close;
	}
	seen.fd = fd;
	rb = ring_buffer__new(events_fd, canary_event, &seen, NULL);
	if (!rb) {
		err = -errno;
		snprintf(why, size, "cannot read the events ring buffer: %s", errstr(err));
		goto out_close;
	}
	err = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (err < 0) {
		snprintf(why, size, "cannot read the events ring buffer: %s", errstr(err));
		goto out_close;
	}
	err = 0;
	if (!seen.found) {
		err = -EPROTO;
		snprintf(why, size,
			 "canary reopen was refused, but nodefd reported no event for it (another LSM refused it?)");
	}

out_close:
	close(fd);
out_unlink:
	unlink(file);
out_rmdir:
	rmdir(dir);
	return err;
}
