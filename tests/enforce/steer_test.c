// SPDX-License-Identifier: GPL-2.0
/* enforce tests - nobody can aim nodefd at a process that looks through its links */

/*
 * A holder controls what its links show and when: it can dup2() another directory onto an
 * fd, or fchdir() somewhere deep, while another process walks through /proc/HOLDER/fd/N or
 * /proc/HOLDER/cwd. Whatever it does, a walker that could take those fds anyway
 * (pidfd_getfd(): root, or any process when Yama allows it) must be neither refused nor
 * killed, chrooted or not. A walker that could not take them gets what its own name gives:
 * the holder's fd lends it no access (Yama's relational scope, a sibling of the same user).
 * And a process's own directory fd gives fstat()'s answer through /proc/self/fd.
 */

#include "common.h"

#include <sched.h>
#include <signal.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#define STEER_FD 100
#define STEER_SECONDS 2
#define STEER_DEEP 4200		/* deeper than nodefd's ancestor walk goes */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

struct steer {
	char tree[sizeof(ENF_TREE_TEMPLATE)];
	pid_t holder;
	int stop;
	long swaps;
	long looks;
	long refused;		/* EACCES */
	long other_errors;
	int other_errno;
	int err;		/* the single-shot cases: errno, 0 on success */
	int err2;
};

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

FIXTURE(steer)
{
	struct enf_tree tree;
	struct steer *s;
	int old_scope;
};

FIXTURE_SETUP(steer)
{
	ENF_ASSERT_EXPECTATION();
	self->old_scope = -1;
	enf_tree_make(_metadata, &self->tree);
	self->s = enf_shared(sizeof(*self->s));
	ASSERT_NE(NULL, self->s);
	strcpy(self->s->tree, self->tree.path);
}

FIXTURE_TEARDOWN(steer)
{
	if (self->old_scope >= 0)
		enf_ptrace_scope_set(self->old_scope);
	enf_deep_remove(ENF_AT(&self->tree, "deep"));
	enf_tree_remove(&self->tree);
	if (self->s)
		munmap(self->s, sizeof(*self->s));
}

/*
 * The holder (nobody): swaps jail/in and out onto its fd STEER_FD, and its cwd between
 * shallow and STEER_DEEP levels down, as fast as it can, until told to stop.
 */
static int swapper(struct enf_agent *agent, void *arg)
{
	struct steer *s = arg;
	int in, out, shallow, deep, next;

	in = open(enf_fmt("%s/jail/in", s->tree), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	out = open(enf_fmt("%s/out", s->tree), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	shallow = open(enf_fmt("%s/deep", s->tree), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	deep = dup(shallow);
	if (in < 0 || out < 0 || deep < 0)
		return ENF_SETUP_FAILED;
	for (int i = 0; i < STEER_DEEP; i++) {
		if (mkdirat(deep, "d", 0755))
			return ENF_SETUP_FAILED;
		next = openat(deep, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(deep);
		deep = next;
		if (deep < 0)
			return ENF_SETUP_FAILED;
	}
	if (dup2(in, STEER_FD) != STEER_FD || fchdir(shallow))
		return ENF_SETUP_FAILED;
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	while (!load(&s->stop)) {
		if (dup2(out, STEER_FD) < 0 || fchdir(deep) || dup2(in, STEER_FD) < 0 ||
		    fchdir(shallow))
			return ENF_SETUP_FAILED;
		s->swaps++;
	}
	return 0;
}

static void tally(struct steer *s, int ret)
{
	if (!ret)
		return;
	if (errno == EACCES) {
		s->refused++;
	} else {
		s->other_errors++;
		s->other_errno = errno;
	}
}

/*
 * Root, chrooted into jail/ (every capability kept, so it could take the holder's fds), looks
 * through both links as lsof and fuser do, with /proc opened before the chroot.
 */
static int chrooted_root_looks(struct enf_agent *agent, void *arg)
{
	struct steer *s = arg;
	char fd_link[32], cwd_link[32];
	struct timespec t0, t;
	struct stat st;
	int proc, fd;

	(void)agent;
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0 || chroot(enf_fmt("%s/jail", s->tree)) || chdir("/"))
		return ENF_SETUP_FAILED;
	snprintf(fd_link, sizeof(fd_link), "%d/fd/%d", s->holder, STEER_FD);
	snprintf(cwd_link, sizeof(cwd_link), "%d/cwd", s->holder);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		tally(s, fstatat(proc, fd_link, &st, 0));
		tally(s, fstatat(proc, cwd_link, &st, 0));
		fd = openat(proc, fd_link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		tally(s, fd < 0);
		if (fd >= 0)
			close(fd);
		fd = openat(proc, cwd_link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		tally(s, fd < 0);
		if (fd >= 0)
			close(fd);
		s->looks += 4;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < STEER_SECONDS);
	return 0;
}

TEST_F_TIMEOUT(steer, chrooted_root_never_refused_nor_killed_by_a_holder, STEER_SECONDS + 120)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct steer *s = self->s;
	int status;

	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail/in"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "out"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "deep"), 0755, ENF_NOBODY, ENF_NOBODY);
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, swapper, s));
	ASSERT_TRUE(enf_agent_wait(&agent));
	s->holder = agent.pid;
	enf_agent_resume(&agent);
	/* A kill ends root's helper by SIGKILL: enf_run_as() is 128 + 9 then. */
	status = enf_run_as(&ENF_ROOT, chrooted_root_looks, s);
	__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, enf_agent_join(&agent));
	TH_LOG("%ld looks against %ld swaps: %ld refused, %ld other errors, helper status %d",
	       s->looks, s->swaps, s->refused, s->other_errors, status);
	EXPECT_EQ(0, status);
	EXPECT_LT(0, s->swaps);
	EXPECT_EQ(0, s->refused);
	EXPECT_EQ(0, s->other_errors)
	{
		TH_LOG("last unexpected error: %s", strerror(s->other_errno));
	}
}

