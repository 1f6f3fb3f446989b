// SPDX-License-Identifier: GPL-2.0
/* enforce tests - what must keep working with nodefd loaded, and does without it */

/*
 * Reopens at the access the fd already has, in directories the opener may search; the shell's
 * /dev/std* and /dev/fd idioms; pipes, memfd, O_TMPFILE; root where DAC lets root in; walks
 * through the cwd and root of processes in other mount namespaces; and plain opens that follow
 * a magic link nodefd refused or a stat() of one. Nothing here depends on NODEFD_EXPECT: every
 * case must pass both before and after `nodefdctl load`.
 */

#include "common.h"

#define BUSYBOX "/bin/busybox"

/* What a helper reports back: the first check that failed, in words. */
struct legit_ctx {
	char tree[PATH_MAX];
	char why[512];
	char out[512];
};

/* In a helper: record why the case failed, with errno, and end the helper with a failure. */
#define CHECK(cond, fmt, ...)                                                                     \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			int __e = errno;                                                          \
			snprintf(ctx->why, sizeof(ctx->why), "line %d: " fmt " (errno: %s)",      \
				 __LINE__, ##__VA_ARGS__, strerror(__e));                         \
			return 1;                                                                 \
		}                                                                                 \
	} while (0)

#define AT(rel) enf_fmt("%s/%s", ctx->tree, (rel))

/* Reads all of @fd from its current offset into @buf (NUL-terminated): length or -1. */
static ssize_t read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	return len;
}

/*
 * Runs busybox with @argv, stdin from @in (or /dev/null's absence: left as is if -1), stdout
 * into @out. Fds without FD_CLOEXEC are inherited. Exit status, 128 + signal, or -1.
 */
static int busybox(char *const argv[], int in, char *out, size_t size)
{
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if ((in >= 0 && dup2(in, 0) != 0) || dup2(p[1], 1) != 1)
			_exit(126);
		execv(BUSYBOX, argv);
		_exit(127);
	}
	close(p[1]);
	if (read_all(p[0], out, size) < 0)
		out[0] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Opens @path with @flags and checks a read gives @want, or a write of ENF_PAYLOAD works. */
static int reopen_check(struct legit_ctx *ctx, const char *path, int flags, const char *want)
{
	char buf[256];
	int fd = open(path, flags | O_CLOEXEC);
	ssize_t n;

	CHECK(fd >= 0, "open(%s, %#o)", path, flags);
	if ((flags & O_ACCMODE) == O_RDONLY) {
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		CHECK(n >= 0, "read from %s", path);
		buf[n] = '\0';
		CHECK(!strcmp(buf, want), "%s gave \"%s\", not \"%s\"", path, buf, want);
	} else {
		n = pwrite(fd, ENF_PAYLOAD, strlen(ENF_PAYLOAD), 0);
		CHECK(n == (ssize_t)strlen(ENF_PAYLOAD), "write to %s", path);
	}
	close(fd);
	return 0;
}

/* Opens @file with @origin, then reopens it through @link_fmt (with %d for the fd). */
static int reopen_own(struct legit_ctx *ctx, const char *file, int origin, const char *link_fmt,
		      int flags)
{
	int fd = open(file, origin | O_CLOEXEC), ret;

	CHECK(fd >= 0, "open(%s, %#o)", file, origin);
	ret = reopen_check(ctx, enf_fmt(link_fmt, fd), flags, ENF_ORIGINAL);
	close(fd);
	return ret;
}

/*
 * The cases any user may run, as root and as nobody: a tree with pub/ (root's, 0755), a 0666
 * file in it owned by uid 1000, and work/, the variant user's own directory.
 */
FIXTURE(legit)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
};

FIXTURE_VARIANT(legit)
{
	uid_t uid;
};

FIXTURE_VARIANT_ADD(legit, root)
{
	.uid = 0,
};

FIXTURE_VARIANT_ADD(legit, nobody)
{
	.uid = ENF_NOBODY,
};

FIXTURE_SETUP(legit)
{
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/out"), 0666, ENF_OWNER, "");
	enf_mkdir(_metadata, ENF_AT(&self->tree, "work"), 0755, variant->uid, variant->uid);
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(legit)
{
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

typedef int (*legit_fn)(struct legit_ctx *ctx);

static int legit_trampoline(struct enf_agent *agent, void *arg)
{
	struct legit_ctx *ctx = *(struct legit_ctx **)arg;
	legit_fn fn = ((legit_fn *)arg)[1];

	(void)agent;
	return fn(ctx);
}

/* Runs @fn as @id in a helper and asserts that it passed. */
static void run_legit(struct __test_metadata *const _metadata, struct legit_ctx *ctx,
		      const struct enf_ident *id, legit_fn fn)
{
	void *arg[2] = { ctx, (void *)fn };
	int status;

	ctx->why[0] = '\0';
	status = enf_run_as(id, legit_trampoline, arg);
	ASSERT_EQ(0, status)
	{
		TH_LOG("as uid %u: %s", id->uid, ctx->why[0] ? ctx->why : "helper failed");
	}
}

#define RUN_LEGIT(fn) run_legit(_metadata, self->ctx, &(struct enf_ident){ variant->uid,         \
				variant->uid, 0, { 0 } }, (fn))

static int rw_as_ro(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("pub/file"), O_RDWR, "/proc/self/fd/%d", O_RDONLY);
}

TEST_F(legit, reopen_rdwr_as_rdonly)
{
	RUN_LEGIT(rw_as_ro);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/file"), ENF_ORIGINAL);
}

static int ro_as_ro(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("pub/file"), O_RDONLY, "/proc/self/fd/%d", O_RDONLY) ||
	       reopen_own(ctx, AT("pub/file"), O_RDONLY, "/dev/fd/%d", O_RDONLY) ||
	       reopen_own(ctx, AT("pub/file"), O_RDONLY,
			  enf_fmt("/proc/self/task/%d/fd/%%d", gettid()), O_RDONLY);
}

TEST_F(legit, reopen_rdonly_as_rdonly)
{
	RUN_LEGIT(ro_as_ro);
}

