// SPDX-License-Identifier: GPL-2.0
/* enforce tests - what a path through a magic link can do to a file besides opening it */

/*
 * A path through /proc/self/fd/N reaches the file for any system call that takes a path, not
 * only open(2): truncate(2) destroys its data as open(O_TRUNC) does; linkat(2) of a file that
 * has no name yet (O_TMPFILE) gives it one that then opens as its mode allows; and a path that
 * ends in "/" or "/." after the link opens the link's target all the same. Each must meet the
 * rules an open through the link meets: beyond the fd's access only what the name gives.
 * Each case runs twice: with the directory open to nobody ("by_name": nobody could do the
 * same by name, so it must work with nodefd too), and with the directory closed by its owner
 * after nobody opened the file ("closed": the attack, under NODEFD_EXPECT=hole the kernel lets
 * it through, under =refused EACCES and the file unchanged).
 */

#include "common.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

struct pathop {
	char file[PATH_MAX];
	char dir[PATH_MAX];
	char outer[PATH_MAX];	/* dir's parent, which "closed" closes */
	bool closed;
	int err;		/* errno of the operation through the link, 0 if it worked */
	int link_open_err;	/* linkat cases: opening the new name for writing */
};

FIXTURE(pathops)
{
	struct enf_tree tree;
	struct pathop *p;
};

FIXTURE_VARIANT(pathops)
{
	bool closed;
};

FIXTURE_VARIANT_ADD(pathops, by_name)
{
	.closed = false,
};

FIXTURE_VARIANT_ADD(pathops, closed)
{
	.closed = true,
};

FIXTURE_SETUP(pathops)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "outer"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "outer/dir"), 0777, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "outer/dir/file"), 0666, ENF_OWNER,
		   ENF_ORIGINAL);
	self->p = enf_shared(sizeof(*self->p));
	ASSERT_NE(NULL, self->p);
	strcpy(self->p->file, ENF_AT(&self->tree, "outer/dir/file"));
	strcpy(self->p->dir, ENF_AT(&self->tree, "outer/dir"));
	strcpy(self->p->outer, ENF_AT(&self->tree, "outer"));
	self->p->closed = variant->closed;
}

/* After nobody's first open: in the "closed" variant, the owner closes outer/ and nobody goes on. */
static int opened(struct enf_agent *agent, struct pathop *p)
{
	return p->closed && enf_agent_sync(agent) ? ENF_SETUP_FAILED : 0;
}

/* Runs @fn as nobody; in the "closed" variant, closes outer/ (0700) when it has opened. */
static void run_pathop(struct __test_metadata *const _metadata, struct pathop *p, enf_agent_fn fn)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };

	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, fn, p));
	if (p->closed) {
		ASSERT_TRUE(enf_agent_wait(&agent))
		{
			TH_LOG("nobody ended before the owner acted (exit %d)",
			       enf_agent_join(&agent));
		}
		ASSERT_EQ(0, chmod(p->outer, 0700));
		enf_agent_resume(&agent);
	}
	ASSERT_EQ(0, enf_agent_join(&agent));
}

FIXTURE_TEARDOWN(pathops)
{
	enf_tree_remove(&self->tree);
	if (self->p)
		munmap(self->p, sizeof(*self->p));
}

static int truncate_through(struct enf_agent *agent, struct pathop *p, int flags)
{
	char proc[64];
	int fd = open(p->file, flags | O_CLOEXEC);

	if (fd < 0 || opened(agent, p))
		return ENF_SETUP_FAILED;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	p->err = truncate(proc, 0) ? errno : 0;
	close(fd);
	return 0;
}

static int truncate_rdonly(struct enf_agent *agent, void *arg)
{
	return truncate_through(agent, arg, O_RDONLY);
}

static int truncate_append(struct enf_agent *agent, void *arg)
{
	return truncate_through(agent, arg, O_WRONLY | O_APPEND);
}