/*
 * The holder (nobody) opens victim read-write while open/ is still open to it; the owner then
 * closes open/ (0700).
 */
static int rw_holder(struct enf_agent *agent, void *arg)
{
	struct steer *s = arg;
	int fd = open(enf_fmt("%s/open/victim", s->tree), O_RDWR | O_CLOEXEC);

	if (fd < 0 || dup2(fd, STEER_FD) != STEER_FD)
		return ENF_SETUP_FAILED;
	while (!load(&s->stop))
		if (enf_agent_sync(agent))
			break;
	return 0;
}

/* A sibling of the same user: pidfd_getfd() of the holder's fd, then a reopen for writing. */
static int sibling_reopens(struct enf_agent *agent, void *arg)
{
	struct steer *s = arg;
	int pidfd, fd;

	(void)agent;
	pidfd = (int)syscall(SYS_pidfd_open, s->holder, 0);
	if (pidfd < 0)
		return ENF_SETUP_FAILED;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, STEER_FD, 0);
	s->err2 = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	close(pidfd);
	fd = open(enf_fmt("/proc/%d/fd/%d", s->holder, STEER_FD), O_RDWR | O_CLOEXEC);
	s->err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

/* Whose access counts: the holder's fd, only for a walker that could take it. */
static void whose_access(struct __test_metadata *const _metadata,
			 FIXTURE_DATA(steer) *self, int scope)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct steer *s = self->s;

	self->old_scope = enf_ptrace_scope_set(scope);
	if (self->old_scope < 0)
		SKIP(return, "no Yama (" ENF_PTRACE_SCOPE ")");
	enf_mkdir(_metadata, ENF_AT(&self->tree, "open"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "open/victim"), 0666, ENF_OWNER, ENF_ORIGINAL);
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, rw_holder, s));
	ASSERT_TRUE(enf_agent_wait(&agent));
	s->holder = agent.pid;
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "open"), 0700));
	s->err = s->err2 = -1;
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, sibling_reopens, s));
	__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
	enf_agent_resume(&agent);
	EXPECT_EQ(0, enf_agent_join(&agent));
	TH_LOG("ptrace_scope %d: pidfd_getfd: %s; reopen for writing: %s", scope,
	       s->err2 ? strerror(s->err2) : "taken", s->err ? strerror(s->err) : "allowed");
	/* The premise: Yama decides whether the sibling could take the fd. */
	if (scope) {
		ASSERT_EQ(EPERM, s->err2);
	} else {
		ASSERT_EQ(0, s->err2);
	}
	if (scope && enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, s->err);
	} else {
		EXPECT_EQ(0, s->err);
	}
}

TEST_F(steer, sibling_that_cannot_take_the_fd_gets_no_write)
{
	whose_access(_metadata, self, 1);
}

TEST_F(steer, sibling_that_could_take_the_fd_reopens_it)
{
	whose_access(_metadata, self, 0);
}

