// SPDX-License-Identifier: GPL-2.0
/* enforce tests - what a path through a magic link can do to a file besides opening it */

/*
 * A path through /proc/self/fd/N reaches the file for any system call that takes a path, not
 * only open(2): truncate(2) destroys its data as open(O_TRUNC) does; linkat(2) of a file that
 * has no name yet (O_TMPFILE) gives it one that then opens as its mode allows; and a path that
 * ends in "/" or "/." after the link opens the link's target all the same. Each must meet the
 * rules an open through the link meets. The attacks run under NODEFD_EXPECT=hole (the kernel
 * lets them through) and =refused (EACCES, the file unchanged); the directory stays open to the
 * attacker, so only the upgrade and append rules stand in the way.
 */

#include "common.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

struct pathop {
	char file[PATH_MAX];
	char dir[PATH_MAX];
	int err;		/* errno of the operation through the link, 0 if it worked */
	int link_open_err;	/* linkat cases: opening the new name for writing */
};

FIXTURE(pathops)
{
	struct enf_tree tree;
	struct pathop *p;
};

FIXTURE_SETUP(pathops)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "dir"), 0777, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "dir/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	self->p = enf_shared(sizeof(*self->p));
	ASSERT_NE(NULL, self->p);
	strcpy(self->p->file, ENF_AT(&self->tree, "dir/file"));
	strcpy(self->p->dir, ENF_AT(&self->tree, "dir"));
}

FIXTURE_TEARDOWN(pathops)
{
	enf_tree_remove(&self->tree);
	if (self->p)
		munmap(self->p, sizeof(*self->p));
}

static int truncate_through(struct pathop *p, int flags)
{
	char proc[64];
	int fd = open(p->file, flags | O_CLOEXEC);

	if (fd < 0)
		return ENF_SETUP_FAILED;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	p->err = truncate(proc, 0) ? errno : 0;
	close(fd);
	return 0;
}

static int truncate_rdonly(struct enf_agent *agent, void *arg)
{
	(void)agent;
	return truncate_through(arg, O_RDONLY);
}

static int truncate_append(struct enf_agent *agent, void *arg)
{
	(void)agent;
	return truncate_through(arg, O_WRONLY | O_APPEND);
}

static void expect_refused_or_hole(struct __test_metadata *const _metadata, struct pathop *p,
				   const char *after_hole)
{
	TH_LOG("through the link: %s", p->err ? strerror(p->err) : "done");
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		ASSERT_EQ(EACCES, p->err);
		ENF_EXPECT_CONTENT(p->file, ENF_ORIGINAL);
	} else {
		ASSERT_EQ(0, p->err);
		if (after_hole)
			ENF_EXPECT_CONTENT(p->file, after_hole);
	}
}

/* A read-only fd: truncating through its link is writing. */
TEST_F(pathops, truncate_through_rdonly_fd)
{
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, truncate_rdonly, self->p));
	expect_refused_or_hole(_metadata, self->p, "");
}

/* An append-only writer may not destroy what is there. */
TEST_F(pathops, truncate_through_append_fd)
{
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, truncate_append, self->p));
	expect_refused_or_hole(_metadata, self->p, "");
}

/* A writable fd may truncate, through the link as through ftruncate(2). */
static int truncate_rdwr(struct enf_agent *agent, void *arg)
{
	(void)agent;
	return truncate_through(arg, O_RDWR);
}

TEST_F(pathops, truncate_through_rdwr_fd_allowed)
{
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, truncate_rdwr, self->p));
	ASSERT_EQ(0, self->p->err);
	ENF_EXPECT_CONTENT(self->p->file, "");
}

/*
 * An O_TMPFILE file reaches nobody read-only (a reopen that downgrades); nobody names it and
 * opens the name for writing. Its creator held it for writing; this holder never did.
 */
static int tmpfile_readonly_link(struct pathop *p, bool empty_path)
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
	(void)agent;
	return tmpfile_readonly_link(arg, false);
}

static int tmpfile_link_empty(struct enf_agent *agent, void *arg)
{
	(void)agent;
	return tmpfile_readonly_link(arg, true);
}

TEST_F(pathops, link_readonly_tmpfile_through_proc)
{
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, tmpfile_link_proc, self->p));
	expect_refused_or_hole(_metadata, self->p, NULL);
	if (!self->p->err)
		ASSERT_EQ(0, self->p->link_open_err);
}

/* The same by fd; the kernel allows that to an unprivileged caller since 6.10 only. */
TEST_F(pathops, link_readonly_tmpfile_empty_path)
{
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, tmpfile_link_empty, self->p));
	if (self->p->err == ENOENT) {
		TH_LOG("the kernel refuses linkat(AT_EMPTY_PATH) without CAP_DAC_READ_SEARCH");
		return;
	}
	expect_refused_or_hole(_metadata, self->p, NULL);
}

/* An O_PATH fd of a directory; its listing opened through "/proc/self/fd/N" + TAIL. */
static const char *dir_tail;

static int list_dir(struct enf_agent *agent, void *arg)
{
	struct pathop *p = arg;
	char proc[64];
	int fd, d;

	(void)agent;
	fd = open(p->dir, O_PATH | O_CLOEXEC);
	if (fd < 0)
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
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, list_dir, self->p));
	expect_refused_or_hole(_metadata, self->p, NULL);
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

TEST_HARNESS_MAIN
