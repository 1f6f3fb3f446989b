/* SPDX-License-Identifier: GPL-2.0 */
/* enforce tests - trees, identities, helper processes and file checks shared by the suites */

#ifndef ENFORCE_TESTS_COMMON_H
#define ENFORCE_TESTS_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "onode.h"
#include "kselftest_harness.h"

#ifndef __NR_openat2
#define __NR_openat2 437
#endif

/*
 * The cast of every scenario: the owner of the data, the attacker (nobody, in nobody's group
 * only) and a group that only the supplementary-group variants hold.
 */
#define ENF_OWNER 1000
#define ENF_NOBODY 65534
#define ENF_GROUP 4242

/*
 * What every victim file holds, and what an attack that worked writes over it. The payload is
 * longer, so a write at offset 0 leaves exactly the payload: no mix of the two can pass for
 * either.
 */
#define ENF_ORIGINAL "the owner's data, as the owner left it\n"
#define ENF_PAYLOAD "overwritten through a proc magic link by someone who had no right to\n"

#define ENF_TREE_TEMPLATE "/tmp/enforce.XXXXXX"

/* A helper that could not even set up its scenario exits with this, and says why on stderr. */
#define ENF_SETUP_FAILED 99

/* Seconds a helper process gets at any one step before the test gives up on it. */
#define ENF_STEP_TIMEOUT 20

/*
 * NODEFD_EXPECT says what the attacks must do: "hole" without nodefd (the attack works, which
 * proves the test reproduces the hole) and "refused" with it loaded.
 */
enum enf_expect {
	ENF_EXPECT_UNSET,
	ENF_EXPECT_HOLE,
	ENF_EXPECT_REFUSED,
};

static inline enum enf_expect enf_expectation(void)
{
	const char *e = getenv("NODEFD_EXPECT");

	if (e && !strcmp(e, "hole"))
		return ENF_EXPECT_HOLE;
	if (e && !strcmp(e, "refused"))
		return ENF_EXPECT_REFUSED;
	return ENF_EXPECT_UNSET;
}

/*
 * NODEFD_JUMP says how the loaded programs judge a magic link's jump (`nodefdctl status`):
 * "hook", in the kernel's LSM hook at the jump, which refuses the jump itself; "guard" (stock
 * kernels), by tracing it and refusing what the system call then does.
 */
static inline bool enf_jump_hook(void)
{
	const char *e = getenv("NODEFD_JUMP");

	return e && !strcmp(e, "hook");
}

/* Fails the test (not the run) when NODEFD_EXPECT is missing, so that every case reports it. */
#define ENF_ASSERT_EXPECTATION()                                                                  \
	ASSERT_NE(ENF_EXPECT_UNSET, enf_expectation())                                            \
	{                                                                                         \
		TH_LOG("NODEFD_EXPECT must be \"hole\" (nodefd not loaded) or \"refused\" "       \
		       "(loaded), not \"%s\"",                                                    \
		       getenv("NODEFD_EXPECT") ?: "(unset)");                                     \
	}

static inline int enf_openat2(int dirfd, const char *path, __u64 flags)
{
	struct open_how how = { .flags = flags };

	return syscall(__NR_openat2, dirfd, path, &how, sizeof(how));
}

