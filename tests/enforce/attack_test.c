// SPDX-License-Identifier: GPL-2.0
/* enforce tests - the attack matrix: each attack works without nodefd and is refused with it */

/*
 * Every case runs twice in the VM: NODEFD_EXPECT=hole before `nodefdctl load`, where the attack
 * must work (so the case reproduces the hole and can fail), and NODEFD_EXPECT=refused after it,
 * where the open must fail with EACCES and the file must hold what it held; and once more under
 * a strict policy (NODEFD_STRICT=1). Beside each attack stand the cases nodefd must let through
 * because the link gives nothing more than the fd or the name: a reopen within the fd's access
 * (ENF_EXPECT_ALLOWED), and one beyond it that the opener could make by name
 * (ENF_EXPECT_BY_NAME: refused only under the strict policy). The unprivileged attacker is
 * nobody (65534), in nobody's group only; the owner of the data is uid 1000. The chroot cases
 * run as root, whose DAC override passes the ancestors rule: they test reach.
 */

#include <linux/capability.h>

#include "common.h"

/* The proc magic links an attacker can reopen an fd of its own, or another's, through. */
enum link_kind {
	LINK_PROC_SELF_FD,	/* /proc/self/fd/N */
	LINK_DEV_FD,		/* /dev/fd/N, a symlink to /proc/self/fd */
	LINK_TASK_FD,		/* /proc/self/task/<tid>/fd/N */
	LINK_HOLDER_FD,		/* /proc/<pid>/fd/N of a child that holds the fd */
	LINK_DEV_STDIN,		/* /dev/stdin, the fd made stdin */
};

/* One attack by a helper process; the test fills the first part, the helper the rest. */
struct scenario {
	char origin[PATH_MAX];		/* what the attacker opens first */
	int origin_flags;
	bool origin_onode;		/* open it O_NODE|O_NOACCESS with openat2() */
	enum link_kind link;
	int reopen_flags;
	bool pause;			/* stop after the first open, for the victim to act */
	char name_check[PATH_MAX];	/* after the pause, try this by name: must be EACCES */

	int origin_err;
	int name_err;
	char link_path[PATH_MAX + 64];
	struct enf_attempt at;
};