static int rw_as_rw(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("pub/file"), O_RDWR, "/proc/self/fd/%d", O_RDWR);
}

TEST_F(legit, reopen_rdwr_as_rdwr)
{
	RUN_LEGIT(rw_as_rw);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/file"), ENF_PAYLOAD);
}

static int wronly_as_wronly_trunc(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("pub/file"), O_WRONLY, "/proc/self/fd/%d", O_WRONLY | O_TRUNC);
}

TEST_F(legit, reopen_wronly_as_wronly_trunc)
{
	RUN_LEGIT(wronly_as_wronly_trunc);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/file"), ENF_PAYLOAD);
}

static int append_as_append(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("pub/file"), O_WRONLY | O_APPEND, "/proc/self/fd/%d",
			  O_WRONLY | O_APPEND);
}

TEST_F(legit, reopen_append_as_append)
{
	RUN_LEGIT(append_as_append);
	/* O_APPEND puts even a pwrite() at the end. */
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/file"), ENF_ORIGINAL ENF_PAYLOAD);
}

/* Another process of the same user holds the fd; reopen it through /proc/<pid>/fd/N. */
static int other_process_fd(struct legit_ctx *ctx)
{
	int fd = open(AT("pub/file"), O_RDONLY | O_CLOEXEC), p[2], ret;
	pid_t holder;
	char c;

	CHECK(fd >= 0, "open");
	CHECK(!pipe2(p, O_CLOEXEC), "pipe");
	holder = fork();
	CHECK(holder >= 0, "fork");
	if (!holder) {
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	close(fd);
	ret = reopen_check(ctx, enf_fmt("/proc/%d/fd/%d", holder, fd), O_RDONLY, ENF_ORIGINAL);
	close(p[1]);
	waitpid(holder, NULL, 0);
	return ret;
}

TEST_F(legit, reopen_other_process_fd)
{
	RUN_LEGIT(other_process_fd);
}

/* sh -c 'echo x > /dev/stdout' with stdout a file: O_WRONLY|O_CREAT|O_TRUNC on a write fd. */
static int shell_stdout(struct legit_ctx *ctx)
{
	char *const argv[] = { "sh", "-c", "echo x >/dev/stdout && echo y >>/dev/stdout", NULL };
	int fd = open(AT("pub/out"), O_WRONLY | O_TRUNC | O_CLOEXEC), status;
	pid_t pid;

	CHECK(fd >= 0, "open pub/out");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		if (dup2(fd, 1) != 1)
			_exit(126);
		execv(BUSYBOX, argv);
		_exit(127);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	errno = 0;
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "sh exited with status %#x", status);
	return 0;
}

TEST_F(legit, shell_redirects_to_dev_stdout)
{
	RUN_LEGIT(shell_stdout);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/out"), "x\ny\n");
}

/* cat /dev/stdin with stdin a file. */
static int cat_stdin_file(struct legit_ctx *ctx)
{
	char *const argv[] = { "cat", "/dev/stdin", NULL };
	int fd = open(AT("pub/file"), O_RDONLY | O_CLOEXEC), status;

	CHECK(fd >= 0, "open");
	status = busybox(argv, fd, ctx->out, sizeof(ctx->out));
	errno = 0;
	CHECK(status == 0, "cat /dev/stdin exited %d", status);
	CHECK(!strcmp(ctx->out, ENF_ORIGINAL), "cat /dev/stdin gave \"%.200s\"", ctx->out);
	return 0;
}

TEST_F(legit, cat_dev_stdin_file)
{
	RUN_LEGIT(cat_stdin_file);
}

/* cat /dev/stdin with stdin a pipe, the writer's end already closed. */
static int cat_stdin_pipe(struct legit_ctx *ctx)
{
	char *const argv[] = { "cat", "/dev/stdin", NULL };
	int p[2], status;

	CHECK(!pipe2(p, O_CLOEXEC), "pipe");
	CHECK(!enf_write_all(p[1], ENF_ORIGINAL, strlen(ENF_ORIGINAL)), "write to the pipe");
	close(p[1]);
	status = busybox(argv, p[0], ctx->out, sizeof(ctx->out));
	errno = 0;
	CHECK(status == 0, "cat /dev/stdin exited %d", status);
	CHECK(!strcmp(ctx->out, ENF_ORIGINAL), "cat /dev/stdin gave \"%.200s\"", ctx->out);
	return 0;
}

TEST_F(legit, cat_dev_stdin_pipe)
{
	RUN_LEGIT(cat_stdin_pipe);
}

/* What <(...) gives a command: /dev/fd/N of a pipe's read end. */
static int dev_fd_pipe(struct legit_ctx *ctx)
{
	char *argv[] = { "cat", NULL, NULL };
	int p[2], status, fd;

	CHECK(!pipe2(p, O_CLOEXEC), "pipe");
	CHECK(!enf_write_all(p[1], ENF_ORIGINAL, strlen(ENF_ORIGINAL)), "write to the pipe");
	close(p[1]);
	/* dup() clears FD_CLOEXEC: cat inherits it. */
	fd = dup(p[0]);
	CHECK(fd >= 0, "dup");
	argv[1] = (char *)enf_fmt("/dev/fd/%d", fd);
	status = busybox(argv, -1, ctx->out, sizeof(ctx->out));
	errno = 0;
	CHECK(status == 0, "cat %s exited %d", argv[1], status);
	CHECK(!strcmp(ctx->out, ENF_ORIGINAL), "cat %s gave \"%.200s\"", argv[1], ctx->out);
	return 0;
}

TEST_F(legit, process_substitution_dev_fd)
{
	RUN_LEGIT(dev_fd_pipe);
}

