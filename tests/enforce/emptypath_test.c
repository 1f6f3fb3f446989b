// SPDX-License-Identifier: GPL-2.0
/* enforce tests - O_EMPTYPATH: the file behind an fd opened again, with no walk and no procfs */

/*
 * Since 7.2, openat(fd, "", O_EMPTYPATH | O_RDWR) opens the file behind fd again, whatever fd
 * was opened with (O_PATH too), checked against the file's own mode only. It is the article's
 * reopen without /proc: a read-only holder of a file in a directory that closed since gets a
 * writable file. nodefd judges it as the reopen of /proc/self/fd/N.
 *
 * Each attack runs under NODEFD_EXPECT=hole (it must work on the kernel alone) and =refused
 * (EACCES, the file unchanged). The legitimate reopens must work either way. On a kernel
 * without O_EMPTYPATH every case is skipped, with the reason.
 */

#include <pthread.h>

#include "common.h"

#define SKIP_WITHOUT_EMPTYPATH()                                                                   \
	do {                                                                                       \
		if (!enf_kernel_has_emptypath())                                                   \
			SKIP(return, "no O_EMPTYPATH on this kernel (7.2 and later have it)");     \
	} while (0)

struct reopen {
	char origin[PATH_MAX];
	int origin_flags;	/* the first open; O_PATH for a path-only fd */
	int reopen_flags;
	bool pause;		/* stop after the first open, for the owner to close the directory */
	bool drop_privilege;	/* first open as root, then become nobody: an inherited fd */
	struct enf_attempt at;
};

static int reopener(struct enf_agent *agent, void *arg)
{
	struct reopen *r = arg;
	int fd;

	fd = open(r->origin, r->origin_flags | O_CLOEXEC);
	if (fd < 0) {
		enf_say("first open of %s: %s", r->origin, strerror(errno));
		return ENF_SETUP_FAILED;
	}
	if (r->drop_privilege && enf_become(&ENF_AS_NOBODY))
		return ENF_SETUP_FAILED;
	if (r->pause && enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	enf_attempt_fd(&r->at, openat(fd, "", O_EMPTYPATH | r->reopen_flags | O_CLOEXEC),
		       r->reopen_flags);
	close(fd);
	return 0;
}

FIXTURE(emptypath)
{
	struct enf_tree tree;
	struct reopen *r;
};

FIXTURE_SETUP(emptypath)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "victim"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "victim/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0777, 0, 0);
	self->r = enf_shared(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
}

FIXTURE_TEARDOWN(emptypath)
{
	enf_tree_remove(&self->tree);
	if (self->r)
		munmap(self->r, sizeof(*self->r));
}

/*
 * The article's attack: the fd is opened while victim/ is open to its opener, the owner closes
 * victim/, the holder reopens the file for writing through O_EMPTYPATH.
 */
static void emptypath_attack(struct __test_metadata *const _metadata,
			     FIXTURE_DATA(emptypath) *self, int origin_flags, bool inherited)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	const char *file = ENF_AT(&self->tree, "victim/file");
	struct reopen *r = self->r;

	strcpy(r->origin, file);
	r->origin_flags = origin_flags;
	r->reopen_flags = O_RDWR;
	r->pause = true;
	r->drop_privilege = inherited;
	ASSERT_EQ(0, enf_agent_start(&agent, inherited ? &ENF_ROOT : &ENF_AS_NOBODY, reopener, r));
	ASSERT_TRUE(enf_agent_wait(&agent));
	ASSERT_EQ(0, enf_run_as(&ENF_AS_OWNER, enf_close_dir, (void *)ENF_AT(&self->tree, "victim")));
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	TH_LOG("O_EMPTYPATH reopen for writing: %s",
	       r->at.open_err ? strerror(r->at.open_err) : "opened");
	ENF_EXPECT_ATTACK(&r->at, O_RDWR, file, ENF_ORIGINAL);
}

TEST_F(emptypath, attack_read_only_fd)
{
	SKIP_WITHOUT_EMPTYPATH();
	emptypath_attack(_metadata, self, O_RDONLY, false);
}

TEST_F(emptypath, attack_o_path_fd)
{
	SKIP_WITHOUT_EMPTYPATH();
	emptypath_attack(_metadata, self, O_PATH, false);
}

/* Root opens O_PATH and becomes nobody, keeping the fd (a service dropping privilege). */
TEST_F(emptypath, attack_o_path_fd_inherited)
{
	SKIP_WITHOUT_EMPTYPATH();
	emptypath_attack(_metadata, self, O_PATH, true);
}

/* A reopen within the fd's access: a read-write fd reopened read-only, the directory closed. */
TEST_F(emptypath, within_access)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	const char *file = ENF_AT(&self->tree, "victim/file");
	struct reopen *r = self->r;

	SKIP_WITHOUT_EMPTYPATH();
	strcpy(r->origin, file);
	r->origin_flags = O_RDWR;
	r->reopen_flags = O_RDONLY;
	r->pause = true;
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, reopener, r));
	ASSERT_TRUE(enf_agent_wait(&agent));
	ASSERT_EQ(0, enf_run_as(&ENF_AS_OWNER, enf_close_dir, (void *)ENF_AT(&self->tree, "victim")));
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	ENF_EXPECT_ALLOWED(&r->at, O_RDONLY, file, ENF_ORIGINAL);
}