static int attacker(struct enf_agent *agent, void *arg)
{
	struct scenario *sc = arg;
	int fd, link_fd, holder_pipe[2] = { -1, -1 };
	pid_t holder = 0;
	char c;

	if (sc->origin_onode)
		fd = enf_openat2(AT_FDCWD, sc->origin, O_NODE | O_NOACCESS | O_CLOEXEC);
	else
		fd = open(sc->origin, sc->origin_flags | O_CLOEXEC);
	if (fd < 0) {
		sc->origin_err = errno;
		enf_say("first open of %s: %s", sc->origin, strerror(errno));
		return ENF_SETUP_FAILED;
	}
	link_fd = fd;
	if (sc->link == LINK_HOLDER_FD) {
		/* The holder keeps the fd until the pipe closes; the attacker drops its own. */
		if (pipe2(holder_pipe, O_CLOEXEC))
			return ENF_SETUP_FAILED;
		holder = fork();
		if (holder < 0)
			return ENF_SETUP_FAILED;
		if (!holder) {
			close(holder_pipe[1]);
			while (read(holder_pipe[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		close(holder_pipe[0]);
		close(fd);
	}
	if (sc->pause && enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	if (sc->name_check[0]) {
		int f = open(sc->name_check, O_RDONLY | O_CLOEXEC);

		sc->name_err = f < 0 ? errno : 0;
		if (f >= 0)
			close(f);
	}

	switch (sc->link) {
	case LINK_PROC_SELF_FD:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/fd/%d", link_fd);
		break;
	case LINK_DEV_FD:
		snprintf(sc->link_path, sizeof(sc->link_path), "/dev/fd/%d", link_fd);
		break;
	case LINK_TASK_FD:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/task/%d/fd/%d",
			 gettid(), link_fd);
		break;
	case LINK_HOLDER_FD:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/%d/fd/%d", holder, link_fd);
		break;
	case LINK_DEV_STDIN:
		if (dup2(fd, 0) != 0)
			return ENF_SETUP_FAILED;
		snprintf(sc->link_path, sizeof(sc->link_path), "/dev/stdin");
		break;
	}
	enf_attempt(&sc->at, sc->link_path, sc->reopen_flags);

	if (holder > 0) {
		close(holder_pipe[1]);
		waitpid(holder, NULL, 0);
	}
	return 0;
}

/* Runs @sc as @id; with sc->pause, calls @victim_acts(@victim_arg) while the attacker waits. */
static void run_attack(struct __test_metadata *const _metadata, struct scenario *sc,
		       const struct enf_ident *id, int (*victim_acts)(const char *),
		       const char *victim_arg)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	int status;

	ASSERT_EQ(0, enf_agent_start(&agent, id, attacker, sc));
	if (sc->pause) {
		ASSERT_TRUE(enf_agent_wait(&agent))
		{
			TH_LOG("the attacker ended before the victim acted (exit %d)",
			       enf_agent_join(&agent));
		}
		ASSERT_EQ(0, victim_acts(victim_arg));
		enf_agent_resume(&agent);
	}
	status = enf_agent_join(&agent);
	ASSERT_EQ(0, status)
	{
		TH_LOG("the attacker could not play its part (exit %d, first open: %s)", status,
		       strerror(sc->origin_err));
	}
	TH_LOG("%s through %s with flags %#o: %s", enf_expectation() == ENF_EXPECT_HOLE ?
	       "hole" : "refused", sc->link_path, sc->reopen_flags,
	       sc->at.open_err ? strerror(sc->at.open_err) : "opened");
}

/* The victim (uid 1000) closes its directory, as in the article. */
static int victim_chmod_0700(const char *dir)
{
	return enf_run_as(&ENF_AS_OWNER, enf_close_dir, (void *)dir);
}

static int no_victim(const char *unused)
{
	(void)unused;
	return 0;
}

/*
 * The article: uid 1000 keeps a 0666 file in a directory nobody could search at first; nobody
 * opens it read-only; the owner makes the directory 0700; nobody reopens its fd for writing,
 * for reading and to truncate. Every reopen goes around the 0700 directory.
 */
FIXTURE(article)
{
	struct enf_tree tree;
	struct scenario *sc;
};

FIXTURE_VARIANT(article)
{
	enum link_kind link;
};

FIXTURE_VARIANT_ADD(article, proc_self_fd)
{
	.link = LINK_PROC_SELF_FD,
};

FIXTURE_VARIANT_ADD(article, dev_fd)
{
	.link = LINK_DEV_FD,
};

FIXTURE_VARIANT_ADD(article, task_fd)
{
	.link = LINK_TASK_FD,
};

FIXTURE_VARIANT_ADD(article, other_process_fd)
{
	.link = LINK_HOLDER_FD,
};

FIXTURE_VARIANT_ADD(article, dev_stdin)
{
	.link = LINK_DEV_STDIN,
};

FIXTURE_SETUP(article)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "victim"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "victim/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	self->sc = enf_shared(sizeof(*self->sc));
	ASSERT_NE(NULL, self->sc);
}

FIXTURE_TEARDOWN(article)
{
	enf_tree_remove(&self->tree);
	if (self->sc)
		munmap(self->sc, sizeof(*self->sc));
}

static void article_attack(struct __test_metadata *const _metadata, FIXTURE_DATA(article) *self,
			   const FIXTURE_VARIANT(article) *variant, int flags, bool within)
{
	struct scenario *sc = self->sc;
	const char *file = ENF_AT(&self->tree, "victim/file");

	strcpy(sc->origin, file);
	sc->origin_flags = O_RDONLY;
	sc->link = variant->link;
	sc->reopen_flags = flags;
	sc->pause = true;
	strcpy(sc->name_check, file);
	run_attack(_metadata, sc, &ENF_AS_NOBODY, victim_chmod_0700,
		   ENF_AT(&self->tree, "victim"));
	/* The directory does stop nobody by name: only the link goes around it. */
	ASSERT_EQ(EACCES, sc->name_err);
	if (within)
		ENF_EXPECT_ALLOWED(&sc->at, flags, file, ENF_ORIGINAL);
	else
		ENF_EXPECT_ATTACK(&sc->at, flags, file, ENF_ORIGINAL);
}

TEST_F(article, reopen_write)
{
	article_attack(_metadata, self, variant, O_WRONLY, false);
}

/*
 * The fd is readable: a read-only reopen gives nobody what it holds already, however closed the
 * directory is (`wc -l /dev/stdin <file` in a directory the user cannot search).
 */
TEST_F(article, reopen_read_within_fd)
{
	article_attack(_metadata, self, variant, O_RDONLY, true);
}

TEST_F(article, reopen_rdwr)
{
	article_attack(_metadata, self, variant, O_RDWR, false);
}

/* O_TRUNC destroys data without write access: it counts as writing. */
TEST_F(article, reopen_read_trunc)
{
	article_attack(_metadata, self, variant, O_RDONLY | O_TRUNC, false);
}

/*
 * Origins with no access at all: an O_PATH fd, and on the patched kernel an O_NODE one, of a
 * 0666 file in a directory everyone may search. The opener could open the file by name for any
 * of these (systemd's fd_reopen() of its O_PATH fds), so nodefd lets them through; only a strict
 * policy makes the fd's access (none) the ceiling, for root too. Where the name is closed, a
 * reopen beyond the fd's access is the article's attack (above).
 */
FIXTURE(origin)
{
	struct enf_tree tree;
	struct scenario *sc;
};

FIXTURE_VARIANT(origin)
{
	bool onode;
	bool root;
};

FIXTURE_VARIANT_ADD(origin, opath_nobody)
{
	.onode = false,
	.root = false,
};

FIXTURE_VARIANT_ADD(origin, opath_root)
{
	.onode = false,
	.root = true,
};

FIXTURE_VARIANT_ADD(origin, onode_nobody)
{
	.onode = true,
	.root = false,
};

FIXTURE_VARIANT_ADD(origin, onode_root)
{
	.onode = true,
	.root = true,
};

FIXTURE_SETUP(origin)
{
	ENF_ASSERT_EXPECTATION();
	if (variant->onode && !enf_kernel_has_onode())
		SKIP(longjmp(_metadata->env, 1), "kernel has no O_NODE (openat2 says %s)",
		     strerror(errno));
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	self->sc = enf_shared(sizeof(*self->sc));
	ASSERT_NE(NULL, self->sc);
}

FIXTURE_TEARDOWN(origin)
{
	enf_tree_remove(&self->tree);
	if (self->sc)
		munmap(self->sc, sizeof(*self->sc));
}

static void origin_attack(struct __test_metadata *const _metadata, FIXTURE_DATA(origin) *self,
			  const FIXTURE_VARIANT(origin) *variant, int flags)
{
	struct scenario *sc = self->sc;
	const char *file = ENF_AT(&self->tree, "pub/file");

	strcpy(sc->origin, file);
	sc->origin_flags = O_PATH;
	sc->origin_onode = variant->onode;
	sc->link = LINK_PROC_SELF_FD;
	sc->reopen_flags = flags;
	run_attack(_metadata, sc, variant->root ? &ENF_ROOT : &ENF_AS_NOBODY, no_victim, NULL);
	ENF_EXPECT_BY_NAME(&sc->at, flags, file, ENF_ORIGINAL);
}

TEST_F(origin, reopen_read)
{
	origin_attack(_metadata, self, variant, O_RDONLY);
}

TEST_F(origin, reopen_write)
{
	origin_attack(_metadata, self, variant, O_WRONLY);
}

TEST_F(origin, reopen_read_trunc)
{
	origin_attack(_metadata, self, variant, O_RDONLY | O_TRUNC);
}

/*
 * An fd open for appending only (a log handed to a less trusted process, say) reopened for
 * writing without O_APPEND, which writes at offset 0. The holder of the open file itself could
 * clear O_APPEND with fcntl(F_SETFL); another process that can only reach it through
 * /proc/<pid>/fd cannot, which is the case the rule is for. Where the log's directory is open
 * to the opener, it could open the log for writing by name: `(echo hi | tee /dev/stderr) 2>>log`
 * is allowed (refused only under a strict policy). Where the owner closed the directory after
 * handing the fd out, the rule refuses.
 */
FIXTURE(append)
{
	struct enf_tree tree;
	struct scenario *sc;
};

FIXTURE_VARIANT(append)
{
	enum link_kind link;
	bool dir_closed;
};

FIXTURE_VARIANT_ADD(append, own_fd)
{
	.link = LINK_PROC_SELF_FD,
};

FIXTURE_VARIANT_ADD(append, other_process_fd)
{
	.link = LINK_HOLDER_FD,
};

FIXTURE_VARIANT_ADD(append, own_fd_dir_closed)
{
	.link = LINK_PROC_SELF_FD,
	.dir_closed = true,
};

FIXTURE_VARIANT_ADD(append, other_process_fd_dir_closed)
{
	.link = LINK_HOLDER_FD,
	.dir_closed = true,
};

FIXTURE_SETUP(append)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/log"), 0666, ENF_OWNER, ENF_ORIGINAL);
	self->sc = enf_shared(sizeof(*self->sc));
	ASSERT_NE(NULL, self->sc);
}

FIXTURE_TEARDOWN(append)
{
	enf_tree_remove(&self->tree);
	if (self->sc)
		munmap(self->sc, sizeof(*self->sc));
}

static void append_attack(struct __test_metadata *const _metadata, FIXTURE_DATA(append) *self,
			  const FIXTURE_VARIANT(append) *variant, int origin_flags, int flags)
{
	struct scenario *sc = self->sc;
	const char *file = ENF_AT(&self->tree, "pub/log");

	strcpy(sc->origin, file);
	sc->origin_flags = origin_flags;
	sc->link = variant->link;
	sc->reopen_flags = flags;
	if (variant->dir_closed) {
		sc->pause = true;
		strcpy(sc->name_check, file);
	}
	run_attack(_metadata, sc, &ENF_AS_NOBODY,
		   variant->dir_closed ? victim_chmod_0700 : no_victim, ENF_AT(&self->tree, "pub"));
	if (variant->dir_closed) {
		ASSERT_EQ(EACCES, sc->name_err);
		ENF_EXPECT_ATTACK(&sc->at, flags, file, ENF_ORIGINAL);
	} else {
		ENF_EXPECT_BY_NAME(&sc->at, flags, file, ENF_ORIGINAL);
	}
}

TEST_F(append, wronly_without_append)
{
	append_attack(_metadata, self, variant, O_WRONLY | O_APPEND, O_WRONLY);
}

TEST_F(append, rdwr_without_append)
{
	append_attack(_metadata, self, variant, O_RDWR | O_APPEND, O_RDWR);
}

/*
 * O_APPEND kept but O_TRUNC added: the log is emptied all the same. The kernel's own rule for
 * append-only inodes (may_open(): IS_APPEND) refuses O_TRUNC as well as a write without
 * O_APPEND.
 */
TEST_F(append, append_with_trunc)
{
	append_attack(_metadata, self, variant, O_WRONLY | O_APPEND,
		      O_WRONLY | O_APPEND | O_TRUNC);
}

/*
 * The directory lets nobody search it through a group or an ACL entry, then stops: the
 * ancestors rule must follow the same permission logic as the kernel.
 */
FIXTURE(ancestors)
{
	struct enf_tree tree;
	struct scenario *sc;
};

FIXTURE_VARIANT(ancestors)
{
	enum enf_grant grant;
};

FIXTURE_VARIANT_ADD(ancestors, own_group)
{
	.grant = ENF_GRANT_GROUP,
};

FIXTURE_VARIANT_ADD(ancestors, supplementary_group)
{
	.grant = ENF_GRANT_SUPPLEMENTARY,
};

FIXTURE_VARIANT_ADD(ancestors, acl_entry)
{
	.grant = ENF_GRANT_ACL,
};

FIXTURE_SETUP(ancestors)
{
	int err;

	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "victim"), 0700, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "victim/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	err = enf_grant_set(ENF_AT(&self->tree, "victim"), variant->grant);
	if (err == -EOPNOTSUPP) {
		enf_tree_remove(&self->tree);
		SKIP(longjmp(_metadata->env, 1), "no POSIX ACLs on /tmp");
	}
	ASSERT_EQ(0, err);
	self->sc = enf_shared(sizeof(*self->sc));
	ASSERT_NE(NULL, self->sc);
}