/* Each end of a pipe reopened in its own direction. */
static int pipe_ends(struct legit_ctx *ctx)
{
	char buf[16] = {};
	int p[2], r, w;

	CHECK(!pipe2(p, O_CLOEXEC), "pipe");
	w = open(enf_fmt("/proc/self/fd/%d", p[1]), O_WRONLY | O_CLOEXEC);
	CHECK(w >= 0, "reopen the write end for writing");
	r = open(enf_fmt("/proc/self/fd/%d", p[0]), O_RDONLY | O_CLOEXEC);
	CHECK(r >= 0, "reopen the read end for reading");
	CHECK(write(w, "ping", 4) == 4, "write through the reopened end");
	CHECK(read(r, buf, sizeof(buf) - 1) == 4 && !strcmp(buf, "ping"), "read \"%s\"", buf);
	close(r);
	close(w);
	close(p[0]);
	close(p[1]);
	return 0;
}

TEST_F(legit, pipe_ends_in_their_direction)
{
	RUN_LEGIT(pipe_ends);
}

/* A memfd reopened read-write, as sealing and sharing code does. */
static int memfd_rw(struct legit_ctx *ctx)
{
	char buf[256] = {};
	int fd = memfd_create("enforce", MFD_CLOEXEC), fd2;

	CHECK(fd >= 0, "memfd_create");
	fd2 = open(enf_fmt("/proc/self/fd/%d", fd), O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0, "reopen the memfd read-write");
	CHECK(!enf_write_all(fd2, ENF_ORIGINAL, strlen(ENF_ORIGINAL)), "write");
	CHECK(pread(fd, buf, sizeof(buf) - 1, 0) == (ssize_t)strlen(ENF_ORIGINAL),
	      "read back through the first fd");
	CHECK(!strcmp(buf, ENF_ORIGINAL), "read back \"%s\"", buf);
	close(fd2);
	close(fd);
	return 0;
}

TEST_F(legit, memfd_reopen_rdwr)
{
	RUN_LEGIT(memfd_rw);
}

/* O_TMPFILE: reopened, then given a name with linkat(AT_SYMLINK_FOLLOW) through the link. */
static int tmpfile_link(struct legit_ctx *ctx)
{
	int fd, fd2, dir;

	dir = open(AT("work"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dir >= 0, "open work/");
	fd = openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "O_TMPFILE in work/");
	fd2 = open(enf_fmt("/proc/self/fd/%d", fd), O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0, "reopen the unnamed file read-write");
	CHECK(!enf_write_all(fd2, ENF_ORIGINAL, strlen(ENF_ORIGINAL)), "write");
	CHECK(!linkat(AT_FDCWD, enf_fmt("/proc/self/fd/%d", fd), dir, "named", AT_SYMLINK_FOLLOW),
	      "linkat(/proc/self/fd/%d, work/named, AT_SYMLINK_FOLLOW)", fd);
	close(fd2);
	close(fd);
	close(dir);
	return 0;
}

TEST_F(legit, tmpfile_reopen_and_link)
{
	RUN_LEGIT(tmpfile_link);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "work/named"), ENF_ORIGINAL);
}

/* Fds inherited across exec, reopened at their own access by the new program. */
static int exec_inherited(struct legit_ctx *ctx)
{
	char *const argv[] = { "sh", "-c",
			       "echo inherited >/proc/self/fd/5 && cat /dev/fd/5 && cat /dev/fd/6",
			       NULL };
	int fd, status;

	fd = open(AT("pub/out"), O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0 && dup2(fd, 5) == 5, "open pub/out as fd 5");
	fd = open(AT("pub/file"), O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && dup2(fd, 6) == 6, "open pub/file as fd 6");
	status = busybox(argv, -1, ctx->out, sizeof(ctx->out));
	errno = 0;
	CHECK(status == 0, "sh exited %d", status);
	CHECK(!strcmp(ctx->out, "inherited\n" ENF_ORIGINAL), "sh printed \"%.200s\"", ctx->out);
	return 0;
}

TEST_F(legit, reopen_inherited_across_exec)
{
	RUN_LEGIT(exec_inherited);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/out"), "inherited\n");
}

/* execve() of /proc/self/fd/N for an O_PATH fd and a read-only one (what fexecve() does). */
static int exec_fd(struct legit_ctx *ctx)
{
	static const int origins[] = { O_PATH, O_RDONLY };
	char *const argv[] = { "true", NULL };

	for (size_t i = 0; i < sizeof(origins) / sizeof(origins[0]); i++) {
		int fd = open(BUSYBOX, origins[i] | O_CLOEXEC), status;
		pid_t pid;

		CHECK(fd >= 0, "open %s %#o", BUSYBOX, origins[i]);
		pid = fork();
		CHECK(pid >= 0, "fork");
		if (!pid) {
			execv(enf_fmt("/proc/self/fd/%d", fd), argv);
			_exit(errno == EACCES ? 13 : 127);
		}
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
		errno = 0;
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
		      "execve(/proc/self/fd/N) of a %s fd: status %#x",
		      origins[i] == O_PATH ? "O_PATH" : "read-only", status);
		close(fd);
	}
	return 0;
}

TEST_F(legit, execve_through_fd)
{
	RUN_LEGIT(exec_fd);
}

/*
 * fexecve() of a "#!" script from an O_PATH fd: the kernel hands the interpreter the script as
 * /dev/fd/N (execveat(fd, "", AT_EMPTY_PATH)) or as the link itself (execve of
 * /proc/self/fd/N), and the interpreter opens that for reading: a read the O_PATH fd never
 * had, which the name gives (pub/ is open to everyone). The fd must not be close-on-exec, or
 * the kernel refuses such a script itself.
 */
static int fexecve_opath_script(struct legit_ctx *ctx)
{
	char *const argv[] = { "script", NULL }, *const envp[] = { NULL };
	int fd = open(AT("pub/script"), O_PATH);

	CHECK(fd >= 0, "open(pub/script, O_PATH)");
	for (int how = 0; how < 2; how++) {
		char out[64];
		int p[2], status;
		pid_t pid;

		CHECK(!pipe2(p, O_CLOEXEC), "pipe2");
		pid = fork();
		CHECK(pid >= 0, "fork");
		if (!pid) {
			if (dup2(p[1], 1) != 1)
				_exit(126);
			if (how)
				execve(enf_fmt("/proc/self/fd/%d", fd), argv, envp);
			else
				syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
			_exit(127);
		}
		close(p[1]);
		if (read_all(p[0], out, sizeof(out)) < 0)
			out[0] = '\0';
		close(p[0]);
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
		errno = 0;
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status) && !strcmp(out, "script ran\n"),
		      "%s of an O_PATH fd of a script: status %#x, output \"%s\"",
		      how ? "execve(/proc/self/fd/N)" : "execveat(fd, \"\", AT_EMPTY_PATH)", status,
		      out);
	}
	close(fd);
	return 0;
}