/*
 * What came of an operation through the link that asks more than the fd gives: refused with
 * nodefd where the directory was closed (or the fd's access is the only limit: @ceiling), else
 * done.
 */
static void expect_outcome(struct __test_metadata *const _metadata, struct pathop *p,
			   const char *after, bool ceiling)
{
	TH_LOG("%s, through the link: %s", p->closed ? "closed" : "by name",
	       p->err ? strerror(p->err) : "done");
	if (enf_expectation() == ENF_EXPECT_REFUSED && (p->closed || ceiling)) {
		ASSERT_EQ(EACCES, p->err);
		ENF_EXPECT_CONTENT(p->file, ENF_ORIGINAL);
	} else {
		ASSERT_EQ(0, p->err);
		if (after)
			ENF_EXPECT_CONTENT(p->file, after);
	}
}

/* A read-only fd: truncating through its link is writing. */
TEST_F(pathops, truncate_through_rdonly_fd)
{
	run_pathop(_metadata, self->p, truncate_rdonly);
	expect_outcome(_metadata, self->p, "", false);
}

/* An append-only writer may not destroy what is there. */
TEST_F(pathops, truncate_through_append_fd)
{
	run_pathop(_metadata, self->p, truncate_append);
	expect_outcome(_metadata, self->p, "", false);
}

/* A writable fd may truncate, through the link as through ftruncate(2). */
static int truncate_rdwr(struct enf_agent *agent, void *arg)
{
	return truncate_through(agent, arg, O_RDWR);
}

TEST_F(pathops, truncate_through_rdwr_fd_allowed)
{
	run_pathop(_metadata, self->p, truncate_rdwr);
	ASSERT_EQ(0, self->p->err);
	ENF_EXPECT_CONTENT(self->p->file, "");
}

/*
 * An O_TMPFILE file reaches nobody read-only (a reopen that downgrades); nobody names it and
 * opens the name for writing. Its creator held it for writing; this holder never did. A file
 * with no name has none to be opened by: the fd's access is the limit, directory open or not.
 */