FIXTURE_TEARDOWN(ancestors)
{
	enf_tree_remove(&self->tree);
	if (self->sc)
		munmap(self->sc, sizeof(*self->sc));
}

static enum enf_grant revoke_grant;

static int victim_revokes(const char *dir)
{
	return enf_grant_revoke(dir, revoke_grant);
}

static void ancestors_attack(struct __test_metadata *const _metadata,
			     FIXTURE_DATA(ancestors) *self,
			     const FIXTURE_VARIANT(ancestors) *variant, int flags)
{
	struct scenario *sc = self->sc;
	const char *file = ENF_AT(&self->tree, "victim/file");
	struct enf_ident id = enf_grant_ident(variant->grant);

	strcpy(sc->origin, file);
	sc->origin_flags = O_RDONLY;
	sc->link = LINK_PROC_SELF_FD;
	sc->reopen_flags = flags;
	sc->pause = true;
	strcpy(sc->name_check, file);
	revoke_grant = variant->grant;
	run_attack(_metadata, sc, &id, victim_revokes, ENF_AT(&self->tree, "victim"));
	ASSERT_EQ(EACCES, sc->name_err);
	if (flags == O_RDONLY)
		ENF_EXPECT_ALLOWED(&sc->at, flags, file, ENF_ORIGINAL);
	else
		ENF_EXPECT_ATTACK(&sc->at, flags, file, ENF_ORIGINAL);
}