/*
 * nobody's own directory fd, opened while its parent was open: after the owner closes the
 * parent, stat() through /proc/self/fd/N is fstat() of the fd (allowed); chdir() through it
 * goes on below a directory nobody cannot name now (refused with nodefd, as CVE-2024-21626's
 * chdir was).
 */
static int own_dir_fd(struct enf_agent *agent, void *arg)
{
	struct steer *s = arg;
	char link[32];
	struct stat st;
	int fd = open(enf_fmt("%s/open/d", s->tree), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	s->err = stat(link, &st) ? errno : 0;
	s->err2 = chdir(link) ? errno : 0;
	return 0;
}

TEST_F(steer, own_dir_fd_stat_is_fstat)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct steer *s = self->s;

	enf_mkdir(_metadata, ENF_AT(&self->tree, "open"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "open/d"), 0755, ENF_OWNER, ENF_OWNER);
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, own_dir_fd, s));
	ASSERT_TRUE(enf_agent_wait(&agent));
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "open"), 0700));
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	TH_LOG("stat: %s; chdir: %s", s->err ? strerror(s->err) : "allowed",
	       s->err2 ? strerror(s->err2) : "allowed");
	EXPECT_EQ(0, s->err);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, s->err2);
	} else {
		EXPECT_EQ(0, s->err2);
	}
}

/*
 * Reach by what the opener's root shows: root chroots into a bind mount of / that is not
 * recursive, in the initial mount namespace. Its root is PID 1's directory, on another mount,
 * which shows none of the mounts below: a file on the ext4 scratch disk, opened read-only
 * before, has no name there. Reopening it for writing through the link must be refused. A file
 * on the root's own filesystem, which the bind shows, is reopened as before.
 */
#define EXT4_MOUNT "/mnt/ext4"

struct bind_root {
	char bind[PATH_MAX];
	char file[PATH_MAX];
	char shown[PATH_MAX];	/* on / itself */
	int err;
	int shown_err;
};

static int bind_root_reopen(struct enf_agent *agent, void *arg)
{
	struct bind_root *b = arg;
	int proc, fd, nfd;

	(void)agent;
	int shown;

	fd = open(b->file, O_RDONLY | O_CLOEXEC);
	shown = open(b->shown, O_RDONLY | O_CLOEXEC);
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || shown < 0 || proc < 0 || chroot(b->bind) || chdir("/"))
		return ENF_SETUP_FAILED;
	if (!access(b->file, F_OK) || access(b->shown, F_OK))
		return ENF_SETUP_FAILED;	/* not the mounts the test is about */
	nfd = openat(proc, enf_fmt("self/fd/%d", fd), O_RDWR | O_CLOEXEC);
	b->err = nfd < 0 ? errno : 0;
	nfd = openat(proc, enf_fmt("self/fd/%d", shown), O_RDWR | O_CLOEXEC);
	b->shown_err = nfd < 0 ? errno : 0;
	return 0;
}

TEST_F(steer, chroot_into_a_bind_of_root_reaches_no_mount_below)
{
	struct bind_root *b = enf_shared(sizeof(*b));
	struct statfs sfs;
	int status;

	ASSERT_NE(NULL, b);
	if (statfs(EXT4_MOUNT, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC)
		SKIP(return, "no ext4 filesystem on " EXT4_MOUNT);
	snprintf(b->bind, sizeof(b->bind), "%s/bind", self->tree.path);
	snprintf(b->file, sizeof(b->file), "%s/steer.%d", EXT4_MOUNT, getpid());
	snprintf(b->shown, sizeof(b->shown), "/steer.%d", getpid());
	enf_mkdir(_metadata, b->bind, 0755, 0, 0);
	enf_mkfile(_metadata, b->file, 0644, 0, ENF_ORIGINAL);
	enf_mkfile(_metadata, b->shown, 0644, 0, ENF_ORIGINAL);
	ASSERT_EQ(0, mount("/", b->bind, NULL, MS_BIND, NULL));
	b->err = -1;
	status = enf_run_as(&ENF_ROOT, bind_root_reopen, b);
	umount2(b->bind, MNT_DETACH);
	unlink(b->shown);
	TH_LOG("reopen for writing from a chroot into a bind of /: %s; of a file it shows: %s",
	       b->err ? strerror(b->err) : "opened", b->shown_err ? strerror(b->shown_err) : "opened");
	ASSERT_EQ(0, status);
	EXPECT_EQ(0, b->shown_err);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, b->err);
	} else {
		EXPECT_EQ(0, b->err);
	}
	unlink(b->file);
	munmap(b, sizeof(*b));
}

TEST_HARNESS_MAIN