TEST_F(legit, fexecve_opath_script)
{
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/script"), 0755, 0,
		   "#!" BUSYBOX " sh\necho script ran\n");
	RUN_LEGIT(fexecve_opath_script);
}

/*
 * A walk that stats a link and then opens the same file by name, and an open by name right
 * after a refused link: neither by-name open may be taken for the link's.
 */
static int stat_then_name(struct legit_ctx *ctx)
{
	int fd = open(AT("pub/file"), O_RDONLY | O_CLOEXEC), fd2;
	struct stat st;

	CHECK(fd >= 0, "open");
	CHECK(!stat(enf_fmt("/proc/self/fd/%d", fd), &st), "stat(/proc/self/fd/%d)", fd);
	fd2 = open(AT("pub/file"), O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0, "open by name for writing after a stat of the link");
	CHECK(pwrite(fd2, ENF_PAYLOAD, strlen(ENF_PAYLOAD), 0) == (ssize_t)strlen(ENF_PAYLOAD),
	      "write");
	close(fd2);
	close(fd);
	return 0;
}

TEST_F(legit, stat_link_then_open_by_name)
{
	RUN_LEGIT(stat_then_name);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/file"), ENF_PAYLOAD);
}

static int refused_then_name(struct legit_ctx *ctx)
{
	int fd = open(AT("pub/file"), O_RDONLY | O_CLOEXEC), fd2;

	CHECK(fd >= 0, "open");
	/* An upgrade: refused with nodefd, allowed without. Either way, on to the next open. */
	fd2 = open(enf_fmt("/proc/self/fd/%d", fd), O_RDWR | O_CLOEXEC);
	if (fd2 >= 0)
		close(fd2);
	fd2 = open(AT("pub/file"), O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0, "open by name for writing after an upgrade through the link");
	CHECK(pwrite(fd2, ENF_PAYLOAD, strlen(ENF_PAYLOAD), 0) == (ssize_t)strlen(ENF_PAYLOAD),
	      "write");
	close(fd2);
	/* And a by-name open through an ordinary symlink. */
	CHECK(!symlink(AT("pub/file"), AT("work/symlink")), "symlink");
	fd2 = open(AT("work/symlink"), O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0, "open through an ordinary symlink");
	close(fd2);
	close(fd);
	return 0;
}

TEST_F(legit, refused_link_then_open_by_name)
{
	RUN_LEGIT(refused_then_name);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/file"), ENF_PAYLOAD);
}

/* A walk through the opener's own cwd link, to a file it may open by name. */
static int proc_self_cwd(struct legit_ctx *ctx)
{
	CHECK(!chdir(AT("pub")), "chdir pub/");
	return reopen_check(ctx, "/proc/self/cwd/file", O_RDWR, NULL) ||
	       reopen_check(ctx, "/proc/self/cwd/../pub/file", O_RDONLY, ENF_PAYLOAD);
}

TEST_F(legit, walk_through_own_cwd)
{
	RUN_LEGIT(proc_self_cwd);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/file"), ENF_PAYLOAD);
}

/*
 * A walk through another process's cwd link that the kernel stops between nodefd's link hook
 * and the jump (nobody may not ptrace PID 1: EACCES; root gets through, to ENOENT): what the
 * hook armed for the jump must not refuse a later open, here through an absolute symlink.
 * The walk is known by its nameidata's address, on the kernel stack, which the kernel moves
 * by a random offset at every system call (randomize_kstack_offset, 64 places): the open is
 * made often enough to land on the failed walk's place with near certainty.
 */
#define FAILED_JUMP_OPENS 1000

static int failed_jump_then_symlink(struct legit_ctx *ctx)
{
	char buf[256];
	ssize_t n;
	int fd;

	/* nobody's walk stops at the ptrace check; root's goes on, to ENOENT. */
	fd = open("/proc/1/cwd/nodefd-no-such-file", O_RDONLY | O_CLOEXEC);
	CHECK(fd < 0 && errno == (getuid() ? EACCES : ENOENT),
	      "open through PID 1's cwd: %d, not refused by the kernel", fd);
	CHECK(!symlink(AT("pub/file"), AT("work/abs")), "symlink");
	for (int i = 0; i < FAILED_JUMP_OPENS; i++) {
		fd = open(AT("work/abs"), O_RDONLY | O_CLOEXEC);
		CHECK(fd >= 0, "open %d through an absolute symlink after a walk stopped before its "
			       "jump", i);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		CHECK(n == (ssize_t)strlen(ENF_ORIGINAL), "read");
	}
	return 0;
}

TEST_F(legit, failed_jump_then_open_through_symlink)
{
	RUN_LEGIT(failed_jump_then_symlink);
}

/*
 * The same stopped walk, then the task's own namespace links, which jump as magic links do
 * (proc_ns_get_link() calls nd_jump_link()) though nodefd's hook does not look at them: the
 * jump must not be taken for the stopped walk's. An open through /proc/1/root, then opens of
 * /proc/self/ns/net; a stat() through /proc/1/cwd (a walk only a kill could stop), then
 * stat()s of /proc/self/ns/mnt, which must neither fail nor kill the helper.
 */