/* Within the fd's access: allowed, however the directory shuts nobody out. */
TEST_F(ancestors, reopen_read_within_fd)
{
	ancestors_attack(_metadata, self, variant, O_RDONLY);
}

TEST_F(ancestors, reopen_write)
{
	ancestors_attack(_metadata, self, variant, O_WRONLY);
}

/* Attacks of their own, one tree each. */
FIXTURE(single)
{
	struct enf_tree tree;
};

FIXTURE_SETUP(single)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
}

FIXTURE_TEARDOWN(single)
{
	enf_tree_remove(&self->tree);
}

static bool exe_is(pid_t pid, const char *path)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	/* Not enf_fmt(): called in a loop, it would recycle the buffer @path may be in. */
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, path);
}

/*
 * CVE-2019-5736's steps, outside any container: open a running program through /proc/<pid>/exe
 * read-only (writing is ETXTBSY while it runs), wait for it to end, then reopen the fd for
 * writing. Here root could open the program for writing by name: allowed, except under a strict
 * policy. The container's shape, where the program lies outside the opener's root, is
 * jail.exe_reopen_write below.
 */
TEST_F(single, exe_reopen_write_trunc)
{
	const char *x = ENF_AT(&self->tree, "x");
	struct enf_attempt at = {};
	int fd, status;
	pid_t pid;

	ASSERT_EQ(0, enf_copy_file("/bin/busybox", x, 0755));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execl(x, "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	ASSERT_TRUE(ENF_WAIT_FOR(exe_is(pid, x), ENF_STEP_TIMEOUT))
	{
		kill(pid, SIGKILL);
		TH_LOG("%d never ran %s", pid, x);
	}
	fd = open(enf_fmt("/proc/%d/exe", pid), O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd)
	{
		kill(pid, SIGKILL);
		TH_LOG("read-only open of /proc/%d/exe: %s", pid, strerror(errno));
	}
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	enf_attempt(&at, enf_fmt("/proc/self/fd/%d", fd), O_WRONLY | O_TRUNC);
	close(fd);
	if (enf_expectation() == ENF_EXPECT_REFUSED && enf_strict()) {
		ASSERT_EQ(EACCES, at.open_err)
		{
			TH_LOG("want EACCES, got %s", at.open_err ? strerror(at.open_err) : "success");
		}
		ASSERT_EQ(1, enf_same_files(x, "/bin/busybox"))
		{
			TH_LOG("%s changed although the open was refused", x);
		}
	} else {
		ASSERT_EQ(0, at.open_err)
		{
			TH_LOG("should show the hole, got %s", strerror(at.open_err));
		}
		ENF_EXPECT_CONTENT(x, ENF_PAYLOAD);
	}
}

/*
 * A file mapped read-only, its fd closed: /proc/self/map_files/<range> leads to it again, and
 * root may follow it. Read-only was all the mapping had, but root may open the file for writing
 * by name: refused only under a strict policy (jail.map_files_reopen_write has the attack).
 */
TEST_F(single, map_files_reopen_write)
{
	const char *file = ENF_AT(&self->tree, "mapped");
	struct enf_attempt at = {};
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int fd;

	enf_mkfile(_metadata, file, 0644, 0, ENF_ORIGINAL);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, close(fd));
	enf_attempt(&at, enf_fmt("/proc/self/map_files/%lx-%lx", (unsigned long)p,
				 (unsigned long)p + page), O_RDWR);
	munmap(p, page);
	ENF_EXPECT_BY_NAME(&at, O_RDWR, file, ENF_ORIGINAL);
}

