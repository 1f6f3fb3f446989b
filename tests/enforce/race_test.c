// SPDX-License-Identifier: GPL-2.0
/* enforce tests - reopens through /proc/self/fd racing chmod, rename and dup2 */

/*
 * nobody holds two fds: a read-only one to a 0666 file in uid 1000's directory ("forbidden"
 * once that directory is 0700) and a read-write one to a 0666 file in a public directory
 * ("allowed"). One fd number is the target: a thread of nobody's dup2()s one or the other onto
 * it, while the test (root) chmods the directory between 0755 and 0700 and renames its parent
 * back and forth. nobody's main thread reopens the target, read-only and read-write in turn.
 *
 * Each change is bracketed by a generation counter (odd while under way), read before and after
 * each open, so every open can be classed:
 *  - read-write, landed on the forbidden file while the directory was 0700 before and after the
 *    open: always wrong with nodefd. That file's only fd is read-only, whatever the timing (the
 *    re-read of the fd table when the fd changed between the link and the open), and by name
 *    nobody cannot reach it. While the directory is open, nobody could open it by name.
 *  - read-only, refused while the target was the same fd before and after: always wrong; so is
 *    any refusal while the target was the allowed (read-write) fd before and after: either way
 *    no more than the fd gives was asked. (While the target moves, the open may find the fd
 *    table changed again when it re-reads it, and refuse: fail closed.)
 * Opens during transitions may go either way. Then, settled (threads stopped, the directory
 * 0700, the target the forbidden fd), the read-write reopen must be refused with nodefd and work
 * without, and the read-only one work with or without.
 */

#include "common.h"

#include <pthread.h>

#define RACE_ITERATIONS 50000
#define RACE_SECONDS 10
#define RACE_TARGET_FD 100
/* Longest pause between two changes, in microseconds: settled windows as well as races. */
#define RACE_MAX_PAUSE_US 50

struct race {
	char tree[PATH_MAX];

	/* Written by the test (root): the directory. */
	int dir_gen;
	int dir_closed;
	int renames;
	/* Written by nobody's dup2 thread: the target fd. */
	int fd_gen;
	int fd_forbidden;
	int dups;
	/* Set by nobody when its loop is over. */
	int stop;

	ino_t forbidden_ino;
	int setup_err;
	char why[256];

	long opens;
	long refused;
	long other_errors;
	int other_errno;
	long landed_forbidden;
	long judged_closed;	/* opens with the dir settled 0700 and the target settled forbidden */
	long wrong_upgrade;
	long wrong_refusal;
	double seconds;

