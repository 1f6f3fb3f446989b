// SPDX-License-Identifier: GPL-2.0
/* enforce tests - capabilities in a user namespace count as the kernel counts them */

/*
 * The root of a user namespace (ids 100000-165535 here, as a rootless container's) holds
 * CAP_DAC_READ_SEARCH in that namespace: the kernel lets it search a directory whose owner and
 * group the namespace maps, whatever the mode (capable_wrt_inode_uidgid()), and not one whose
 * owner it does not map. The ancestors rule must follow for a reopen beyond the fd's access
 * (read-only fd, read-write reopen): below a mapped 0700 directory it is allowed; below an
 * unmapped one that was closed, refused.
 */

#include "common.h"

#define NS_BASE 100000
#define NS_COUNT 65536

struct nsrun {
	char file[PATH_MAX];
	char closed_dir[PATH_MAX];	/* chmod 0700 by its owner after the first open, or "" */
	int first_err;
	int name_err;
	struct enf_attempt at;
};

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		ret = -errno;
	close(fd);
	return ret;
}

/* A new user namespace, mapped by the test (ns_start()), and its root: 0 or -1. */
static int ns_become_root(struct enf_agent *agent)
{
	if (unshare(CLONE_NEWUSER))
		return -1;
	if (enf_agent_sync(agent))	/* the test writes the id maps */
		return -1;
	return setresgid(0, 0, 0) || setresuid(0, 0, 0) ? -1 : 0;
}

/* In the namespace: become its root, open read-only, wait for the test, reopen read-write. */
static int ns_root(struct enf_agent *agent, void *arg)
{
	struct nsrun *r = arg;
	char proc[64];
	int fd, f;

	if (ns_become_root(agent))
		return ENF_SETUP_FAILED;
	fd = open(r->file, O_RDONLY | O_CLOEXEC);
	r->first_err = fd < 0 ? errno : 0;
	if (fd < 0)
		return 0;
	if (r->closed_dir[0] && enf_agent_sync(agent))	/* the owner closes the directory */
		return ENF_SETUP_FAILED;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	enf_attempt(&r->at, proc, O_RDWR);
	f = open(r->file, O_RDONLY | O_CLOEXEC);
	r->name_err = f < 0 ? errno : 0;
	if (f >= 0)
		close(f);
	close(fd);
	return 0;
}

/* Starts @fn in an agent, maps its new namespace's 0-NS_COUNT to NS_BASE, lets it go on. */
static void ns_start(struct __test_metadata *const _metadata, struct enf_agent *agent,
		     int (*fn)(struct enf_agent *, void *), struct nsrun *r)
{
	char map[64];

	ASSERT_EQ(0, enf_agent_start(agent, &ENF_ROOT, fn, r));
	ASSERT_TRUE(enf_agent_wait(agent));
	snprintf(map, sizeof(map), "0 %d %d\n", NS_BASE, NS_COUNT);
	ASSERT_EQ(0, write_file(enf_fmt("/proc/%d/uid_map", agent->pid), map));
	ASSERT_EQ(0, write_file(enf_fmt("/proc/%d/gid_map", agent->pid), map));
	enf_agent_resume(agent);
}

static void run_ns(struct __test_metadata *const _metadata, struct nsrun *r)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };

	ns_start(_metadata, &agent, ns_root, r);
	if (r->closed_dir[0]) {
		ASSERT_TRUE(enf_agent_wait(&agent));
		ASSERT_EQ(0, chmod(r->closed_dir, 0700));
		enf_agent_resume(&agent);
	}
	ASSERT_EQ(0, enf_agent_join(&agent));
	ASSERT_EQ(0, r->first_err)
	{
		TH_LOG("first open of %s in the namespace: %s", r->file, strerror(r->first_err));
	}
	TH_LOG("reopen of %s: %s", r->file, r->at.open_err ? strerror(r->at.open_err) : "opened");
}

FIXTURE(userns)
{
	struct enf_tree tree;
	struct nsrun *r;
};

FIXTURE_SETUP(userns)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	self->r = enf_shared(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
}

FIXTURE_TEARDOWN(userns)
{
	enf_tree_remove(&self->tree);
	if (self->r)
		munmap(self->r, sizeof(*self->r));
}

/* A 0700 directory of another user of the container: its root may search it. */
TEST_F(userns, ns_root_in_mapped_private_dir)
{
	const char *dir = ENF_AT(&self->tree, "inner");

	enf_mkdir(_metadata, dir, 0700, NS_BASE + 1, NS_BASE + 1);
	strcpy(self->r->file, ENF_AT(&self->tree, "inner/file"));
	enf_mkfile(_metadata, self->r->file, 0666, NS_BASE + 1, ENF_ORIGINAL);
	run_ns(_metadata, self->r);
	ASSERT_EQ(0, self->r->name_err);
	ENF_EXPECT_ALLOWED(&self->r->at, O_RDWR, self->r->file, ENF_ORIGINAL);
}

/* A directory of a host user the namespace does not map, closed after the first open. */
TEST_F(userns, ns_root_in_closed_unmapped_dir)
{
	const char *dir = ENF_AT(&self->tree, "outer");

	enf_mkdir(_metadata, dir, 0755, ENF_OWNER, ENF_OWNER);
	strcpy(self->r->file, ENF_AT(&self->tree, "outer/file"));
	enf_mkfile(_metadata, self->r->file, 0666, ENF_OWNER, ENF_ORIGINAL);
	strcpy(self->r->closed_dir, dir);
	run_ns(_metadata, self->r);
	ASSERT_EQ(EACCES, self->r->name_err);
	ENF_EXPECT_ATTACK(&self->r->at, O_RDWR, self->r->file, ENF_ORIGINAL);
}

/*
 * A filesystem mounted inside the namespace (a rootless container's tmpfs, devpts): the mount
 * carries the namespace as its superblock does, and is not idmapped. Its root walks a directory
 * fd of it through /proc/self/fd, as crun does to mount devpts at dev/pts.
 */
static int ns_root_own_tmpfs(struct enf_agent *agent, void *arg)
{
	struct nsrun *r = arg;
	char proc[64];
	int dfd, f;

	if (ns_become_root(agent) || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", r->file, "tmpfs", 0, "mode=0755") ||
	    mkdir(enf_fmt("%s/dev", r->file), 0700) ||
	    mkdir(enf_fmt("%s/dev/pts", r->file), 0755))
		return ENF_SETUP_FAILED;
	dfd = open(enf_fmt("%s/dev", r->file), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ENF_SETUP_FAILED;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d/pts", dfd);
	f = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	r->at.done = 1;
	r->at.open_err = f < 0 ? errno : 0;
	if (f >= 0)
		close(f);
	close(dfd);
	return 0;
}

TEST_F(userns, ns_root_walks_a_tmpfs_of_its_own)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };

	enf_mkdir(_metadata, ENF_AT(&self->tree, "mnt"), 0755, NS_BASE, NS_BASE);
	strcpy(self->r->file, ENF_AT(&self->tree, "mnt"));
	ns_start(_metadata, &agent, ns_root_own_tmpfs, self->r);
	ASSERT_EQ(0, enf_agent_join(&agent));
	ASSERT_TRUE(self->r->at.done);
	EXPECT_EQ(0, self->r->at.open_err)
	{
		TH_LOG("walk through the directory fd: %s", strerror(self->r->at.open_err));
	}
}

TEST_HARNESS_MAIN