/*
 * A FIFO of the owner's, which nobody held O_PATH while the directory was open: after the
 * owner closes it, nobody renews its credentials (a capset() to the same set gives a new
 * struct cred, as if the fd had been handed over) and opens the FIFO for writing through the
 * link. runc's exec.fifo is let through because its opener could still open it by name;
 * nobody cannot.
 */
struct fifo_run {
	char fifo[PATH_MAX];
	int err;
};

static int fifo_writer(struct enf_agent *agent, void *arg)
{
	struct fifo_run *fr = arg;
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	int fd, w;

	fd = open(fr->fifo, O_PATH | O_CLOEXEC);
	if (fd < 0 || enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	if (syscall(SYS_capget, &h, d) || syscall(SYS_capset, &h, d))
		return ENF_SETUP_FAILED;
	w = open(enf_fmt("/proc/self/fd/%d", fd), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	fr->err = w < 0 ? errno : 0;
	if (w >= 0)
		close(w);
	close(fd);
	return 0;
}

TEST_F(single, fifo_opath_after_credentials_change)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct fifo_run *fr = enf_shared(sizeof(*fr));
	int rd;

	ASSERT_NE(NULL, fr);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "victim"), 0755, ENF_OWNER, ENF_OWNER);
	strcpy(fr->fifo, ENF_AT(&self->tree, "victim/fifo"));
	ASSERT_EQ(0, mkfifo(fr->fifo, 0666));
	ASSERT_EQ(0, chmod(fr->fifo, 0666));
	rd = open(fr->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, rd);
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, fifo_writer, fr));
	ASSERT_TRUE(enf_agent_wait(&agent));
	ASSERT_EQ(0, victim_chmod_0700(ENF_AT(&self->tree, "victim")));
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	close(rd);
	TH_LOG("write open of the FIFO through the link: %s",
	       fr->err ? strerror(fr->err) : "opened");
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, fr->err);
	} else {
		EXPECT_EQ(0, fr->err);
	}
	munmap(fr, sizeof(*fr));
}

/*
 * A bind mount is a name only where the opener can reach it: hid/data, bound at closed/mnt,
 * after both hid and closed went 0700. nobody's read-only fd of a 0666 file there, reopened
 * for writing: neither the file's own place nor the bind gives it a name.
 */
struct bound_run {
	int fd;
	int err;
};

static int bound_reopen(struct enf_agent *agent, void *arg)
{
	struct bound_run *b = arg;
	int w;

	(void)agent;
	w = open(enf_fmt("/proc/self/fd/%d", b->fd), O_RDWR | O_CLOEXEC);
	b->err = w < 0 ? errno : 0;
	if (w >= 0)
		close(w);
	return 0;
}

TEST_F(single, bind_behind_a_closed_dir_gives_nothing)
{
	struct bound_run *b = enf_shared(sizeof(*b));
	const char *mnt = ENF_AT(&self->tree, "closed/mnt");

	ASSERT_NE(NULL, b);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "hid"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "hid/data"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "hid/data/f"), 0666, 0, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "closed"), 0755, 0, 0);
	enf_mkdir(_metadata, mnt, 0755, 0, 0);
	ASSERT_EQ(0, mount(ENF_AT(&self->tree, "hid/data"), mnt, NULL, MS_BIND, NULL));
	b->fd = open(ENF_AT(&self->tree, "hid/data/f"), O_RDONLY);	/* inherited */
	ASSERT_LE(0, b->fd);
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "hid"), 0700));
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "closed"), 0700));
	EXPECT_EQ(0, enf_run_as(&ENF_AS_NOBODY, bound_reopen, b));
	close(b->fd);
	umount2(mnt, MNT_DETACH);
	TH_LOG("write open through the link: %s", b->err ? strerror(b->err) : "opened");
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, b->err);
	} else {
		EXPECT_EQ(0, b->err);
	}
	munmap(b, sizeof(*b));
}

/*
 * The same upgrade many times over, each in a fresh process, through links that differ in pid,
 * fd number and spelling: a decision that depends on any of them (a hash, a cache, a name
 * read at the wrong offset) shows as some attempts getting through. Root hands nobody a
 * read-only fd of a 0666 file in a directory only root may search: nobody cannot name it.
 */
#define REPEAT_TRIES 1000

struct repeat {
	char file[PATH_MAX];
	int fd;			/* root's read-only fd of file, inherited */
	int try;
	int opened;
	int refused;
	int other;
	int other_errno;
};

static int repeat_one(struct enf_agent *agent, void *arg)
{
	struct repeat *rp = arg;
	int try = rp->try, fd, nfd;
	char link[64];

	(void)agent;
	fd = rp->fd;
	/* fd numbers 10 to 106, clear of the ones open here; three spellings of the link. */
	nfd = dup3(fd, 10 + try % 97, O_CLOEXEC);
	if (nfd < 0)
		return ENF_SETUP_FAILED;
	switch (try % 3) {
	case 0:
		snprintf(link, sizeof(link), "/proc/self/fd/%d", nfd);
		break;
	case 1:
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", getpid(), nfd);
		break;
	default:
		snprintf(link, sizeof(link), "/dev/fd/%d", nfd);
		break;
	}
	fd = open(link, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		__atomic_fetch_add(&rp->opened, 1, __ATOMIC_SEQ_CST);
		if (pwrite(fd, ENF_PAYLOAD, strlen(ENF_PAYLOAD), 0) < 0)
			return ENF_SETUP_FAILED;
		close(fd);
	} else if (errno == EACCES) {
		__atomic_fetch_add(&rp->refused, 1, __ATOMIC_SEQ_CST);
	} else {
		rp->other_errno = errno;
		__atomic_fetch_add(&rp->other, 1, __ATOMIC_SEQ_CST);
	}
	return 0;
}

