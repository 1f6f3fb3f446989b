// SPDX-License-Identifier: GPL-2.0
/* enforce tests - the ancestors rule where the kernel's answer takes many groups, ACL entries
 * or directories */

/*
 * The kernel searches all of a task's supplementary groups, every ACL entry and every
 * directory up to the root; so must nodefd, or it refuses what the kernel allows (a user in
 * many groups, a long ACL, a deep tree) and, worse, allows what the kernel refuses (a group
 * that shuts its members out, past the groups nodefd looked at). Each case is named for what
 * it protects. The attacks run under NODEFD_EXPECT=hole and =refused; the legitimate cases
 * must work under both.
 */

#include "common.h"
#include "nodefd.h"

#define MANY_GROUPS 40
#define LATE_GROUP 5035		/* the 36th of nobody's groups 5000..5039, in sorted order */
#define LONG_ACL 20		/* named entries before nobody's own */
#define DEEP 100		/* directories between the tree and the file */

static struct enf_ident many_groups(void)
{
	struct enf_ident id = ENF_AS_NOBODY;

	id.ngroups = MANY_GROUPS;
	for (int i = 0; i < MANY_GROUPS; i++)
		id.groups[i] = 5000 + i;
	return id;
}

struct reopen {
	char file[PATH_MAX];
	bool pause;		/* stop after the first open, for the owner to act */
	int name_err;		/* the opener's own open by name, after the reopen */
	struct enf_attempt at;
};

/*
 * Opens @file read-only, waits if asked, reopens it read-write through /proc/self/fd: beyond
 * the fd's access, so allowed only where the opener could open the file by name, which is what
 * these cases weigh.
 */
static int reopener(struct enf_agent *agent, void *arg)
{
	struct reopen *r = arg;
	char proc[64];
	int fd, f;

	fd = open(r->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		enf_say("first open of %s: %s", r->file, strerror(errno));
		return ENF_SETUP_FAILED;
	}
	if (r->pause && enf_agent_sync(agent))
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

/* A named-user ACL entry for each of LONG_ACL users, then @nobody_perm for nobody. */
static int set_long_acl(const char *path, unsigned int nobody_perm, unsigned int other_perm)
{
	struct {
		struct posix_acl_xattr_header h;
		struct posix_acl_xattr_entry e[LONG_ACL + 5];
	} acl = { .h = { .a_version = POSIX_ACL_XATTR_VERSION } };
	int n = 0;

	acl.e[n++] = (struct posix_acl_xattr_entry){ ACL_USER_OBJ, 7, ACL_UNDEFINED_ID };
	for (int i = 0; i < LONG_ACL; i++)
		acl.e[n++] = (struct posix_acl_xattr_entry){ ACL_USER, 7, 3000 + i };
	/* Entries are sorted by id: nobody (65534) comes last. */
	acl.e[n++] = (struct posix_acl_xattr_entry){ ACL_USER, nobody_perm, ENF_NOBODY };
	acl.e[n++] = (struct posix_acl_xattr_entry){ ACL_GROUP_OBJ, 0, ACL_UNDEFINED_ID };
	acl.e[n++] = (struct posix_acl_xattr_entry){ ACL_MASK, 7, ACL_UNDEFINED_ID };
	acl.e[n++] = (struct posix_acl_xattr_entry){ ACL_OTHER, other_perm, ACL_UNDEFINED_ID };
	return setxattr(path, "system.posix_acl_access", &acl,
			sizeof(acl.h) + n * sizeof(acl.e[0]), 0) ? -errno : 0;
}

FIXTURE(limits)
{
	struct enf_tree tree;
	struct reopen *r;
};

FIXTURE_SETUP(limits)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	self->r = enf_shared(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
}

FIXTURE_TEARDOWN(limits)
{
	enf_tree_remove(&self->tree);
	if (self->r)
		munmap(self->r, sizeof(*self->r));
}

/* Runs reopener as @id; with @victim_acts, the owner acts on victim/ (@victim) meanwhile. */
static void run_reopen(struct __test_metadata *const _metadata, FIXTURE_DATA(limits) *self,
		       const struct enf_ident *id, const char *file, const char *victim,
		       int (*victim_acts)(const char *))
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct reopen *r = self->r;

	strcpy(r->file, file);
	r->pause = victim_acts != NULL;
	ASSERT_EQ(0, enf_agent_start(&agent, id, reopener, r));
	if (victim_acts) {
		ASSERT_TRUE(enf_agent_wait(&agent));
		ASSERT_EQ(0, victim_acts(victim));
		enf_agent_resume(&agent);
	}
	ASSERT_EQ(0, enf_agent_join(&agent));
	TH_LOG("reopen of %s: %s", file, r->at.open_err ? strerror(r->at.open_err) : "opened");
}