static int failed_jump_then_ns_links(struct legit_ctx *ctx)
{
	struct stat st;
	int fd;

	fd = open("/proc/1/root/nodefd-no-such-file", O_RDONLY | O_CLOEXEC);
	CHECK(fd < 0 && errno == (getuid() ? EACCES : ENOENT),
	      "open through PID 1's root: %d, not refused by the kernel", fd);
	for (int i = 0; i < FAILED_JUMP_OPENS; i++) {
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		CHECK(fd >= 0, "open %d of /proc/self/ns/net after a walk stopped before its jump",
		      i);
		close(fd);
	}
	CHECK(stat("/proc/1/cwd/nodefd-no-such-file", &st) && errno == (getuid() ? EACCES : ENOENT),
	      "stat through PID 1's cwd: not refused by the kernel");
	for (int i = 0; i < FAILED_JUMP_OPENS; i++)
		CHECK(!stat("/proc/self/ns/mnt", &st),
		      "stat %d of /proc/self/ns/mnt after a walk stopped before its jump", i);
	return 0;
}

TEST_F(legit, failed_jump_then_namespace_links)
{
	RUN_LEGIT(failed_jump_then_ns_links);
}

/* >/dev/stderr with stderr /dev/null, and /dev/stdout a tty-less character device. */
static int dev_null_stderr(struct legit_ctx *ctx)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC), fd2;

	CHECK(fd >= 0 && dup2(fd, 2) == 2, "/dev/null as stderr");
	fd2 = open("/dev/stderr", O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK(fd2 >= 0, "open /dev/stderr");
	CHECK(write(fd2, "x", 1) == 1, "write to /dev/stderr");
	close(fd2);
	return 0;
}

TEST_F(legit, dev_stderr_to_dev_null)
{
	RUN_LEGIT(dev_null_stderr);
}

/*
 * The file is also linked into a directory the opener may search: after its first directory
 * closed, a stat through the link may be refused, but the open by the other name may not.
 */
FIXTURE(closed)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
};

FIXTURE_SETUP(closed)
{
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "priv"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "priv/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0755, 0, 0);
	ASSERT_EQ(0, link(ENF_AT(&self->tree, "priv/file"), ENF_AT(&self->tree, "pub/link")));
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(closed)
{
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

static int closed_dir_other_name(struct enf_agent *agent, void *arg)
{
	struct legit_ctx *ctx = arg;
	struct stat st;
	int fd, fd2;

	fd = open(AT("priv/file"), O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open priv/file");
	CHECK(!enf_agent_sync(agent), "sync");
	/* Refused with nodefd (priv/ is 0700 now), allowed without: not what is tested. */
	if (stat(enf_fmt("/proc/self/fd/%d", fd), &st))
		enf_say("stat(/proc/self/fd/%d): %s", fd, strerror(errno));
	fd2 = open(AT("pub/link"), O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0, "open pub/link, the same inode, after the stat");
	CHECK(pwrite(fd2, ENF_PAYLOAD, strlen(ENF_PAYLOAD), 0) == (ssize_t)strlen(ENF_PAYLOAD),
	      "write");
	close(fd2);
	close(fd);
	return 0;
}

TEST_F(closed, stat_refused_link_then_open_other_name)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	int status;

	self->ctx->why[0] = '\0';
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, closed_dir_other_name, self->ctx));
	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("helper: %s", self->ctx->why);
	}
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "priv"), 0700));
	enf_agent_resume(&agent);
	status = enf_agent_join(&agent);
	ASSERT_EQ(0, status)
	{
		TH_LOG("helper: %s", self->ctx->why);
	}
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "pub/link"), ENF_PAYLOAD);
}

/*
 * Directories of uid 1000 closed to everyone else: the owner inside its own 0700 directory,
 * and root in anyone's.
 */
FIXTURE(private)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
};

FIXTURE_SETUP(private)
{
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "home"), 0700, ENF_OWNER, ENF_OWNER);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "home/sub"), 0700, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "home/sub/file"), 0600, ENF_OWNER,
		   ENF_ORIGINAL);
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(private)
{
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

static int private_ro_rw(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("home/sub/file"), O_RDONLY, "/proc/self/fd/%d", O_RDONLY) ||
	       reopen_own(ctx, AT("home/sub/file"), O_RDWR, "/proc/self/fd/%d", O_RDWR);
}

TEST_F(private, owner_in_own_0700_dir)
{
	run_legit(_metadata, self->ctx, &ENF_AS_OWNER, private_ro_rw);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "home/sub/file"), ENF_PAYLOAD);
}

TEST_F(private, root_in_0700_dir_of_another_user)
{
	run_legit(_metadata, self->ctx, &ENF_ROOT, private_ro_rw);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "home/sub/file"), ENF_PAYLOAD);
}

/* The grants the attack matrix revokes, left in place: search through a group or an ACL. */
FIXTURE(granted)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
};

FIXTURE_VARIANT(granted)
{
	enum enf_grant grant;
};

FIXTURE_VARIANT_ADD(granted, own_group)
{
	.grant = ENF_GRANT_GROUP,
};

FIXTURE_VARIANT_ADD(granted, supplementary_group)
{
	.grant = ENF_GRANT_SUPPLEMENTARY,
};

FIXTURE_VARIANT_ADD(granted, acl_entry)
{
	.grant = ENF_GRANT_ACL,
};

FIXTURE_SETUP(granted)
{
	int err;

	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "shared"), 0700, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "shared/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	err = enf_grant_set(ENF_AT(&self->tree, "shared"), variant->grant);
	if (err == -EOPNOTSUPP) {
		enf_tree_remove(&self->tree);
		SKIP(longjmp(_metadata->env, 1), "no POSIX ACLs on /tmp");
	}
	ASSERT_EQ(0, err);
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(granted)
{
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

static int granted_ro_rw(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("shared/file"), O_RDONLY, "/proc/self/fd/%d", O_RDONLY) ||
	       reopen_own(ctx, AT("shared/file"), O_RDWR, "/proc/self/fd/%d", O_RDWR);
}

TEST_F(granted, reopen_with_search_granted)
{
	struct enf_ident id = enf_grant_ident(variant->grant);

	run_legit(_metadata, self->ctx, &id, granted_ro_rw);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "shared/file"), ENF_PAYLOAD);
}

/*
 * Root, not chrooted, reads a file through /proc/<pid>/root and /proc/<pid>/cwd of a process
 * in another mount namespace, where a tmpfs is mounted that the initial namespace lacks.
 */
FIXTURE(mntns)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
};