/* Stock kernels refuse the unknown flag in openat2(2), which checks all its flags. */
static inline bool enf_kernel_has_onode(void)
{
	int fd = enf_openat2(AT_FDCWD, "/", O_NODE | O_NOACCESS | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

#ifndef O_EMPTYPATH
#define O_EMPTYPATH (1 << 26)	/* include/uapi/asm-generic/fcntl.h, 7.2 */
#endif

/* Does this kernel take O_EMPTYPATH? openat(2) before 7.2 drops the bit; "" then fails. */
static inline bool enf_kernel_has_emptypath(void)
{
	int fd = open("/", O_PATH | O_CLOEXEC), re;

	if (fd < 0)
		return false;
	re = openat(fd, "", O_EMPTYPATH | O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(fd);
	if (re < 0)
		return false;
	close(re);
	return true;
}

/*
 * Paths below a tree, from a ring of 8 buffers so that a few can be used in one call: a result
 * kept across more calls than that must be copied. A path that does not fit aborts: a cut path
 * would test something else.
 */
static inline const char *enf_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline const char *enf_fmt(const char *fmt, ...)
{
	static char ring[8][PATH_MAX];
	static unsigned int next;
	char *buf = ring[next++ % 8];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		abort();
	return buf;
}

struct enf_tree {
	char path[sizeof(ENF_TREE_TEMPLATE)];
};

#define ENF_AT(tree, rel) enf_fmt("%s/%s", (tree)->path, (rel))

static inline void enf_tree_make(struct __test_metadata *const _metadata, struct enf_tree *tree)
{
	ASSERT_EQ(0, geteuid())
	{
		TH_LOG("the enforce tests run as root: they build trees for other users");
	}
	strcpy(tree->path, ENF_TREE_TEMPLATE);
	ASSERT_NE(NULL, mkdtemp(tree->path))
	{
		TH_LOG("mkdtemp(%s): %s", ENF_TREE_TEMPLATE, strerror(errno));
	}
	/* mkdtemp() makes it 0700: everyone must be able to reach what is below. */
	ASSERT_EQ(0, chmod(tree->path, 0755));
}

static int enf_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

static inline void enf_tree_remove(struct enf_tree *tree)
{
	if (tree->path[0])
		nftw(tree->path, enf_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* mkdir @path with @mode, owned by @uid and group @gid. */
static inline void enf_mkdir(struct __test_metadata *const _metadata, const char *path,
			     mode_t mode, uid_t uid, gid_t gid)
{
	ASSERT_EQ(0, mkdir(path, 0700))
	{
		TH_LOG("mkdir(%s): %s", path, strerror(errno));
	}
	ASSERT_EQ(0, chown(path, uid, gid));
	/* After chown(), which would clear set-id bits. */
	ASSERT_EQ(0, chmod(path, mode));
}

static inline int enf_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* A regular file at @path holding @content, with @mode, owned by @uid:@uid. */
static inline void enf_mkfile(struct __test_metadata *const _metadata, const char *path,
			      mode_t mode, uid_t uid, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	ASSERT_LE(0, fd)
	{
		TH_LOG("creat(%s): %s", path, strerror(errno));
	}
	ASSERT_EQ(0, enf_write_all(fd, content, strlen(content)));
	ASSERT_EQ(0, fchown(fd, uid, uid));
	ASSERT_EQ(0, fchmod(fd, mode));
	ASSERT_EQ(0, close(fd));
}

/* Reads up to @size - 1 bytes of @path as the caller, NUL-terminated; -errno on failure. */
static inline ssize_t enf_read_path(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);
	return len;
}

/* Expects @path to hold exactly @want (read as root: nothing hides it). */
#define ENF_EXPECT_CONTENT(path, want)                                                            \
	do {                                                                                      \
		char __buf[4096];                                                                 \
		ssize_t __n = enf_read_path((path), __buf, sizeof(__buf));                        \
		ASSERT_LE(0, __n)                                                                 \
		{                                                                                 \
			TH_LOG("reading back %s: %s", (path), strerror((int)-__n));               \
		}                                                                                 \
		EXPECT_STREQ((want), __buf)                                                       \
		{                                                                                 \
			TH_LOG("%s holds the wrong data", (path));                                \
		}                                                                                 \
	} while (0)

/* Compares two files byte for byte: 1 same, 0 different, -errno if one cannot be read. */
static inline int enf_same_files(const char *a, const char *b)
{
	char ba[4096], bb[4096];
	int fa, fb, ret = 1;

	fa = open(a, O_RDONLY | O_CLOEXEC);
	if (fa < 0)
		return -errno;
	fb = open(b, O_RDONLY | O_CLOEXEC);
	if (fb < 0) {
		ret = -errno;
		close(fa);
		return ret;
	}
	for (;;) {
		ssize_t na = read(fa, ba, sizeof(ba));
		ssize_t nb = na > 0 ? read(fb, bb, na) : read(fb, bb, sizeof(bb));

		if (na < 0 || nb < 0) {
			ret = -EIO;
			break;
		}
		if (na != nb || memcmp(ba, bb, na)) {
			ret = 0;
			break;
		}
		if (!na)
			break;
	}
	close(fa);
	close(fb);
	return ret;
}

/* Copies @from to @to with @mode: 0 or -errno. */
static inline int enf_copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (enf_write_all(out, buf, n)) {
			ret = -errno;
			break;
		}
	if (n < 0)
		ret = -errno;
	close(in);
	if (close(out) && !ret)
		ret = -errno;
	if (!ret && chmod(to, mode))
		ret = -errno;
	return ret;
}

/*
 * An identity for a helper process. uid 0 keeps root's credentials untouched; any other uid
 * drops to it with @gid and exactly @groups as the supplementary groups.
 */
struct enf_ident {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[64];
};

#define ENF_ROOT ((struct enf_ident){ .uid = 0, .gid = 0 })
#define ENF_AS_NOBODY ((struct enf_ident){ .uid = ENF_NOBODY, .gid = ENF_NOBODY })
#define ENF_AS_OWNER ((struct enf_ident){ .uid = ENF_OWNER, .gid = ENF_OWNER })

/* In a helper: become @id. 0 or -errno. */
static inline int enf_become(const struct enf_ident *id)
{
	if (!id->uid)
		return 0;
	if (setgroups(id->ngroups, id->groups) || setresgid(id->gid, id->gid, id->gid) ||
	    setresuid(id->uid, id->uid, id->uid))
		return -errno;
	/*
	 * A uid change makes the process undumpable, and /proc/<pid>/fd of an undumpable
	 * process is root's: another process of the same user could not follow it at all.
	 */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return -errno;
	return 0;
}

/* Messages from helper processes: TAP diagnostics, so that they never read as results. */
#define enf_say(fmt, ...) fprintf(stderr, "# helper %d: " fmt "\n", getpid(), ##__VA_ARGS__)

/*
 * A helper process: runs fn(agent, arg) under an identity and exits with its return value.
 * It may stop once (or more) with enf_agent_sync(), so that the test can change the world
 * (chmod a directory, kill a process) between the helper's steps.
 */
struct enf_agent {
	pid_t pid;
	int to_child;	/* test -> helper: "go on" */
	int from_child;	/* helper -> test: "waiting" */
};

typedef int (*enf_agent_fn)(struct enf_agent *agent, void *arg);

/* In the helper: tell the test we are waiting, and wait for it. 0, or -1 if the test is gone. */
static inline int enf_agent_sync(struct enf_agent *agent)
{
	char c = 's';

	if (write(agent->from_child, &c, 1) != 1)
		return -1;
	return read(agent->to_child, &c, 1) == 1 ? 0 : -1;
}

/* 0 on success, -errno if the helper could not be made. */
static inline int enf_agent_start(struct enf_agent *agent, const struct enf_ident *id,
				  enf_agent_fn fn, void *arg)
{
	int down[2], up[2];

	if (pipe2(down, O_CLOEXEC))
		return -errno;
	if (pipe2(up, O_CLOEXEC)) {
		close(down[0]);
		close(down[1]);
		return -errno;
	}
	fflush(stdout);
	fflush(stderr);
	agent->pid = fork();
	if (agent->pid < 0) {
		int err = -errno;

		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		return err;
	}
	if (!agent->pid) {
		int err;

		close(down[1]);
		close(up[0]);
		agent->to_child = down[0];
		agent->from_child = up[1];
		err = enf_become(id);
		if (err) {
			enf_say("cannot become uid %u: %s", id->uid, strerror(-err));
			_exit(ENF_SETUP_FAILED);
		}
		_exit(fn(agent, arg));
	}
	close(down[0]);
	close(up[1]);
	agent->to_child = down[1];
	agent->from_child = up[0];
	return 0;
}

/* In the test: wait until the helper stops in enf_agent_sync(). false if it ended instead. */
static inline bool enf_agent_wait(struct enf_agent *agent)
{
	char c;

	return read(agent->from_child, &c, 1) == 1;
}

static inline void enf_agent_resume(struct enf_agent *agent)
{
	char c = 'g';

	if (write(agent->to_child, &c, 1) != 1)
		return;	/* the helper is gone: enf_agent_join() will say how */
}

/* Waits for the helper: its exit status, 128 + signal if it was killed, -1 on error. */
static inline int enf_agent_join(struct enf_agent *agent)
{
	int status;

	close(agent->to_child);
	close(agent->from_child);
	while (waitpid(agent->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Runs fn(NULL-agent, arg) as @id to completion and returns its exit status. */
static inline int enf_run_as(const struct enf_ident *id, enf_agent_fn fn, void *arg)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };

	if (enf_agent_start(&agent, id, fn, arg))
		return -1;
	return enf_agent_join(&agent);
}

/* An agent function: the owner closes directory @arg (chmod 0700), as in the article. */
static inline int enf_close_dir(struct enf_agent *agent, void *arg)
{
	(void)agent;
	return chmod(arg, 0700) ? errno : 0;
}

#define ENF_PTRACE_SCOPE "/proc/sys/kernel/yama/ptrace_scope"

/*
 * Yama's ptrace_scope: writes @scope and returns the value it had, or -1 without Yama (or on
 * a write error, errno set). With scope 1, a process that is not an ancestor of another of its
 * user cannot take that one's fds (pidfd_getfd()); with 0 it can. nodefd counts what another
 * process's link shows as the walker's only when it could take it.
 */
static inline int enf_ptrace_scope_set(int scope)
{
	char buf[16];
	int fd, old;
	ssize_t n;

	fd = open(ENF_PTRACE_SCOPE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0) {
		close(fd);
		return -1;
	}
	buf[n] = '\0';
	old = atoi(buf);
	n = snprintf(buf, sizeof(buf), "%d\n", scope);
	if (pwrite(fd, buf, (size_t)n, 0) != n) {
		close(fd);
		return -1;
	}
	close(fd);
	return old;
}

/*
 * Removes a chain base/d/d/... of any depth from the top, a level a step: its paths are longer
 * than nftw() takes.
 */
static inline void enf_deep_remove(const char *base)
{
	int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (bfd < 0)
		return;
	while (!renameat(bfd, "d/d", bfd, "t") && !unlinkat(bfd, "d", AT_REMOVEDIR) &&
	       !renameat(bfd, "t", bfd, "d"))
		;
	unlinkat(bfd, "d", AT_REMOVEDIR);
	close(bfd);
}

/* Drops capability @cap from the caller's effective, permitted and inheritable sets. 0 or -errno. */
static inline int enf_drop_cap(unsigned int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	__u32 bit = 1U << (cap % 32);

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[cap / 32].effective &= ~bit;
	d[cap / 32].permitted &= ~bit;
	d[cap / 32].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* Memory that helpers and the test share across fork(). */
static inline void *enf_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * One open through a link and what came of it. A write access writes ENF_PAYLOAD at offset 0,
 * a read access reads what is there; either way the test then knows exactly what the open
 * could do.
 */
struct enf_attempt {
	int done;
	int open_err;		/* 0: opened, else errno */
	int io_err;		/* 0: the read or write worked, else errno */
	ssize_t io_len;
	char data[256];
};

static inline void enf_attempt_fd(struct enf_attempt *at, int fd, int flags)
{
	ssize_t n;

	at->done = 1;
	at->open_err = fd < 0 ? errno : 0;
	if (fd < 0)
		return;
	if ((flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR) {
		n = pwrite(fd, ENF_PAYLOAD, strlen(ENF_PAYLOAD), 0);
	} else if ((flags & O_ACCMODE) == O_RDONLY) {
		n = pread(fd, at->data, sizeof(at->data) - 1, 0);
		if (n >= 0)
			at->data[n] = '\0';
	} else {
		n = 0;
	}
	at->io_len = n;
	at->io_err = n < 0 ? errno : 0;
	close(fd);
}

static inline void enf_attempt(struct enf_attempt *at, const char *path, int flags)
{
	enf_attempt_fd(at, open(path, flags | O_CLOEXEC), flags);
}

/* NODEFD_STRICT=1: the tests run under a strict policy (the fd's access is a ceiling). */
static inline bool enf_strict(void)
{
	const char *e = getenv("NODEFD_STRICT");

	return e && !strcmp(e, "1");
}

/*
 * Asserts the outcome of an open of a file at @path that held @original: if @refused, it failed
 * with EACCES and the file is unchanged; else it worked and did what it asked for.
 */
#define ENF_EXPECT_OUTCOME(at, flags, path, original, refused)                                     \
	do {                                                                                       \
		const struct enf_attempt *__at = (at);                                             \
		const int __acc = (flags) & O_ACCMODE;                                             \
		ASSERT_TRUE(__at->done)                                                            \
		{                                                                                  \
			TH_LOG("the helper never got to the open");                                \
		}                                                                                  \
		if (refused) {                                                                     \
			ASSERT_EQ(EACCES, __at->open_err)                                          \
			{                                                                          \
				TH_LOG("open with flags %#o: want EACCES, got %s", (flags),         \
				       __at->open_err ? strerror(__at->open_err) : "success");     \
			}                                                                          \
			ENF_EXPECT_CONTENT((path), (original));                                    \
		} else {                                                                           \
			ASSERT_EQ(0, __at->open_err)                                               \
			{                                                                          \
				TH_LOG("open with flags %#o should have worked, got %s",           \
				       (flags), strerror(__at->open_err));                         \
			}                                                                          \
			ASSERT_EQ(0, __at->io_err)                                                 \
			{                                                                          \
				TH_LOG("i/o after the open: %s", strerror(__at->io_err));          \
			}                                                                          \
			if (__acc == O_WRONLY || __acc == O_RDWR) {                                \
				ENF_EXPECT_CONTENT((path), ENF_PAYLOAD);                           \
			} else if ((flags) & O_TRUNC) {                                            \
				ENF_EXPECT_CONTENT((path), "");                                    \
			} else {                                                                   \
				EXPECT_STREQ((original), __at->data);                              \
				ENF_EXPECT_CONTENT((path), (original));                            \
			}                                                                          \
		}                                                                                  \
	} while (0)

/*
 * An open that must not be possible with nodefd: under "hole" it works, under "refused" it fails
 * with EACCES and the file is unchanged.
 */
#define ENF_EXPECT_ATTACK(at, flags, path, original)                                               \
	ENF_EXPECT_OUTCOME(at, flags, path, original, enf_expectation() == ENF_EXPECT_REFUSED)

/*
 * An open beyond the original fd's access that the opener could make by name all the same:
 * nodefd lets it through (the link gives nothing the name does not), except under a strict
 * policy, where the fd's access is the ceiling.
 */
#define ENF_EXPECT_BY_NAME(at, flags, path, original)                                              \
	ENF_EXPECT_OUTCOME(at, flags, path, original,                                              \
			   enf_expectation() == ENF_EXPECT_REFUSED && enf_strict())

/*
 * Asserts that an open that must keep working did, whether nodefd is loaded or not, and that
 * the file then held what the open wrote or what it had.
 */
#define ENF_EXPECT_ALLOWED(at, flags, path, original)                                              \
	do {                                                                                       \
		const struct enf_attempt *__at = (at);                                             \
		const int __acc = (flags) & O_ACCMODE;                                             \
		ASSERT_TRUE(__at->done)                                                            \
		{                                                                                  \
			TH_LOG("the helper never got to the open");                                \
		}                                                                                  \
		ASSERT_EQ(0, __at->open_err)                                                       \
		{                                                                                  \
			TH_LOG("legitimate open with flags %#o refused: %s", (flags),              \
			       strerror(__at->open_err));                                          \
		}                                                                                  \
		ASSERT_EQ(0, __at->io_err)                                                         \
		{                                                                                  \
			TH_LOG("i/o after the open: %s", strerror(__at->io_err));                  \
		}                                                                                  \
		if (__acc == O_WRONLY || __acc == O_RDWR) {                                        \
			ENF_EXPECT_CONTENT((path), ENF_PAYLOAD);                                   \
		} else {                                                                           \
			EXPECT_STREQ((original), __at->data);                                      \
			ENF_EXPECT_CONTENT((path), (original));                                    \
		}                                                                                  \
	} while (0)

/*
 * POSIX ACLs as system.posix_acl_access wants them. @user_perm is the named entry for nobody,
 * @other_perm the "other" entry; the owner has rwx and the owning group and the mask get
 * @group_perm.
 */
static inline int enf_set_dir_acl(const char *path, unsigned int user_perm,
				  unsigned int group_perm, unsigned int other_perm)
{
	struct {
		struct posix_acl_xattr_header h;
		struct posix_acl_xattr_entry e[5];
	} acl = {
		.h = { .a_version = POSIX_ACL_XATTR_VERSION },
		.e = {
			{ .e_tag = ACL_USER_OBJ, .e_perm = 7, .e_id = ACL_UNDEFINED_ID },
			{ .e_tag = ACL_USER, .e_perm = user_perm, .e_id = ENF_NOBODY },
			{ .e_tag = ACL_GROUP_OBJ, .e_perm = group_perm, .e_id = ACL_UNDEFINED_ID },
			{ .e_tag = ACL_MASK, .e_perm = 7, .e_id = ACL_UNDEFINED_ID },
			{ .e_tag = ACL_OTHER, .e_perm = other_perm, .e_id = ACL_UNDEFINED_ID },
		},
	};

	return setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0) ? -errno : 0;
}

/*
 * The ways a directory lets nobody search it and then stops: by nobody's own group, by a
 * supplementary group, by a POSIX ACL entry (revoked by a named entry that denies nobody even
 * though "other" may search).
 */
enum enf_grant {
	ENF_GRANT_GROUP,
	ENF_GRANT_SUPPLEMENTARY,
	ENF_GRANT_ACL,
};

/* The identity that holds the grant. */
static inline struct enf_ident enf_grant_ident(enum enf_grant grant)
{
	struct enf_ident id = ENF_AS_NOBODY;

	if (grant == ENF_GRANT_SUPPLEMENTARY) {
		id.ngroups = 1;
		id.groups[0] = ENF_GROUP;
	}
	return id;
}

/* Makes directory @path (owner ENF_OWNER) searchable by the grant's identity only: 0/-errno. */
static inline int enf_grant_set(const char *path, enum enf_grant grant)
{
	switch (grant) {
	case ENF_GRANT_GROUP:
		if (chown(path, ENF_OWNER, ENF_NOBODY) || chmod(path, 0710))
			return -errno;
		return 0;
	case ENF_GRANT_SUPPLEMENTARY:
		if (chown(path, ENF_OWNER, ENF_GROUP) || chmod(path, 0710))
			return -errno;
		return 0;
	case ENF_GRANT_ACL:
		if (chown(path, ENF_OWNER, ENF_OWNER) || chmod(path, 0700))
			return -errno;
		return enf_set_dir_acl(path, 1, 0, 0);
	}
	return -EINVAL;
}

/* Takes the grant back, leaving "other" able to search in the ACL case. */
static inline int enf_grant_revoke(const char *path, enum enf_grant grant)
{
	switch (grant) {
	case ENF_GRANT_GROUP:
	case ENF_GRANT_SUPPLEMENTARY:
		return chmod(path, 0700) ? -errno : 0;
	case ENF_GRANT_ACL:
		return enf_set_dir_acl(path, 0, 1, 1);
	}
	return -EINVAL;
}

/* Polls for @cond for up to @secs seconds; true once it holds. */
#define ENF_WAIT_FOR(cond, secs)                                                                  \
	({                                                                                        \
		bool __ok = false;                                                                \
		for (int __i = 0; __i < (secs) * 100; __i++) {                                    \
			if (cond) {                                                               \
				__ok = true;                                                      \
				break;                                                            \
			}                                                                         \
			usleep(10000);                                                            \
		}                                                                                 \
		__ok;                                                                             \
	})

#endif /* ENFORCE_TESTS_COMMON_H */