/* The group may no longer search victim/, "other" still may. */
static int shut_group_out(const char *victim)
{
	return chmod(victim, 0705) ? -errno : 0;
}

/*
 * A directory whose group may not search it although "other" may (0705): the kernel checks a
 * member's group bits, however many groups it has, and refuses. Looking at only the first
 * groups would let a member whose group comes late through as "other".
 */
TEST_F(limits, late_group_shut_out)
{
	const char *victim = ENF_AT(&self->tree, "victim");
	const char *file = ENF_AT(&self->tree, "victim/file");
	struct enf_ident id = many_groups();

	enf_mkdir(_metadata, victim, 0755, ENF_OWNER, LATE_GROUP);
	enf_mkfile(_metadata, file, 0666, ENF_OWNER, ENF_ORIGINAL);
	run_reopen(_metadata, self, &id, file, victim, shut_group_out);
	ASSERT_EQ(EACCES, self->r->name_err);
	ENF_EXPECT_ATTACK(&self->r->at, O_RDWR, file, ENF_ORIGINAL);
}

/* The same group granting search (0710): its member reopens its own fd. */
TEST_F(limits, late_group_grants)
{
	const char *victim = ENF_AT(&self->tree, "victim");
	const char *file = ENF_AT(&self->tree, "victim/file");
	struct enf_ident id = many_groups();

	enf_mkdir(_metadata, victim, 0710, ENF_OWNER, LATE_GROUP);
	enf_mkfile(_metadata, file, 0666, ENF_OWNER, ENF_ORIGINAL);
	run_reopen(_metadata, self, &id, file, NULL, NULL);
	ASSERT_EQ(0, self->r->name_err);
	ENF_EXPECT_ALLOWED(&self->r->at, O_RDWR, file, ENF_ORIGINAL);
}

/* An ACL longer than a few entries, the one for nobody last, granting search. */
TEST_F(limits, long_acl_grants)
{
	const char *victim = ENF_AT(&self->tree, "victim");
	const char *file = ENF_AT(&self->tree, "victim/file");
	int err;

	enf_mkdir(_metadata, victim, 0700, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, file, 0666, ENF_OWNER, ENF_ORIGINAL);
	err = set_long_acl(victim, 1, 0);
	if (err == -EOPNOTSUPP)
		SKIP(return, "no POSIX ACLs on /tmp");
	ASSERT_EQ(0, err);
	run_reopen(_metadata, self, &ENF_AS_NOBODY, file, NULL, NULL);
	ASSERT_EQ(0, self->r->name_err);
	ENF_EXPECT_ALLOWED(&self->r->at, O_RDWR, file, ENF_ORIGINAL);
}

/* The same ACL with nobody's entry empty while "other" may search: the kernel refuses. */
static int shut_nobody_out(const char *victim)
{
	return set_long_acl(victim, 0, 1);
}

TEST_F(limits, long_acl_shuts_out)
{
	const char *victim = ENF_AT(&self->tree, "victim");
	const char *file = ENF_AT(&self->tree, "victim/file");
	int err;

	enf_mkdir(_metadata, victim, 0700, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, file, 0666, ENF_OWNER, ENF_ORIGINAL);
	err = set_long_acl(victim, 1, 0);
	if (err == -EOPNOTSUPP)
		SKIP(return, "no POSIX ACLs on /tmp");
	ASSERT_EQ(0, err);
	run_reopen(_metadata, self, &ENF_AS_NOBODY, file, victim, shut_nobody_out);
	ASSERT_EQ(EACCES, self->r->name_err);
	ENF_EXPECT_ATTACK(&self->r->at, O_RDWR, file, ENF_ORIGINAL);
}

