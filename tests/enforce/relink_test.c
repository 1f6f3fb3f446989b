// SPDX-License-Identifier: GPL-2.0
/* enforce tests - giving an open file a new name: linkat() through an fd or a magic link */

/*
 * linkat(fd, "", dir, name, AT_EMPTY_PATH) names the file behind fd anew, and the new name is
 * then open to whatever the file's own mode allows: a read-only holder of a file in a closed
 * directory gets a writable file, with no magic link at all. Up to 6.9 the kernel allows it
 * only with CAP_DAC_READ_SEARCH; since 6.10, for an fd the caller opened with its own
 * credentials. linkat("/proc/self/fd/N", ..., AT_SYMLINK_FOLLOW) does the same through the
 * magic link on every kernel.
 *
 * Each attack runs under NODEFD_EXPECT=hole (it must work where the kernel allows it) and
 * =refused (EACCES, no new name, the file unchanged). The legitimate uses must work either way
 * wherever the kernel allows them.
 */

#include <sys/utsname.h>

#include "common.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* Since 6.10 an fd opened with the caller's own credentials may be linked without privilege. */
static bool kernel_links_own_fds(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 10);
}

struct relink {
	char origin[PATH_MAX];	/* opened first, while its directory is open to the attacker */
	char target[PATH_MAX];	/* the new name */
	bool tmpfile;		/* origin is a directory: O_TMPFILE in it */
	bool through_proc;	/* linkat("/proc/self/fd/N", AT_SYMLINK_FOLLOW), not AT_EMPTY_PATH */
	bool pause;		/* stop after the first open, for the victim to act */
	int link_err;		/* 0: linked, else errno */
	struct enf_attempt at;	/* the open of the new name for writing */
};

static int relinker(struct enf_agent *agent, void *arg)
{
	struct relink *r = arg;
	char proc[64];
	int fd, ret;

	if (r->tmpfile)
		fd = open(r->origin, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	else
		fd = open(r->origin, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		enf_say("first open of %s: %s", r->origin, strerror(errno));
		return ENF_SETUP_FAILED;
	}
	if (r->tmpfile && enf_write_all(fd, ENF_ORIGINAL, strlen(ENF_ORIGINAL)))
		return ENF_SETUP_FAILED;
	if (r->pause && enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	if (r->through_proc) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		ret = linkat(AT_FDCWD, proc, AT_FDCWD, r->target, AT_SYMLINK_FOLLOW);
	} else {
		ret = linkat(fd, "", AT_FDCWD, r->target, AT_EMPTY_PATH);
	}
	r->link_err = ret ? errno : 0;
	if (!ret)
		enf_attempt(&r->at, r->target, O_WRONLY);
	close(fd);
	return 0;
}

/* link(2) of pub/mine to pub/also, by name. */
static int plain_link_as(struct enf_agent *agent, void *arg)
{
	const char *tree = arg;

	(void)agent;
	return link(enf_fmt("%s/pub/mine", tree), enf_fmt("%s/pub/also", tree)) ? errno : 0;
}

FIXTURE(relink)
{
	struct enf_tree tree;
	struct relink *r;
};

FIXTURE_SETUP(relink)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "victim"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "victim/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	/* Where anyone may make names, as /tmp. */
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0777, 0, 0);
	self->r = enf_shared(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
}

FIXTURE_TEARDOWN(relink)
{
	enf_tree_remove(&self->tree);
	if (self->r)
		munmap(self->r, sizeof(*self->r));
}

