// SPDX-License-Identifier: GPL-2.0
/* reopen-probe.c - the article's reopen, on demand, from a cgroup of the CLI tests' choosing */

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

/*
 * reopen-probe [-n COUNT] [-P] [-u UID] FILE [STEP]...
 *
 * Opens FILE read-only (-P: O_PATH) and then runs the steps in order (none:
 * one "try"):
 *   try          reopen /proc/self/fd/N read-write (-P: read-only), COUNT times;
 *                print the outcome
 *   move:DIR     move this process into cgroup DIR (its pid into DIR/cgroup.procs)
 *   touch:PATH   create PATH, to tell the test a point was reached
 *   wait:PATH    wait (20 s at most) until PATH exists, for the test to act
 *
 * With -u UID each try runs with effective uid and gid UID (the real ones
 * and the saved ones stay 0, so that moves between tries still work): the
 * reopen is then judged as UID's, who may hold the fd but not be able to
 * open FILE by name (a directory on the way it cannot search).
 *
 * Each try prints "try cgroup_id=ID cgroup=PATH ok=N eacces=N other=N" with the
 * cgroup the process is in at the time. The write is never done: the reopen
 * alone is what nodefd judges. With FILE writable by all (so that the kernel's
 * own check of the reopen passes) in a directory UID cannot search, only
 * nodefd can refuse the reopen: UID could not open FILE by name.
 *
 * Exit status: of the last try, 0 if every reopen was allowed, 1 if every
 * one was refused with EACCES, 2 if mixed; 3 if anything else went wrong.
 */

#define WAIT_SECONDS 20

static int fail(const char *what, const char *arg)
{
	fprintf(stderr, "reopen-probe: %s %s: %s\n", what, arg, strerror(errno));
	return 3;
}

static int cgroup_now(char *path, size_t size, unsigned long long *id)
{
	char line[4096], full[4200];
	struct stat st;
	FILE *f;

	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -1;
	path[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, size, "%s", line + 3);
	}
	fclose(f);
	snprintf(full, sizeof(full), "/sys/fs/cgroup%s", path);
	if (stat(full, &st))
		return -1;
	*id = st.st_ino;
	return 0;
}

static bool path_mode;
static long try_uid = -1;

/* The effective ids for a try: UID's (to_user) or root's again. */
static int try_as(bool to_user)
{
	if (try_uid < 0)
		return 0;
	if (to_user)
		return setegid((gid_t)try_uid) || seteuid((uid_t)try_uid) ? -1 : 0;
	return seteuid(0) || setegid(0) ? -1 : 0;
}

static int step_try(int fd, unsigned long count)
{
	unsigned long ok = 0, eacces = 0, other = 0;
	unsigned long long id = 0;
	char link[64], cg[4096];
	int rfd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (try_as(true))
		return fail("cannot become uid", "-u");
	for (unsigned long i = 0; i < count; i++) {
		rfd = open(link, (path_mode ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		if (rfd >= 0) {
			ok++;
			close(rfd);
		} else if (errno == EACCES) {
			eacces++;
		} else {
			other++;
			if (other == 1)
				fprintf(stderr, "reopen-probe: %s: %s\n", link, strerror(errno));
		}
	}
	if (try_as(false))
		return fail("cannot become root again after", "-u");
	if (cgroup_now(cg, sizeof(cg), &id))
		snprintf(cg, sizeof(cg), "?");
	printf("try cgroup_id=%llu cgroup=%s ok=%lu eacces=%lu other=%lu\n", id, cg, ok, eacces,
	       other);
	fflush(stdout);
	if (other)
		return 3;
	return !eacces ? 0 : !ok ? 1 : 2;
}

static int step_move(const char *dir)
{
	char path[4200], pid[32];
	int fd, len;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("cannot open", path);
	len = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, len) != len) {
		close(fd);
		return fail("cannot write to", path);
	}
	close(fd);
	return 0;
}

static int step_wait(const char *path)
{
	struct timespec pause = { .tv_nsec = 20 * 1000000 };

	for (int i = 0; i < WAIT_SECONDS * 50; i++) {
		if (!access(path, F_OK))
			return 0;
		nanosleep(&pause, NULL);
	}
	errno = ETIMEDOUT;
	return fail("gave up waiting for", path);
}

int main(int argc, char **argv)
{
	unsigned long count = 1;
	int fd, opt, ret = 3, i;
	char *end;

	while ((opt = getopt(argc, argv, "+n:Pu:")) >= 0) {
		if (opt == 'P') {
			path_mode = true;
			continue;
		}
		if (opt == 'u') {
			try_uid = strtol(optarg, &end, 10);
			if (*end || try_uid < 1 || try_uid > 65534) {
				fprintf(stderr, "reopen-probe: -u %s: not a uid\n", optarg);
				return 3;
			}
			continue;
		}
		if (opt != 'n')
			return 3;
		count = strtoul(optarg, &end, 10);
		if (*end || !count) {
			fprintf(stderr, "reopen-probe: -n %s: not a count\n", optarg);
			return 3;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: reopen-probe [-n COUNT] [-P] [-u UID] FILE [try|move:DIR|touch:PATH|wait:PATH]...\n");
		return 3;
	}
	fd = open(argv[optind], (path_mode ? O_PATH : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return fail("cannot open", argv[optind]);
	printf("pid=%d\n", getpid());
	fflush(stdout);
	if (optind + 1 == argc)
		return step_try(fd, count);
	for (i = optind + 1; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "try")) {
			ret = step_try(fd, count);
			if (ret == 3)
				return 3;
		} else if (!strncmp(s, "move:", 5)) {
			if (step_move(s + 5))
				return 3;
		} else if (!strncmp(s, "touch:", 6)) {
			int t = open(s + 6, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			if (t < 0)
				return fail("cannot create", s + 6);
			close(t);
		} else if (!strncmp(s, "wait:", 5)) {
			if (step_wait(s + 5))
				return 3;
		} else {
			fprintf(stderr, "reopen-probe: unknown step '%s'\n", s);
			return 3;
		}
	}
	return ret;
}