TEST_F_TIMEOUT(single, upgrade_in_many_fresh_processes, 120)
{
	struct repeat *rp = enf_shared(sizeof(*rp));
	int status;

	ASSERT_NE(NULL, rp);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "priv"), 0700, 0, 0);
	strcpy(rp->file, ENF_AT(&self->tree, "priv/file"));
	enf_mkfile(_metadata, rp->file, 0666, ENF_OWNER, ENF_ORIGINAL);
	rp->fd = open(rp->file, O_RDONLY);
	ASSERT_LE(0, rp->fd);
	for (int i = 0; i < REPEAT_TRIES; i++) {
		rp->try = i;
		status = enf_run_as(&ENF_AS_NOBODY, repeat_one, rp);
		ASSERT_EQ(0, status);
	}
	TH_LOG("%d tries: %d opened, %d refused, %d other", REPEAT_TRIES, rp->opened, rp->refused,
	       rp->other);
	EXPECT_EQ(0, rp->other)
	{
		TH_LOG("unexpected error: %s", strerror(rp->other_errno));
	}
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(REPEAT_TRIES, rp->refused);
		ENF_EXPECT_CONTENT(rp->file, ENF_ORIGINAL);
	} else {
		EXPECT_EQ(REPEAT_TRIES, rp->opened);
		ENF_EXPECT_CONTENT(rp->file, ENF_PAYLOAD);
	}
	close(rp->fd);
	munmap(rp, sizeof(*rp));
}

/*
 * Out of a chroot by proc magic links. A root process enters /jail (a mount namespace of its
 * own, proc mounted at /jail/proc) with an fd to something outside, or finds another process's
 * cwd or root outside it, and reaches a file outside through the link.
 */
enum jail_way {
	JAIL_REOPEN,		/* reopen an fd to the outside file */
	JAIL_CHDIR,		/* chdir("/proc/self/fd/N") to an outside directory, open relative */
	JAIL_WALK,		/* open("/proc/self/fd/N/secret") through an outside directory */
	JAIL_PROC_ROOT,		/* /proc/<outside pid>/root/<path> */
	JAIL_PROC_CWD,		/* /proc/<outside pid>/cwd/secret */
	JAIL_EXE,		/* CVE-2019-5736: /proc/<pid>/exe of an outside program, then write */
	JAIL_MAP_FILES,		/* /proc/self/map_files/<range> of an outside file mapped read-only */
	JAIL_MAP_FILES_SWAP,	/* the same, its link first looked up on a read-write mapping */
};

struct jail_scenario {
	char jail[PATH_MAX];
	char outside[PATH_MAX];	/* a directory, the cwd of holder */
	char secret[PATH_MAX];	/* outside/secret */
	char prog[PATH_MAX];	/* outside/prog, a copy of busybox */
	pid_t holder;		/* a process outside the jail */
	int no_ptrace;		/* the jailed process drops CAP_SYS_PTRACE */
	int old_scope;		/* Yama's ptrace_scope to put back, -1 for none */
	enum jail_way way;
	int origin_flags;	/* JAIL_REOPEN: how the outside file was opened */
	int flags;

	int step_err;		/* errno of the setup step that failed */
	int chdir_err;
	char link_path[PATH_MAX + 64];
	struct enf_attempt at;
};

static int enter_jail(const char *jail)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", enf_fmt("%s/proc", jail), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) ||
	    chroot(jail) || chdir("/"))
		return -errno;
	return 0;
}