/* Beyond the fd's access but open by name: an O_PATH fd of one's own file, reopened to write. */
TEST_F(emptypath, by_name_own_file)
{
	const char *file = ENF_AT(&self->tree, "pub/mine");
	struct reopen *r = self->r;

	SKIP_WITHOUT_EMPTYPATH();
	enf_mkfile(_metadata, file, 0644, ENF_NOBODY, ENF_ORIGINAL);
	strcpy(r->origin, file);
	r->origin_flags = O_PATH;
	r->reopen_flags = O_RDWR;
	ASSERT_EQ(0, enf_run_as(&ENF_AS_NOBODY, reopener, r));
	ENF_EXPECT_BY_NAME(&r->at, O_RDWR, file, ENF_ORIGINAL);
}

/* Root searches every directory: its reopen of a file in a closed directory stands. */
TEST_F(emptypath, root_closed_dir)
{
	const char *file = ENF_AT(&self->tree, "victim/file");
	struct reopen *r = self->r;

	SKIP_WITHOUT_EMPTYPATH();
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "victim"), 0700));
	strcpy(r->origin, file);
	r->origin_flags = O_PATH;
	r->reopen_flags = O_RDWR;
	ASSERT_EQ(0, enf_run_as(&ENF_ROOT, reopener, r));
	ENF_EXPECT_BY_NAME(&r->at, O_RDWR, file, ENF_ORIGINAL);
}

/*
 * The swap race: one thread reopens fd N with O_EMPTYPATH for writing, another keeps putting
 * two files at N in turn: the victim (read-only, in the closed directory) and a file of the
 * attacker's own (read-write). Whatever the interleaving, no open may give the victim for
 * writing; the attacker's own file may open. The kernel alone gives the victim now and then.
 */
struct swap {
	int slot;		/* the fd number both threads use */
	int victim_fd;		/* read-only */
	int own_fd;		/* read-write */
	volatile int stop;
};

static void *swapper(void *arg)
{
	struct swap *s = arg;

	for (unsigned int i = 0; !s->stop; i++)
		dup3(i & 1 ? s->own_fd : s->victim_fd, s->slot, O_CLOEXEC);
	return NULL;
}

#define SWAP_TRIES 20000

struct swap_result {
	int victim_writable;	/* opens that gave the victim for writing */
	int own_writable;
	int refused;
};

static int swap_race(struct enf_agent *agent, void *arg)
{
	struct swap_result *res = arg;
	struct swap s = { .slot = 100 };
	struct stat victim, st;
	pthread_t t;
	const char *tree = getenv("EMPTYPATH_TREE");

	(void)agent;
	s.victim_fd = open(enf_fmt("%s/victim/file", tree), O_RDONLY | O_CLOEXEC);
	s.own_fd = open(enf_fmt("%s/pub/mine", tree), O_RDWR | O_CLOEXEC);
	if (s.victim_fd < 0 || s.own_fd < 0 || fstat(s.victim_fd, &victim))
		return ENF_SETUP_FAILED;
	if (dup3(s.victim_fd, s.slot, O_CLOEXEC) != s.slot)
		return ENF_SETUP_FAILED;
	/* The owner closes victim/ (the helper cannot: it runs as nobody). */
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	if (pthread_create(&t, NULL, swapper, &s))
		return ENF_SETUP_FAILED;
	for (int i = 0; i < SWAP_TRIES; i++) {
		int fd = openat(s.slot, "", O_EMPTYPATH | O_WRONLY | O_CLOEXEC);

		if (fd < 0) {
			res->refused += errno == EACCES;
			continue;
		}
		if (!fstat(fd, &st) && st.st_ino == victim.st_ino && st.st_dev == victim.st_dev)
			res->victim_writable++;
		else
			res->own_writable++;
		close(fd);
	}
	s.stop = 1;
	pthread_join(t, NULL);
	return 0;
}

TEST_F(emptypath, swap_race)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct swap_result *res;

	SKIP_WITHOUT_EMPTYPATH();
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/mine"), 0644, ENF_NOBODY, ENF_ORIGINAL);
	res = enf_shared(sizeof(*res));
	ASSERT_NE(NULL, res);
	setenv("EMPTYPATH_TREE", self->tree.path, 1);
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, swap_race, res));
	ASSERT_TRUE(enf_agent_wait(&agent));
	ASSERT_EQ(0, enf_run_as(&ENF_AS_OWNER, enf_close_dir, (void *)ENF_AT(&self->tree, "victim")));
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	TH_LOG("%d tries: victim writable %d, own file writable %d, refused %d", SWAP_TRIES,
	       res->victim_writable, res->own_writable, res->refused);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		ASSERT_EQ(0, res->victim_writable);
		ASSERT_LT(0, res->own_writable);
		ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "victim/file"), ENF_ORIGINAL);
	} else {
		ASSERT_LT(0, res->victim_writable);
	}
	munmap(res, sizeof(*res));
}

TEST_HARNESS_MAIN