static int tmpfile_readonly_link(struct enf_agent *agent, struct pathop *p, bool empty_path)
{
	char proc[64], name[PATH_MAX + 8];
	int rw, ro, fd;

	rw = open(p->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	if (rw < 0 || enf_write_all(rw, ENF_ORIGINAL, strlen(ENF_ORIGINAL)))
		return ENF_SETUP_FAILED;
	fchmod(rw, 0666);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", rw);
	ro = open(proc, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		return ENF_SETUP_FAILED;
	close(rw);
	if (opened(agent, p))
		return ENF_SETUP_FAILED;
	snprintf(name, sizeof(name), "%s/named", p->dir);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", ro);
	if (empty_path)
		p->err = linkat(ro, "", AT_FDCWD, name, AT_EMPTY_PATH) ? errno : 0;
	else
		p->err = linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) ? errno : 0;
	if (!p->err) {
		fd = open(name, O_WRONLY | O_CLOEXEC);
		p->link_open_err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	}
	close(ro);
	return 0;
}

static int tmpfile_link_proc(struct enf_agent *agent, void *arg)
{
	return tmpfile_readonly_link(agent, arg, false);
}

static int tmpfile_link_empty(struct enf_agent *agent, void *arg)
{
	return tmpfile_readonly_link(agent, arg, true);
}

TEST_F(pathops, link_readonly_tmpfile_through_proc)
{
	if (variant->closed)
		SKIP(return, "the new name would be in the closed directory: the kernel refuses it");
	run_pathop(_metadata, self->p, tmpfile_link_proc);
	expect_outcome(_metadata, self->p, NULL, true);
	if (!self->p->err)
		ASSERT_EQ(0, self->p->link_open_err);
}

/* The same by fd; the kernel allows that to an unprivileged caller since 6.10 only. */
TEST_F(pathops, link_readonly_tmpfile_empty_path)
{
	if (variant->closed)
		SKIP(return, "the new name would be in the closed directory: the kernel refuses it");
	run_pathop(_metadata, self->p, tmpfile_link_empty);
	if (self->p->err == ENOENT) {
		TH_LOG("the kernel refuses linkat(AT_EMPTY_PATH) without CAP_DAC_READ_SEARCH");
		return;
	}
	expect_outcome(_metadata, self->p, NULL, true);
}

/* An O_PATH fd of a directory; its listing opened through "/proc/self/fd/N" + TAIL. */
static const char *dir_tail;

static int list_dir(struct enf_agent *agent, void *arg)
{
	struct pathop *p = arg;
	char proc[64];
	int fd, d;

	fd = open(p->dir, O_PATH | O_CLOEXEC);
	if (fd < 0 || opened(agent, p))
		return ENF_SETUP_FAILED;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d%s", fd, dir_tail);
	d = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	p->err = d < 0 ? errno : 0;
	if (d >= 0)
		close(d);
	close(fd);
	return 0;
}

static void list_dir_case(struct __test_metadata *const _metadata, FIXTURE_DATA(pathops) *self,
			  const char *tail)
{
	dir_tail = tail;
	run_pathop(_metadata, self->p, list_dir);
	expect_outcome(_metadata, self->p, NULL, false);
}

TEST_F(pathops, opath_dir_read)
{
	list_dir_case(_metadata, self, "");
}

TEST_F(pathops, opath_dir_read_trailing_slash)
{
	list_dir_case(_metadata, self, "/");
}

TEST_F(pathops, opath_dir_read_trailing_dot)
{
	list_dir_case(_metadata, self, "/.");
}

TEST_F(pathops, opath_dir_read_trailing_dot_slashes)
{
	list_dir_case(_metadata, self, "//.//./");
}

/*
 * The link as the last component of a symlink that is itself followed in the middle of another
 * symlink's target: l -> m/file, m -> /proc/self/fd/N[TAIL], open(l). Nothing follows the
 * link's name in the string it is read from (m's target), yet the walk goes on to "file", in
 * the open's last walk (l is the open's trailing link). Opening "file" for writing through the
 * link of an O_PATH fd of its directory: by name only if the directory can still be searched.
 */
static const char *nested_tail;

static int open_nested(struct enf_agent *agent, void *arg)
{
	char m[64], l[64], target[PATH_MAX];
	struct pathop *p = arg;
	int fd, f;

	fd = open(p->dir, O_PATH | O_CLOEXEC);
	if (fd < 0 || opened(agent, p))
		return ENF_SETUP_FAILED;
	snprintf(m, sizeof(m), "/tmp/nested-m.%d", getpid());
	snprintf(l, sizeof(l), "/tmp/nested-l.%d", getpid());
	snprintf(target, sizeof(target), "/proc/self/fd/%d%s", fd, nested_tail);
	if (symlink(target, m))
		return ENF_SETUP_FAILED;
	snprintf(target, sizeof(target), "%s/file", m);
	if (symlink(target, l)) {
		unlink(m);
		return ENF_SETUP_FAILED;
	}
	f = open(l, O_WRONLY | O_CLOEXEC);
	p->err = f < 0 ? errno : 0;
	if (f >= 0) {
		if (pwrite(f, ENF_PAYLOAD, strlen(ENF_PAYLOAD), 0) != (ssize_t)strlen(ENF_PAYLOAD))
			p->err = EIO;
		close(f);
	}
	unlink(l);
	unlink(m);
	close(fd);
	return 0;
}

static void nested_case(struct __test_metadata *const _metadata, FIXTURE_DATA(pathops) *self,
			const char *tail)
{
	nested_tail = tail;
	run_pathop(_metadata, self->p, open_nested);
	expect_outcome(_metadata, self->p, ENF_PAYLOAD, false);
}

TEST_F(pathops, nested_link_last_in_its_symlink)
{
	nested_case(_metadata, self, "");
}

TEST_F(pathops, nested_link_last_in_its_symlink_dot)
{
	nested_case(_metadata, self, "/.");
}

TEST_HARNESS_MAIN