static int jailed(struct enf_agent *agent, void *arg)
{
	struct jail_scenario *sc = arg;
	long page = sysconf(_SC_PAGESIZE);
	pid_t prog_pid = -1;
	void *map = NULL;
	int fd = -1, err;

	(void)agent;
	switch (sc->way) {
	case JAIL_REOPEN:
		fd = open(sc->secret, sc->origin_flags | O_CLOEXEC);
		break;
	case JAIL_EXE:
		/* The host's runtime binary, running while the container looks at it. */
		prog_pid = fork();
		if (prog_pid < 0)
			return ENF_SETUP_FAILED;
		if (!prog_pid) {
			execl(sc->prog, "sleep", "1000", (char *)NULL);
			_exit(127);
		}
		if (!ENF_WAIT_FOR(exe_is(prog_pid, sc->prog), ENF_STEP_TIMEOUT)) {
			kill(prog_pid, SIGKILL);
			return ENF_SETUP_FAILED;
		}
		fd = 0;
		break;
	case JAIL_MAP_FILES:
		fd = open(sc->secret, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			break;
		map = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (map == MAP_FAILED)
			return ENF_SETUP_FAILED;
		break;
	case JAIL_MAP_FILES_SWAP:
		/* Kept open for after the link is looked up: mapped there then. */
		fd = open(sc->secret, O_RDONLY | O_CLOEXEC);
		break;
	case JAIL_CHDIR:
	case JAIL_WALK:
		fd = open(sc->outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		break;
	default:
		fd = 0;
		break;
	}
	if (fd < 0) {
		sc->step_err = errno;
		return ENF_SETUP_FAILED;
	}
	err = enter_jail(sc->jail);
	if (err && prog_pid > 0)
		kill(prog_pid, SIGKILL);
	if (err) {
		sc->step_err = -err;
		enf_say("entering %s: %s", sc->jail, strerror(-err));
		return ENF_SETUP_FAILED;
	}
	if (sc->no_ptrace && enf_drop_cap(CAP_SYS_PTRACE)) {
		sc->step_err = errno;
		return ENF_SETUP_FAILED;
	}
	/* Inside: the outside file is not there by name. */
	if (!access(sc->secret, F_OK)) {
		enf_say("%s is visible inside the jail", sc->secret);
		return ENF_SETUP_FAILED;
	}

	switch (sc->way) {
	case JAIL_REOPEN:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/fd/%d", fd);
		enf_attempt(&sc->at, sc->link_path, sc->flags);
		break;
	case JAIL_CHDIR:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/fd/%d", fd);
		if (chdir(sc->link_path)) {
			sc->chdir_err = errno;
			sc->at.done = 1;
			sc->at.open_err = errno;
			break;
		}
		enf_attempt(&sc->at, "secret", sc->flags);
		break;
	case JAIL_WALK:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/fd/%d/secret", fd);
		enf_attempt(&sc->at, sc->link_path, sc->flags);
		break;
	case JAIL_PROC_ROOT:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/%d/root%s", sc->holder,
			 sc->secret);
		enf_attempt(&sc->at, sc->link_path, sc->flags);
		break;
	case JAIL_PROC_CWD:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/%d/cwd/secret", sc->holder);
		enf_attempt(&sc->at, sc->link_path, sc->flags);
		break;
	case JAIL_EXE:
		/* Read-only is all a running program allows (ETXTBSY); then it ends. */
		fd = open(enf_fmt("/proc/%d/exe", prog_pid), O_RDONLY | O_CLOEXEC);
		kill(prog_pid, SIGKILL);
		waitpid(prog_pid, NULL, 0);
		if (fd < 0) {
			sc->step_err = errno;
			return ENF_SETUP_FAILED;
		}
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/fd/%d", fd);
		enf_attempt(&sc->at, sc->link_path, sc->flags);
		break;
	case JAIL_MAP_FILES:
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)map, (unsigned long)map + page);
		enf_attempt(&sc->at, sc->link_path, sc->flags);
		munmap(map, page);
		break;
	case JAIL_MAP_FILES_SWAP: {
		/*
		 * A file of its own, mapped read-write; its map_files link looked up (the
		 * kernel gives the link inode the mapping's access then, and keeps it); then
		 * the outside file mapped read-only at the same address.
		 */
		struct stat st;
		int own = open("/own", O_RDWR | O_CLOEXEC);

		map = own < 0 ? MAP_FAILED :
				mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
		if (map == MAP_FAILED)
			return ENF_SETUP_FAILED;
		snprintf(sc->link_path, sizeof(sc->link_path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)map, (unsigned long)map + page);
		if (stat(sc->link_path, &st) ||
		    mmap(map, page, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) != map)
			return ENF_SETUP_FAILED;
		enf_attempt(&sc->at, sc->link_path, sc->flags);
		munmap(map, page);
		break;
	}
	}
	return 0;
}

FIXTURE(jail)
{
	struct enf_tree tree;
	struct jail_scenario *sc;
};

FIXTURE_SETUP(jail)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "outside"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "outside/secret"), 0644, 0, ENF_ORIGINAL);
	ASSERT_EQ(0, enf_copy_file("/bin/busybox", ENF_AT(&self->tree, "outside/prog"), 0755));
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail/proc"), 0555, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "jail/own"), 0644, 0, ENF_ORIGINAL);
	self->sc = enf_shared(sizeof(*self->sc));
	ASSERT_NE(NULL, self->sc);
	strcpy(self->sc->jail, ENF_AT(&self->tree, "jail"));
	strcpy(self->sc->outside, ENF_AT(&self->tree, "outside"));
	strcpy(self->sc->secret, ENF_AT(&self->tree, "outside/secret"));
	strcpy(self->sc->prog, ENF_AT(&self->tree, "outside/prog"));
	/* The test process is the outsider whose cwd and root the jailed one looks through. */
	ASSERT_EQ(0, chdir(self->sc->outside));
	self->sc->holder = getpid();
	self->sc->old_scope = -1;
}

FIXTURE_TEARDOWN(jail)
{
	if (chdir("/tmp"))
		TH_LOG("chdir(/tmp): %s", strerror(errno));
	if (self->sc && self->sc->old_scope >= 0)
		enf_ptrace_scope_set(self->sc->old_scope);
	enf_tree_remove(&self->tree);
	if (self->sc)
		munmap(self->sc, sizeof(*self->sc));
}

static void jail_run(struct __test_metadata *const _metadata, FIXTURE_DATA(jail) *self,
		     enum jail_way way, int origin_flags, int flags)
{
	struct jail_scenario *sc = self->sc;
	int status;

	sc->way = way;
	sc->origin_flags = origin_flags;
	sc->flags = flags;
	status = enf_run_as(&ENF_ROOT, jailed, sc);
	ASSERT_EQ(0, status)
	{
		TH_LOG("the jailed process could not play its part (exit %d: %s)", status,
		       strerror(sc->step_err));
	}
	TH_LOG("%s through %s with flags %#o: %s",
	       enf_expectation() == ENF_EXPECT_HOLE ? "hole" : "refused", sc->link_path, flags,
	       sc->at.open_err ? strerror(sc->at.open_err) : "opened");
}