	struct enf_attempt settled_ro;
	struct enf_attempt settled_rw;
};

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void bump(int *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static void pause_a_little(unsigned int *seed)
{
	unsigned int us = rand_r(seed) % RACE_MAX_PAUSE_US;

	if (us)
		usleep(us);
	else
		sched_yield();
}

struct dup_thread {
	struct race *r;
	int allowed_fd;
	int forbidden_fd;
};

static void *dup_loop(void *arg)
{
	struct dup_thread *t = arg;
	struct race *r = t->r;
	unsigned int seed = 2;

	while (!load(&r->stop)) {
		int to_forbidden = !load(&r->fd_forbidden);

		bump(&r->fd_gen);
		if (dup2(to_forbidden ? t->forbidden_fd : t->allowed_fd, RACE_TARGET_FD) < 0)
			break;
		store(&r->fd_forbidden, to_forbidden);
		bump(&r->fd_gen);
		r->dups++;
		pause_a_little(&seed);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void race_loop(struct race *r)
{
	const char *link = enf_fmt("/proc/self/fd/%d", RACE_TARGET_FD);
	double start = now();

	for (int i = 0; i < RACE_ITERATIONS && now() - start < RACE_SECONDS; i++) {
		const int flags = (i & 1) ? O_RDWR : O_RDONLY;
		int dgen1, closed1, fgen1, forb1, dgen2, closed2, fgen2, forb2, fd, err;
		bool dir_settled_closed, fd_settled_forbidden, fd_settled_allowed;
		bool on_forbidden = false;
		struct stat st;

		dgen1 = load(&r->dir_gen);
		closed1 = load(&r->dir_closed);
		fgen1 = load(&r->fd_gen);
		forb1 = load(&r->fd_forbidden);
		fd = open(link, flags | O_CLOEXEC);
		err = errno;
		fgen2 = load(&r->fd_gen);
		forb2 = load(&r->fd_forbidden);
		dgen2 = load(&r->dir_gen);
		closed2 = load(&r->dir_closed);

		dir_settled_closed = dgen1 == dgen2 && !(dgen1 & 1) && closed1 && closed2;
		fd_settled_forbidden = fgen1 == fgen2 && !(fgen1 & 1) && forb1 && forb2;
		fd_settled_allowed = fgen1 == fgen2 && !(fgen1 & 1) && !forb1 && !forb2;
		if (dir_settled_closed && fd_settled_forbidden)
			r->judged_closed++;
		r->opens++;
		if (fd < 0) {
			if (err == EACCES) {
				r->refused++;
				/*
				 * While the fd moves, a refusal may be the re-read of the fd
				 * table finding neither file (fail closed): not counted.
				 */
				if (fd_settled_allowed ||
				    (flags == O_RDONLY && fd_settled_forbidden))
					r->wrong_refusal++;
			} else {
				r->other_errors++;
				r->other_errno = err;
			}
			continue;
		}
		if (!fstat(fd, &st) && st.st_ino == r->forbidden_ino)
			on_forbidden = true;
		close(fd);
		if (!on_forbidden)
			continue;
		r->landed_forbidden++;
		if (flags == O_RDWR && dir_settled_closed)
			r->wrong_upgrade++;
	}
	r->seconds = now() - start;
}

/* nobody's side. */
static int racer(struct enf_agent *agent, void *arg)
{
	struct race *r = arg;
	struct dup_thread t = { .r = r };
	pthread_t thread;
	struct stat st;

	t.forbidden_fd = open(enf_fmt("%s/a/victim/forbidden", r->tree), O_RDONLY | O_CLOEXEC);
	t.allowed_fd = open(enf_fmt("%s/pub/allowed", r->tree), O_RDWR | O_CLOEXEC);
	if (t.forbidden_fd < 0 || t.allowed_fd < 0 || fstat(t.forbidden_fd, &st)) {
		r->setup_err = errno;
		snprintf(r->why, sizeof(r->why), "opening the two files");
		return ENF_SETUP_FAILED;
	}
	r->forbidden_ino = st.st_ino;
	if (dup2(t.allowed_fd, RACE_TARGET_FD) != RACE_TARGET_FD) {
		r->setup_err = errno;
		snprintf(r->why, sizeof(r->why), "dup2 onto the target");
		return ENF_SETUP_FAILED;
	}
	/* Both fds held: the test may start closing the directory. */
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;

	errno = pthread_create(&thread, NULL, dup_loop, &t);
	if (errno) {
		r->setup_err = errno;
		snprintf(r->why, sizeof(r->why), "pthread_create");
		return ENF_SETUP_FAILED;
	}
	race_loop(r);
	store(&r->stop, 1);
	pthread_join(thread, NULL);

	/* Settled: wait for the test to leave the directory 0700 under its first name. */
	if (dup2(t.forbidden_fd, RACE_TARGET_FD) != RACE_TARGET_FD)
		return ENF_SETUP_FAILED;
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	enf_attempt(&r->settled_ro, enf_fmt("/proc/self/fd/%d", RACE_TARGET_FD), O_RDONLY);
	enf_attempt(&r->settled_rw, enf_fmt("/proc/self/fd/%d", RACE_TARGET_FD), O_RDWR);
	return 0;
}

FIXTURE(race)
{
	struct enf_tree tree;
	struct race *r;
};

FIXTURE_SETUP(race)
{
	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "a"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "a/victim"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "a/victim/forbidden"), 0666, ENF_OWNER,
		   ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/allowed"), 0666, ENF_OWNER, ENF_ORIGINAL);
	self->r = enf_shared(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
	strcpy(self->r->tree, self->tree.path);
}

FIXTURE_TEARDOWN(race)
{
	enf_tree_remove(&self->tree);
	if (self->r)
		munmap(self->r, sizeof(*self->r));
}

TEST_F_TIMEOUT(race, reopen_under_chmod_rename_dup2, 3 * RACE_SECONDS + 30)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct race *r = self->r;
	char a[PATH_MAX], b[PATH_MAX];
	bool renamed = false, closed = false;
	unsigned int seed = 1;
	int status;

	/* Copies: enf_fmt()'s buffers are reused by every call in the loop. */
	strcpy(a, ENF_AT(&self->tree, "a"));
	strcpy(b, ENF_AT(&self->tree, "b"));
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, racer, r));
	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("racer: %s: %s", r->why, strerror(r->setup_err));
	}
	enf_agent_resume(&agent);

	for (int i = 0; !load(&r->stop); i++) {
		const char *victim = enf_fmt("%s/victim", renamed ? b : a);

		bump(&r->dir_gen);
		ASSERT_EQ(0, chmod(victim, closed ? 0755 : 0700));
		closed = !closed;
		store(&r->dir_closed, closed);
		bump(&r->dir_gen);
		if (i % 3 == 2) {
			/* A new path, the same permissions: no generation change. */
			ASSERT_EQ(0, rename(renamed ? b : a, renamed ? a : b));
			renamed = !renamed;
			r->renames++;
		}
		pause_a_little(&seed);
	}

	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("racer ended before the settled check (exit %d)", enf_agent_join(&agent));
	}
	if (renamed)
		ASSERT_EQ(0, rename(b, a));
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "a/victim"), 0700));
	enf_agent_resume(&agent);
	status = enf_agent_join(&agent);
	ASSERT_EQ(0, status)
	{
		TH_LOG("racer failed (exit %d): %s", status, r->why);
	}

	TH_LOG("%ld opens in %.1fs (%d dup2s, %d chmods, %d renames): %ld refused, "
	       "%ld on the forbidden file, %ld judged settled-closed; wrong: %ld upgrades, "
	       "%ld refusals; %ld other errors",
	       r->opens, r->seconds, r->dups, load(&r->dir_gen) / 2, r->renames, r->refused,
	       r->landed_forbidden, r->judged_closed, r->wrong_upgrade, r->wrong_refusal,
	       r->other_errors);

	/* The loop must have had something to judge, and nothing but EACCES may fail. */
	EXPECT_LT(0, r->judged_closed);
	EXPECT_EQ(0, r->other_errors)
	{
		TH_LOG("last unexpected error: %s", strerror(r->other_errno));
	}
	EXPECT_EQ(0, r->wrong_refusal);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(0, r->wrong_upgrade);
	} else {
		/* Without nodefd the 0666 file opens whatever its directory: nothing refused. */
		EXPECT_EQ(0, r->refused);
		EXPECT_LT(0, r->wrong_upgrade);
	}

	/*
	 * The read-only reopen came first, within the fd's access: its data, then the read-write
	 * one's effect.
	 */
	EXPECT_EQ(0, r->settled_ro.open_err);
	EXPECT_STREQ(ENF_ORIGINAL, r->settled_ro.data);
	ENF_EXPECT_ATTACK(&r->settled_rw, O_RDWR, ENF_AT(&self->tree, "a/victim/forbidden"),
			  ENF_ORIGINAL);
}

int main(int argc, char **argv)
{
	if (enf_expectation() == ENF_EXPECT_UNSET)
		fprintf(stderr, "# race_test: NODEFD_EXPECT is neither \"hole\" nor \"refused\": "
				"every case will fail\n");
	return test_harness_run(argc, argv);
}