FIXTURE_SETUP(mntns)
{
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "mnt"), 0755, 0, 0);
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(mntns)
{
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

static int ns_holder(struct enf_agent *agent, void *arg)
{
	struct legit_ctx *ctx = arg;
	int fd;

	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mount("tmpfs", AT("mnt"), "tmpfs", 0, "mode=0755"), "mount a tmpfs");
	fd = open(AT("mnt/file"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "create mnt/file");
	CHECK(!enf_write_all(fd, ENF_ORIGINAL, strlen(ENF_ORIGINAL)), "write mnt/file");
	close(fd);
	CHECK(!chdir(AT("mnt")), "chdir mnt/");
	/* Hold still while the test looks in, then go. */
	CHECK(!enf_agent_sync(agent), "sync");
	return 0;
}

TEST_F(mntns, root_reads_through_other_namespace_root_and_cwd)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct enf_attempt at = {};
	const char *in_ns = ENF_AT(&self->tree, "mnt/file");

	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_ROOT, ns_holder, self->ctx));
	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("helper: %s", self->ctx->why);
	}
	/* Not there in this namespace. */
	EXPECT_NE(0, access(in_ns, F_OK));
	enf_attempt(&at, enf_fmt("/proc/%d/root%s", agent.pid, in_ns), O_RDONLY);
	EXPECT_EQ(0, at.open_err)
	{
		TH_LOG("/proc/%d/root%s: %s", agent.pid, in_ns, strerror(at.open_err));
	}
	EXPECT_STREQ(ENF_ORIGINAL, at.data);
	memset(&at, 0, sizeof(at));
	enf_attempt(&at, enf_fmt("/proc/%d/cwd/file", agent.pid), O_RDONLY);
	EXPECT_EQ(0, at.open_err)
	{
		TH_LOG("/proc/%d/cwd/file: %s", agent.pid, strerror(at.open_err));
	}
	EXPECT_STREQ(ENF_ORIGINAL, at.data);
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent))
	{
		TH_LOG("helper: %s", self->ctx->why);
	}
}

/*
 * Inside a chroot, what lies inside it: reopening an fd to a file in the jail, walking the
 * process's own cwd and root links.
 */
FIXTURE(jail)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
};

FIXTURE_SETUP(jail)
{
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail/proc"), 0555, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail/dir"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "jail/dir/file"), 0644, 0, ENF_ORIGINAL);
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(jail)
{
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

static int inside_jail(struct legit_ctx *ctx)
{
	const char *jail = AT("jail");

	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mount("proc", enf_fmt("%s/proc", jail), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL), "mount proc in the jail");
	CHECK(!chroot(jail), "chroot");
	CHECK(!chdir("/dir"), "chdir /dir");
	return reopen_own(ctx, "/dir/file", O_RDONLY, "/proc/self/fd/%d", O_RDONLY) ||
	       reopen_own(ctx, "/dir/file", O_RDWR, "/proc/self/fd/%d", O_RDWR) ||
	       reopen_check(ctx, "/proc/self/cwd/file", O_RDONLY, ENF_PAYLOAD) ||
	       reopen_check(ctx, "/proc/self/root/dir/file", O_RDONLY, ENF_PAYLOAD);
}

TEST_F(jail, reopen_inside_jail)
{
	run_legit(_metadata, self->ctx, &ENF_ROOT, inside_jail);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "jail/dir/file"), ENF_PAYLOAD);
}

/*
 * Confined tasks and their own files outside their root or name: a PrivateTmp= service's
 * unlinked temp file (a bash here-document), a chroot's stdout that is a log outside it, root
 * in a mount namespace of its own reading a pivoted container's files through /proc/PID/root.
 * Each reopen asks no more than the fd, or what the name gives.
 */
FIXTURE(confined)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
};

FIXTURE_SETUP(confined)
{
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "tmp"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail/proc"), 0555, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "log"), 0644, 0, "");
	enf_mkdir(_metadata, ENF_AT(&self->tree, "h"), 0755, 0, 0);
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(confined)
{
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

static int private_tmp_unlinked(struct legit_ctx *ctx)
{
	int rw, ro;

	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mount("tmpfs", AT("tmp"), "tmpfs", 0, "mode=1777"), "mount a private tmp");
	rw = open(AT("tmp/sh-thd"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(rw >= 0, "create the temp file");
	CHECK(!enf_write_all(rw, ENF_ORIGINAL, strlen(ENF_ORIGINAL)), "write it");
	CHECK(!unlink(AT("tmp/sh-thd")), "unlink it");
	/* bash: the here-document is read back through the fd made stdin. */
	ro = open(enf_fmt("/proc/self/fd/%d", rw), O_RDONLY | O_CLOEXEC);
	CHECK(ro >= 0, "reopen the unlinked file read-only");
	close(ro);
	return reopen_check(ctx, enf_fmt("/proc/self/fd/%d", rw), O_RDWR, NULL);
}

TEST_F(confined, private_tmp_unlinked_reopen)
{
	run_legit(_metadata, self->ctx, &ENF_ROOT, private_tmp_unlinked);
}

static int chroot_stdout_outside(struct legit_ctx *ctx)
{
	const char *jail = AT("jail");
	int log = open(AT("log"), O_WRONLY | O_APPEND | O_CLOEXEC);

	CHECK(log >= 0, "open the log");
	CHECK(dup2(log, 1) == 1, "make it stdout");
	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mount("proc", enf_fmt("%s/proc", jail), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL), "mount proc in the jail");
	CHECK(!chroot(jail) && !chdir("/"), "chroot");
	/* `echo done > /dev/stdout` in a build chroot whose output goes to a log outside. */
	return reopen_check(ctx, "/proc/self/fd/1", O_WRONLY | O_APPEND, NULL);
}

TEST_F(confined, chroot_stdout_is_a_log_outside)
{
	run_legit(_metadata, self->ctx, &ENF_ROOT, chroot_stdout_outside);
	ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "log"), ENF_PAYLOAD);
}