static void jail_attack(struct __test_metadata *const _metadata, FIXTURE_DATA(jail) *self,
			enum jail_way way, int flags)
{
	jail_run(_metadata, self, way, O_RDONLY, flags);
	ENF_EXPECT_ATTACK(&self->sc->at, flags, self->sc->secret, ENF_ORIGINAL);
}

/*
 * A read-write fd of a file outside, reopened read-only and read-write: no more than the jailed
 * process holds (a build chroot's stdout that is a log outside it).
 */
TEST_F(jail, reopen_within_fd_read)
{
	jail_run(_metadata, self, JAIL_REOPEN, O_RDWR, O_RDONLY);
	ENF_EXPECT_ALLOWED(&self->sc->at, O_RDONLY, self->sc->secret, ENF_ORIGINAL);
}

TEST_F(jail, reopen_within_fd_write)
{
	jail_run(_metadata, self, JAIL_REOPEN, O_RDWR, O_RDWR);
	ENF_EXPECT_ALLOWED(&self->sc->at, O_RDWR, self->sc->secret, ENF_ORIGINAL);
}

/* A read-only fd of a file outside, reopened for writing: outside its root, no name gives it. */
TEST_F(jail, reopen_write)
{
	jail_attack(_metadata, self, JAIL_REOPEN, O_RDWR);
}

/* CVE-2019-5736: the container overwrites the host's runtime binary through /proc/PID/exe. */
TEST_F(jail, exe_reopen_write)
{
	struct jail_scenario *sc = self->sc;

	jail_run(_metadata, self, JAIL_EXE, O_RDONLY, O_WRONLY | O_TRUNC);
	ASSERT_TRUE(sc->at.done);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		ASSERT_EQ(EACCES, sc->at.open_err)
		{
			TH_LOG("want EACCES, got %s",
			       sc->at.open_err ? strerror(sc->at.open_err) : "success");
		}
		ASSERT_EQ(1, enf_same_files(sc->prog, "/bin/busybox"));
	} else {
		ASSERT_EQ(0, sc->at.open_err);
		ENF_EXPECT_CONTENT(sc->prog, ENF_PAYLOAD);
	}
}

/* A file outside mapped read-only before entering, reopened for writing through map_files. */
TEST_F(jail, map_files_reopen_write)
{
	jail_attack(_metadata, self, JAIL_MAP_FILES, O_RDWR);
}

/*
 * The same, where the link was first looked up while a read-write mapping of a file of its
 * own was at the address: the kernel keeps the link inode's mode from then (the red team's
 * CVE-2019-5736 shape by a confined root).
 */
TEST_F(jail, map_files_swapped_reopen_write)
{
	jail_attack(_metadata, self, JAIL_MAP_FILES_SWAP, O_RDWR);
}

TEST_F(jail, chdir_through_fd)
{
	jail_attack(_metadata, self, JAIL_CHDIR, O_RDWR);
	if (enf_expectation() == ENF_EXPECT_REFUSED)
		EXPECT_EQ(EACCES, self->sc->chdir_err);
}

TEST_F(jail, walk_through_fd)
{
	jail_attack(_metadata, self, JAIL_WALK, O_RDWR);
}

/*
 * An outsider: root without CAP_SYS_PTRACE, its cwd outside/, waiting. The jailed process,
 * root without CAP_SYS_PTRACE as well, may follow its links (same ids, the same capabilities);
 * under Yama's scope 1 it could not take its fds (not its ancestor), so what they show is
 * not the jailed process's: nodefd judges it by name, from inside the jail. (A jailed process
 * with CAP_SYS_PTRACE could trace the outsider and leave the jail anyway: steer_test.c.)
 */
static int outsider(struct enf_agent *agent, void *arg)
{
	struct jail_scenario *sc = arg;

	if (enf_drop_cap(CAP_SYS_PTRACE) || chdir(sc->outside))
		return ENF_SETUP_FAILED;
	return enf_agent_sync(agent) ? ENF_SETUP_FAILED : 0;
}

static void jail_through_outsider(struct __test_metadata *const _metadata,
				  FIXTURE_DATA(jail) *self, enum jail_way way)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };

	self->sc->old_scope = enf_ptrace_scope_set(1);
	if (self->sc->old_scope < 0)
		SKIP(return, "no Yama (" ENF_PTRACE_SCOPE ")");
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_ROOT, outsider, self->sc));
	ASSERT_TRUE(enf_agent_wait(&agent));
	self->sc->holder = agent.pid;
	self->sc->no_ptrace = 1;
	jail_attack(_metadata, self, way, O_RDWR);
	enf_agent_resume(&agent);
	EXPECT_EQ(0, enf_agent_join(&agent));
}

TEST_F(jail, walk_through_proc_pid_root)
{
	jail_through_outsider(_metadata, self, JAIL_PROC_ROOT);
}

TEST_F(jail, walk_through_proc_pid_cwd)
{
	jail_through_outsider(_metadata, self, JAIL_PROC_CWD);
}

int main(int argc, char **argv)
{
	if (enf_expectation() == ENF_EXPECT_UNSET)
		fprintf(stderr, "# attack_test: NODEFD_EXPECT is neither \"hole\" nor \"refused\": "
				"every case will fail\n");
	return test_harness_run(argc, argv);
}