/* nobody opens victim/file read-only, the owner closes victim, nobody links and writes. */
static void relink_attack(struct __test_metadata *const _metadata, FIXTURE_DATA(relink) *self,
			  bool through_proc)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct relink *r = self->r;
	const char *file = ENF_AT(&self->tree, "victim/file");
	struct stat st;

	strcpy(r->origin, file);
	strcpy(r->target, ENF_AT(&self->tree, "pub/renamed"));
	r->through_proc = through_proc;
	r->pause = true;
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, relinker, r));
	ASSERT_TRUE(enf_agent_wait(&agent));
	/* The owner closes the directory, as in the article. */
	ASSERT_EQ(0, enf_run_as(&ENF_AS_OWNER, enf_close_dir, (void *)ENF_AT(&self->tree, "victim")));
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	TH_LOG("linkat %s: %s", through_proc ? "through /proc/self/fd" : "AT_EMPTY_PATH",
	       r->link_err ? strerror(r->link_err) : "linked");

	if (!through_proc && !kernel_links_own_fds()) {
		/* The kernel itself refuses: no capability, no AT_EMPTY_PATH. */
		ASSERT_EQ(ENOENT, r->link_err);
	} else if (enf_expectation() == ENF_EXPECT_REFUSED) {
		ASSERT_EQ(EACCES, r->link_err);
		ASSERT_EQ(-1, lstat(r->target, &st));
	} else {
		ASSERT_EQ(0, r->link_err);
		ASSERT_EQ(0, r->at.open_err)
		{
			TH_LOG("open of the new name for writing: %s", strerror(r->at.open_err));
		}
	}
	if (r->link_err)
		ENF_EXPECT_CONTENT(file, ENF_ORIGINAL);
	else
		ENF_EXPECT_CONTENT(file, ENF_PAYLOAD);
}

TEST_F(relink, attack_empty_path)
{
	relink_attack(_metadata, self, false);
}

TEST_F(relink, attack_proc_fd_follow)
{
	relink_attack(_metadata, self, true);
}

/* A legitimate link by nobody: must work wherever the kernel allows it, nodefd or not. */
static void relink_legit(struct __test_metadata *const _metadata, FIXTURE_DATA(relink) *self,
			 const struct enf_ident *id, const char *origin, bool tmpfile,
			 bool through_proc)
{
	struct relink *r = self->r;
	bool capable = id->uid == 0;

	strcpy(r->origin, origin);
	strcpy(r->target, ENF_AT(&self->tree, "pub/named"));
	r->tmpfile = tmpfile;
	r->through_proc = through_proc;
	ASSERT_EQ(0, enf_run_as(id, relinker, r));
	TH_LOG("linkat of %s%s: %s", tmpfile ? "an O_TMPFILE in " : "", origin,
	       r->link_err ? strerror(r->link_err) : "linked");
	if (!through_proc && !capable && !kernel_links_own_fds()) {
		ASSERT_EQ(ENOENT, r->link_err);
		return;
	}
	ASSERT_EQ(0, r->link_err);
	ASSERT_EQ(0, r->at.open_err);
	ASSERT_EQ(0, r->at.io_err);
}

/* The O_TMPFILE idiom: write a file, then give it its name in one step. */
TEST_F(relink, tmpfile_empty_path)
{
	relink_legit(_metadata, self, &ENF_AS_NOBODY, ENF_AT(&self->tree, "pub"), true, false);
}

/* The same for callers without the capability before 6.10 (man 2 open). */
TEST_F(relink, tmpfile_proc_fd_follow)
{
	relink_legit(_metadata, self, &ENF_AS_NOBODY, ENF_AT(&self->tree, "pub"), true, true);
}

/* A file of nobody's own, in a directory it may search. */
TEST_F(relink, own_file_empty_path)
{
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/mine"), 0644, ENF_NOBODY, ENF_ORIGINAL);
	relink_legit(_metadata, self, &ENF_AS_NOBODY, ENF_AT(&self->tree, "pub/mine"), false,
		     false);
}

/* Root may search every directory: its link of a file in a closed one stands. */
TEST_F(relink, root_empty_path_closed_dir)
{
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "victim"), 0700));
	relink_legit(_metadata, self, &ENF_ROOT, ENF_AT(&self->tree, "victim/file"), false, false);
}

/* link(2) by name is not fd-based: never judged. */
TEST_F(relink, plain_link)
{
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/mine"), 0644, ENF_NOBODY, ENF_ORIGINAL);
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, plain_link_as, (void *)self->tree.path));
}

TEST_HARNESS_MAIN