/*
 * A container pivoted into its root filesystem, its old root gone, as runc leaves it; and root
 * beside it in a mount namespace of its own (a service with PrivateTmp=, a runtime's monitor),
 * whose root is not where the container's mount tree leads. Both live on h/, a tmpfs standing in
 * for the host's root filesystem (in the VM the real root is an initramfs, which pivot_root()
 * refuses to leave).
 */
static int pivoted_container(struct enf_agent *agent, void *arg)
{
	struct legit_ctx *ctx = arg;

	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!chroot(AT("h")) && !chdir("/"), "chroot h/");
	CHECK(!mount("/ct/rootfs", "/ct/rootfs", NULL, MS_BIND, NULL), "bind the rootfs");
	CHECK(!chdir("/ct/rootfs"), "chdir rootfs");
	CHECK(!syscall(SYS_pivot_root, ".", "old"), "pivot_root");
	CHECK(!umount2("/old", MNT_DETACH), "umount the old root");
	CHECK(!chdir("/"), "chdir /");
	CHECK(!enf_agent_sync(agent), "sync");
	return 0;
}

static pid_t container_pid;

static int read_container_root(struct legit_ctx *ctx)
{
	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mount("proc", AT("h/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL),
	      "mount proc");
	CHECK(!chroot(AT("h")) && !chdir("/"), "chroot h/");
	return reopen_check(ctx, enf_fmt("/proc/%d/root/etc/os-release", container_pid), O_RDONLY,
			    ENF_ORIGINAL);
}

TEST_F(confined, private_mntns_reads_pivoted_container_root)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	const char *h = ENF_AT(&self->tree, "h");

	ASSERT_EQ(0, mount("tmpfs", h, "tmpfs", 0, "mode=0755"));
	enf_mkdir(_metadata, ENF_AT(&self->tree, "h/proc"), 0555, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "h/ct"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "h/ct/rootfs"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "h/ct/rootfs/old"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "h/ct/rootfs/etc"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "h/ct/rootfs/etc/os-release"), 0644, 0,
		   ENF_ORIGINAL);
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_ROOT, pivoted_container, self->ctx));
	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("container: %s", self->ctx->why);
	}
	container_pid = agent.pid;
	run_legit(_metadata, self->ctx, &ENF_ROOT, read_container_root);
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	umount2(h, MNT_DETACH);
}

/*
 * runc's exec.fifo, as runc 1.1 does it: `runc create` (root) opens the FIFO in its state
 * directory O_PATH and leaves it to `runc init`, which enters the container (a mount namespace
 * and a root of its own), becomes the container's user and opens /proc/self/fd/N for writing.
 * The container cannot name the FIFO; its opener could, and handed it over.
 */
static int exec_fifo_fd;

static int runc_init(struct legit_ctx *ctx)
{
	const char *jail = AT("jail");
	int fd;

	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mount("proc", enf_fmt("%s/proc", jail), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL), "mount proc in the container");
	CHECK(!chroot(jail) && !chdir("/"), "chroot");
	CHECK(!setgroups(0, NULL) && !setresgid(ENF_NOBODY, ENF_NOBODY, ENF_NOBODY) &&
	      !setresuid(ENF_NOBODY, ENF_NOBODY, ENF_NOBODY), "become the container's user");
	fd = open(enf_fmt("/proc/self/fd/%d", exec_fifo_fd), O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open exec fifo /proc/self/fd/%d", exec_fifo_fd);
	CHECK(write(fd, "0", 1) == 1, "write exec fifo");
	close(fd);
	return 0;
}

TEST_F(confined, runc_exec_fifo)
{
	const char *fifo = ENF_AT(&self->tree, "state/exec.fifo");
	char c = 0;
	int rd;

	enf_mkdir(_metadata, ENF_AT(&self->tree, "state"), 0711, 0, 0);
	ASSERT_EQ(0, mkfifo(fifo, 0622));
	ASSERT_EQ(0, chmod(fifo, 0622));
	/* `runc start`'s end, open first so that the writer does not wait. */
	rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, rd);
	exec_fifo_fd = open(fifo, O_PATH);	/* inherited by runc init */
	ASSERT_LE(0, exec_fifo_fd);
	run_legit(_metadata, self->ctx, &ENF_ROOT, runc_init);
	close(exec_fifo_fd);
	EXPECT_EQ(1, read(rd, &c, 1));
	EXPECT_EQ('0', c);
	close(rd);
}

/*
 * A lookup by name crosses bind mounts; so must the judgement of what the name gives. A build
 * chroot with the host's log directory bound into it: its stderr is the log opened outside
 * (O_APPEND, `2>>log`), and `echo > /dev/stderr` (write without O_APPEND) is refused unless
 * the name gives it, which it does: /data/log, through the bind.
 */
static int chroot_bound_log(struct legit_ctx *ctx)
{
	const char *jail = AT("jail");
	int fd = open(AT("srv/data/log"), O_WRONLY | O_APPEND);

	CHECK(fd >= 0, "open the log O_APPEND");
	CHECK(!unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mount(AT("srv/data"), enf_fmt("%s/data", jail), NULL, MS_BIND, NULL),
	      "bind srv/data into the chroot");
	CHECK(!mount("proc", enf_fmt("%s/proc", jail), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL), "mount proc in the chroot");
	CHECK(!chroot(jail) && !chdir("/"), "chroot");
	CHECK(!setgroups(0, NULL) && !setresgid(ENF_NOBODY, ENF_NOBODY, ENF_NOBODY) &&
	      !setresuid(ENF_NOBODY, ENF_NOBODY, ENF_NOBODY), "become nobody");
	CHECK(!reopen_check(ctx, "/data/log", O_WRONLY, NULL), "by name");
	return reopen_check(ctx, enf_fmt("/proc/self/fd/%d", fd), O_WRONLY, NULL);
}

TEST_F(confined, chroot_bound_log_written_without_append)
{
	enf_mkdir(_metadata, ENF_AT(&self->tree, "srv"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "srv/data"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "srv/data/log"), 0666, 0, "");
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail/data"), 0755, 0, 0);
	run_legit(_metadata, self->ctx, &ENF_ROOT, chroot_bound_log);
}