/* A file DEEP directories down, all open to everyone: nothing stands in the way. */
TEST_F(limits, deep_tree)
{
	char path[PATH_MAX];
	size_t len;

	snprintf(path, sizeof(path), "%s", self->tree.path);
	for (int i = 0; i < DEEP; i++) {
		len = strlen(path);
		ASSERT_LT(len + 4, sizeof(path));
		snprintf(path + len, sizeof(path) - len, "/d%d", i % 10);
		ASSERT_EQ(0, mkdir(path, 0755));
	}
	len = strlen(path);
	snprintf(path + len, sizeof(path) - len, "/file");
	enf_mkfile(_metadata, path, 0666, ENF_OWNER, ENF_ORIGINAL);
	run_reopen(_metadata, self, &ENF_AS_NOBODY, path, NULL, NULL);
	ASSERT_EQ(0, self->r->name_err);
	ENF_EXPECT_ALLOWED(&self->r->at, O_RDWR, path, ENF_ORIGINAL);
}

/*
 * Root, unconfined, looks through another user's cwd link into a directory deeper than
 * nodefd's walk goes (NODEFD_MAX_DEPTH), as lsof and fuser do. It searches every directory, so
 * its name reaches the target however deep: nodefd must neither refuse it nor kill it for
 * depth, which the holder chose. nobody builds the chain with mkdirat() and openat(): PATH_MAX
 * bounds a string, not a depth.
 */
#define DEEPER (NODEFD_MAX_DEPTH + 100)

static int deep_holder(struct enf_agent *agent, void *arg)
{
	int dfd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC), next;

	for (int i = 0; dfd >= 0 && i < DEEPER; i++) {
		if (mkdirat(dfd, "d", 0755))
			return ENF_SETUP_FAILED;
		next = openat(dfd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(dfd);
		dfd = next;
	}
	if (dfd < 0 || fchdir(dfd))
		return ENF_SETUP_FAILED;
	close(dfd);
	return enf_agent_sync(agent) ? ENF_SETUP_FAILED : 0;
}

struct deep_look {
	pid_t holder;
	int stat_err;
	int open_err;
};

static int root_looks(struct enf_agent *agent, void *arg)
{
	struct deep_look *l = arg;
	char link[64];
	struct stat st;
	int fd;

	(void)agent;
	snprintf(link, sizeof(link), "/proc/%d/cwd", l->holder);
	l->stat_err = stat(link, &st) ? errno : 0;
	fd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	l->open_err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

TEST_F(limits, root_through_deep_cwd_of_another)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	const char *base = ENF_AT(&self->tree, "deep");
	struct deep_look *l = enf_shared(sizeof(*l));

	ASSERT_NE(NULL, l);
	enf_mkdir(_metadata, base, 0755, ENF_NOBODY, ENF_NOBODY);
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, deep_holder, (void *)base));
	ASSERT_TRUE(enf_agent_wait(&agent));
	l->holder = agent.pid;
	l->stat_err = l->open_err = -1;
	/* A kill for depth ends root's helper by SIGKILL: enf_run_as() is not 0 then. */
	EXPECT_EQ(0, enf_run_as(&ENF_ROOT, root_looks, l));
	EXPECT_EQ(0, l->stat_err)
	{
		TH_LOG("stat of the cwd link: %s", strerror(l->stat_err));
	}
	EXPECT_EQ(0, l->open_err)
	{
		TH_LOG("open of the cwd link: %s", strerror(l->open_err));
	}
	enf_agent_resume(&agent);
	EXPECT_EQ(0, enf_agent_join(&agent));
	enf_deep_remove(base);
	munmap(l, sizeof(*l));
}

TEST_HARNESS_MAIN