/*
 * The same for a task that is not confined: a directory bound elsewhere (h/) stays open to
 * everyone after the one above its original place (hid/) closed. A read-only fd of a 0666 file
 * there, reopened for writing by nobody: the name h/f gives it.
 */
static int held_fd;

static int bound_dir_reopen(struct legit_ctx *ctx)
{
	CHECK(!reopen_check(ctx, AT("h/f"), O_RDWR, NULL), "by name, through the bind");
	return reopen_check(ctx, enf_fmt("/proc/self/fd/%d", held_fd), O_RDWR, NULL);
}

TEST_F(confined, bound_dir_behind_a_closed_one)
{
	const char *h = ENF_AT(&self->tree, "h");

	enf_mkdir(_metadata, ENF_AT(&self->tree, "hid"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "hid/data"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "hid/data/f"), 0666, 0, ENF_ORIGINAL);
	ASSERT_EQ(0, mount(ENF_AT(&self->tree, "hid/data"), h, NULL, MS_BIND, NULL));
	held_fd = open(ENF_AT(&self->tree, "hid/data/f"), O_RDONLY);	/* inherited */
	ASSERT_LE(0, held_fd);
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "hid"), 0700));
	run_legit(_metadata, self->ctx, &ENF_AS_NOBODY, bound_dir_reopen);
	close(held_fd);
	umount2(h, MNT_DETACH);
}

/*
 * Rootless runc (Docker's rootless mode, podman with runc): `runc create` runs as root of a
 * user namespace that maps a user (uid 1000 here), with its state in the user's own 0700
 * directory (as /run/user/1000); `runc init` enters a root of its own and opens the FIFO
 * through /proc/self/fd for writing. Its opener's credentials could still open it by name.
 */
static int echo_to(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		ret = -1;
	close(fd);
	return ret;
}

static int rootless_runc(struct legit_ctx *ctx)
{
	const char *state = AT("user/runc"), *fifo = AT("user/runc/exec.fifo");
	const char *jail = AT("jail");
	int rd, status;
	pid_t pid;
	char c = 0;

	CHECK(!unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(CLONE_NEWUSER | CLONE_NEWNS)");
	CHECK(!echo_to("/proc/self/uid_map", enf_fmt("0 %d 1", ENF_OWNER)) &&
	      !echo_to("/proc/self/setgroups", "deny") &&
	      !echo_to("/proc/self/gid_map", enf_fmt("0 %d 1", ENF_OWNER)), "map 0 to %d",
	      ENF_OWNER);
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make / private");
	CHECK(!mkdir(state, 0711), "mkdir %s", state);
	CHECK(!mkfifo(fifo, 0622) && !chmod(fifo, 0622), "mkfifo");
	rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	CHECK(rd >= 0, "open the FIFO's reading end");
	exec_fifo_fd = open(fifo, O_PATH);
	CHECK(exec_fifo_fd >= 0, "open the FIFO O_PATH");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		/* runc init: a root of its own, /proc bound into it. */
		int fd;

		if (unshare(CLONE_NEWNS) ||
		    mount("/proc", enf_fmt("%s/proc", jail), NULL, MS_BIND | MS_REC, NULL) ||
		    chroot(jail) || chdir("/"))
			_exit(2);
		fd = open(enf_fmt("/proc/self/fd/%d", exec_fifo_fd), O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(errno == EACCES ? 13 : 3);
		_exit(write(fd, "0", 1) == 1 ? 0 : 4);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	errno = 0;
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
	      "runc init: status %#x (13: open exec fifo /proc/self/fd/%d refused)", status,
	      exec_fifo_fd);
	CHECK(read(rd, &c, 1) == 1 && c == '0', "read what runc init wrote");
	close(rd);
	close(exec_fifo_fd);
	return 0;
}

TEST_F(confined, rootless_runc_exec_fifo)
{
	enf_mkdir(_metadata, ENF_AT(&self->tree, "user"), 0700, ENF_OWNER, ENF_OWNER);
	run_legit(_metadata, self->ctx, &((struct enf_ident){ ENF_OWNER, ENF_OWNER, 0, { 0 } }),
		  rootless_runc);
}

/*
 * overlayfs, as container storage: a directory with group bits (0775) in the lower layer, whose
 * ACL overlayfs never caches on its own inode. nobody reopens its read-only fd of a 0666 file
 * in it for writing, which it could do by name.
 */
FIXTURE(overlay)
{
	struct enf_tree tree;
	struct legit_ctx *ctx;
	bool mounted;
};

FIXTURE_SETUP(overlay)
{
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "lower"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "lower/d"), 0775, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "lower/d/f"), 0666, ENF_OWNER, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "upper"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "work"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "merged"), 0755, 0, 0);
	if (mount("overlay", ENF_AT(&self->tree, "merged"), "overlay", 0,
		  enf_fmt("lowerdir=%s,upperdir=%s,workdir=%s", ENF_AT(&self->tree, "lower"),
			  ENF_AT(&self->tree, "upper"), ENF_AT(&self->tree, "work")))) {
		enf_tree_remove(&self->tree);
		SKIP(longjmp(_metadata->env, 1), "no overlayfs: %s", strerror(errno));
	}
	self->mounted = true;
	self->ctx = enf_shared(sizeof(*self->ctx));
	ASSERT_NE(NULL, self->ctx);
	strcpy(self->ctx->tree, self->tree.path);
}

FIXTURE_TEARDOWN(overlay)
{
	if (self->mounted)
		umount2(ENF_AT(&self->tree, "merged"), MNT_DETACH);
	enf_tree_remove(&self->tree);
	if (self->ctx)
		munmap(self->ctx, sizeof(*self->ctx));
}

static int overlay_upgrade(struct legit_ctx *ctx)
{
	return reopen_own(ctx, AT("merged/d/f"), O_RDONLY, "/proc/self/fd/%d", O_RDWR);
}

TEST_F(overlay, reopen_by_name_in_lower_dir)
{
	run_legit(_metadata, self->ctx, &ENF_AS_NOBODY, overlay_upgrade);
}

TEST_HARNESS_MAIN
