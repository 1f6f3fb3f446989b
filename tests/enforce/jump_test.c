// SPDX-License-Identifier: GPL-2.0
/* enforce tests - walks through a link whose target the holder swaps between the hook and the jump */

/*
 * Another process's link. The holder (nobody) holds two directories: pub/d, which everyone
 * may reach, and priv/d, which it opened while priv was open and which nobody else can name
 * once priv is 0700 (owned by uid 1000). It swaps them onto one fd (dup2) or as its cwd
 * (fchdir), as fast as it can. A walker (nobody as well, another process, not its ancestor)
 * walks through /proc/HOLDER/fd/N or /proc/HOLDER/cwd again and again: an open of "secret"
 * below, an O_PATH open of the directory itself, a stat below, a chdir, a mkdir below.
 *
 * With Yama's ptrace_scope at 1 the walker cannot take the holder's fds (pidfd_getfd()), so
 * landing in priv/d is what the link must not give. With nodefd, an open or a mkdir below is
 * refused after the jump by the hook of what the call does; an O_PATH open or a chdir, which
 * keeps the place, is refused at the link whatever the holder does; a stat below, which reads
 * metadata and keeps nothing, is let go on and reported (the holder could have told the
 * walker as much). That is on a kernel without a hook at the jump (NODEFD_JUMP=guard); on one
 * with it (the test kernel), every one of them is refused at the jump into priv/d and reaches
 * pub/d. No walker is ever killed, and pub/d is still reached by what may reach it.
 * Without nodefd, everything lands on both sides.
 *
 * With ptrace_scope at 0 the walker could take the holder's fds: nothing the holder swaps in
 * is more than it could take, so it is neither refused nor killed.
 *
 * The walker's own link. The walker's own thread swaps a read-write fd of a public file and a
 * read-only fd of a 0666 file in priv/d onto one fd, while the walker truncates, or links,
 * /proc/self/fd/N: the private file must never be truncated nor get a name.
 *
 * The same on ext4 with an O_CREAT open of "secret" below, while dentries are dropped: a
 * file that exists but is not in the dcache is looked up after may_o_create(), so the
 * creation's hook (path_mknod) sees the walk first, is refused, the kernel drops O_CREAT and
 * opens the file; file_open must still refuse it (nodefd once let path_mknod use the refusal
 * up, and the open through).
 *
 * And a walker that shares its fd table or its cwd with a process outside its thread group is
 * judged as any other: nodefd once killed walkers and refused those a kill could not stop.
 */

#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <dirent.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#define JUMP_FD 100
#define JUMP_SECONDS 3
#define WALKER_TRIES 2000	/* per walker process */
#define EXT4_MOUNT "/mnt/ext4"
#define EXT4_TREE EXT4_MOUNT "/j.XXXXXX"	/* fits struct enf_tree */

enum jump_op {
	OP_OPEN_BELOW, OP_OPATH_DIR, OP_STAT_BELOW, OP_CHDIR, OP_MKDIR_BELOW,	/* another's link */
	OP_CREAT_BELOW,
	OP_TRUNCATE_SELF, OP_LINK_SELF,						/* its own */
};

struct jump {
	char tree[sizeof(ENF_TREE_TEMPLATE)];
	pid_t holder;
	int via_cwd;
	int op;
	int still;	/* the holder does not swap */
	int share;	/* clone() flags of a sibling the walker has while it walks, 0 for none */
	int stop;
	ino_t victim_ino;
	ino_t dir_ino[2];	/* [0] pub/d, [1] priv/d */
	ino_t secret_ino[2];
	long tries;
	long landed[2];
	long refused;
	long other_errors;
	int other_errno;
	long vanished;		/* ESRCH from /proc/PID while the dentry cache is dropped */
	long swaps;
	long drops;
	int dropping;		/* the dropper runs */
	int setup_err;
	char why[256];
};

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup_failed(struct jump *j, const char *what)
{
	j->setup_err = errno;
	snprintf(j->why, sizeof(j->why), "%s", what);
	return ENF_SETUP_FAILED;
}

/* The holder: swaps pub/d and priv/d onto its fd JUMP_FD, or as its cwd, until told to stop. */
static int holder(struct enf_agent *agent, void *arg)
{
	struct jump *j = arg;
	int fd[2];

	fd[0] = open(enf_fmt("%s/pub/d", j->tree), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd[1] = open(enf_fmt("%s/priv/d", j->tree), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd[0] < 0 || fd[1] < 0)
		return setup_failed(j, "opening the two directories");
	if (dup2(fd[0], JUMP_FD) != JUMP_FD || fchdir(fd[0]))
		return setup_failed(j, "dup2 or fchdir to pub/d");
	/* Both held: the test closes priv and lets the walkers go. */
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	while (!load(&j->stop)) {
		if (j->still) {
			usleep(1000);
			continue;
		}
		for (int i = 1; i >= 0; i--) {
			if (j->via_cwd ? fchdir(fd[i]) : dup2(fd[i], JUMP_FD) < 0)
				return setup_failed(j, "swapping");
		}
		j->swaps++;
	}
	return 0;
}

/* Which of pub/d (0) and priv/d (1) an inode is in, by the inodes of @inos; -1 for neither. */
static int which(const ino_t inos[2], ino_t ino)
{
	return ino == inos[0] ? 0 : ino == inos[1] ? 1 : -1;
}

/* One try of the walker's operation: the side it landed on, -1 on an error (errno). */
static int walk_once(struct jump *j, const char *link, const char *below, int i)
{
	char name[PATH_MAX];
	struct stat st;
	int fd, ret;

	switch (j->op) {
	case OP_OPEN_BELOW:
	case OP_CREAT_BELOW:
	case OP_OPATH_DIR:
		fd = j->op == OP_OPEN_BELOW ? open(below, O_RDONLY | O_CLOEXEC) :
		     j->op == OP_CREAT_BELOW ? open(below, O_RDONLY | O_CREAT | O_CLOEXEC, 0644) :
					       open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		ret = fstat(fd, &st);
		close(fd);
		if (ret)
			return -1;
		return which(j->op == OP_OPATH_DIR ? j->dir_ino : j->secret_ino, st.st_ino);
	case OP_STAT_BELOW:
		if (stat(below, &st))
			return -1;
		return which(j->secret_ino, st.st_ino);
	case OP_CHDIR:
		if (chdir(link))
			return -1;
		ret = stat(".", &st);
		if (chdir("/") || ret)
			return -1;
		return which(j->dir_ino, st.st_ino);
	default:
		/* Where it was made is counted by the test afterwards. */
		snprintf(name, sizeof(name), "%s/new.%d.%d", link, getpid(), i);
		return mkdir(name, 0700) ? -1 : 2;
	}
}

static int walker(struct enf_agent *agent, void *arg)
{
	struct jump *j = arg;
	char link[64], below[96];

	(void)agent;
	if (j->via_cwd)
		snprintf(link, sizeof(link), "/proc/%d/cwd", j->holder);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", j->holder, JUMP_FD);
	snprintf(below, sizeof(below), "%s/secret", link);
	for (int i = 0; i < WALKER_TRIES && !load(&j->stop); i++) {
		int side = walk_once(j, link, below, i);

		j->tries++;
		if (side == 0 || side == 1) {
			j->landed[side]++;
		} else if (side < 0 && errno == EACCES) {
			j->refused++;
		} else if (side < 0 && errno == ESRCH && load(&j->dropping)) {
			/*
			 * proc_pid_permission() finds no task behind a /proc/PID inode that the
			 * dropper is evicting under an RCU walk; ESRCH is not -ECHILD, so the walk
			 * is not tried again. The kernel's: nodefd refuses with EACCES only.
			 */
			j->vanished++;
		} else if (side < 0) {
			j->other_errors++;
			j->other_errno = errno;
		}
	}
	return 0;
}

/* Entries of @dir named new.*: what the mkdir walks made there. */
static long count_made(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	long n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "new.", 4);
	closedir(d);
	return n;
}

/*
 * Drops unused dentries and inodes every millisecond until @j->stop: what the walkers look up
 * below the two directories is read from disk again. Run as root, in a process of its own.
 */
static int dropper(struct jump *j)
{
	while (!load(&j->stop)) {
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "2", 1) != 1)
			return 1;
		close(fd);
		j->drops++;
		usleep(1000);
	}
	return 0;
}

/* The tree and the inodes every case compares with; on the ext4 scratch disk if @disk. */
static void tree_setup(struct __test_metadata *const _metadata, struct enf_tree *tree,
		       struct jump **jp, bool disk)
{
	struct statfs sfs;
	struct stat st;
	struct jump *j;

	ENF_ASSERT_EXPECTATION();
	if (!disk) {
		enf_tree_make(_metadata, tree);
	} else {
		if (statfs(EXT4_MOUNT, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC)
			SKIP(longjmp(_metadata->env, 1), "no ext4 filesystem on " EXT4_MOUNT
			     " (vmtest/run mounts its scratch disk there)");
		strcpy(tree->path, EXT4_TREE);
		ASSERT_NE(NULL, mkdtemp(tree->path));
		ASSERT_EQ(0, chmod(tree->path, 0755));
	}
	enf_mkdir(_metadata, ENF_AT(tree, "pub"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(tree, "pub/d"), 0777, 0, 0);
	enf_mkfile(_metadata, ENF_AT(tree, "pub/d/secret"), 0644, 0, "public\n");
	enf_mkfile(_metadata, ENF_AT(tree, "pub/d/mine"), 0666, 0, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(tree, "priv"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkdir(_metadata, ENF_AT(tree, "priv/d"), 0777, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(tree, "priv/d/secret"), 0644, ENF_OWNER,
		   "the owner's, behind a closed directory\n");
	enf_mkfile(_metadata, ENF_AT(tree, "priv/d/victim"), 0666, ENF_OWNER, ENF_ORIGINAL);
	*jp = j = enf_shared(sizeof(*j));
	ASSERT_NE(NULL, j);
	strcpy(j->tree, tree->path);
	ASSERT_EQ(0, stat(ENF_AT(tree, "pub/d"), &st));
	j->dir_ino[0] = st.st_ino;
	ASSERT_EQ(0, stat(ENF_AT(tree, "priv/d"), &st));
	j->dir_ino[1] = st.st_ino;
	ASSERT_EQ(0, stat(ENF_AT(tree, "pub/d/secret"), &st));
	j->secret_ino[0] = st.st_ino;
	ASSERT_EQ(0, stat(ENF_AT(tree, "priv/d/secret"), &st));
	j->secret_ino[1] = st.st_ino;
	ASSERT_EQ(0, stat(ENF_AT(tree, "priv/d/victim"), &st));
	j->victim_ino = st.st_ino;
}

static void tree_teardown(struct enf_tree *tree, struct jump *j)
{
	enf_tree_remove(tree);
	if (j)
		munmap(j, sizeof(*j));
}

FIXTURE(jump)
{
	struct enf_tree tree;
	struct jump *j;
	int old_scope;
};

/*
 * What nodefd can do after the jump of a walker that could not take the holder's fds, on a
 * kernel without a hook at the jump (NODEFD_JUMP=guard). With one, it refuses the jump itself.
 */
enum jump_class {
	CLASS_HOOKED,	/* a hook sees what the call does: refused there */
	CLASS_META,	/* the call reads metadata only: reported, not refused */
	CLASS_PLACE,	/* the call keeps the place: refused at the link */
};

/*
 * class: as above. taker: ptrace_scope 0, the walker could take the holder's fds.
 * disk: the tree is on ext4 and a root process drops dentries all along.
 */
FIXTURE_VARIANT(jump)
{
	int via_cwd;
	int op;
	int class;
	int taker;
	bool disk;
};

FIXTURE_SETUP(jump)
{
	self->old_scope = -1;
	tree_setup(_metadata, &self->tree, &self->j, variant->disk);
	self->old_scope = enf_ptrace_scope_set(variant->taker ? 0 : 1);
	if (self->old_scope < 0)
		SKIP(return, "no Yama (" ENF_PTRACE_SCOPE "): whether the walker could take the "
			     "holder's fds is not known");
}

FIXTURE_TEARDOWN(jump)
{
	if (self->old_scope >= 0)
		enf_ptrace_scope_set(self->old_scope);
	tree_teardown(&self->tree, self->j);
}

FIXTURE_VARIANT_ADD(jump, fd_open_below) { .op = OP_OPEN_BELOW };
FIXTURE_VARIANT_ADD(jump, fd_opath_dir) { .op = OP_OPATH_DIR, .class = CLASS_PLACE };
FIXTURE_VARIANT_ADD(jump, fd_stat_below) { .op = OP_STAT_BELOW, .class = CLASS_META };
FIXTURE_VARIANT_ADD(jump, fd_chdir) { .op = OP_CHDIR, .class = CLASS_PLACE };
FIXTURE_VARIANT_ADD(jump, fd_mkdir_below) { .op = OP_MKDIR_BELOW };
FIXTURE_VARIANT_ADD(jump, cwd_open_below) { .via_cwd = 1, .op = OP_OPEN_BELOW };
FIXTURE_VARIANT_ADD(jump, cwd_opath_dir) { .via_cwd = 1, .op = OP_OPATH_DIR, .class = CLASS_PLACE };
FIXTURE_VARIANT_ADD(jump, fd_creat_below_uncached) { .op = OP_CREAT_BELOW, .disk = true };
FIXTURE_VARIANT_ADD(jump, cwd_creat_below_uncached)
{
	.via_cwd = 1, .op = OP_CREAT_BELOW, .disk = true
};
FIXTURE_VARIANT_ADD(jump, taker_fd_stat_below) { .op = OP_STAT_BELOW, .taker = 1 };
FIXTURE_VARIANT_ADD(jump, taker_fd_chdir) { .op = OP_CHDIR, .taker = 1 };
FIXTURE_VARIANT_ADD(jump, taker_cwd_opath_dir) { .via_cwd = 1, .op = OP_OPATH_DIR, .taker = 1 };

TEST_F_TIMEOUT(jump, another_process_link_never_lands_in_the_closed_dir, JUMP_SECONDS + 60)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct jump *j = self->j;
	long lives = 0, kills = 0;
	pid_t drop = -1;
	double start;
	int status;

	j->via_cwd = variant->via_cwd;
	j->op = variant->op;
	if (variant->disk) {
		drop = fork();
		ASSERT_LE(0, drop);
		if (!drop)
			_exit(dropper(j));
		__atomic_store_n(&j->dropping, 1, __ATOMIC_SEQ_CST);
	}
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, holder, j));
	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("holder: %s: %s", j->why, strerror(j->setup_err));
	}
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "priv"), 0700));
	j->holder = agent.pid;
	enf_agent_resume(&agent);

	for (start = now(); now() - start < JUMP_SECONDS; lives++) {
		status = enf_run_as(&ENF_AS_NOBODY, walker, j);
		if (status == 128 + SIGKILL) {
			kills++;
			continue;
		}
		ASSERT_EQ(0, status);
	}
	__atomic_store_n(&j->stop, 1, __ATOMIC_SEQ_CST);
	status = enf_agent_join(&agent);
	ASSERT_EQ(0, status)
	{
		TH_LOG("holder failed (exit %d): %s: %s", status, j->why, strerror(j->setup_err));
	}
	if (drop > 0) {
		ASSERT_EQ(drop, waitpid(drop, &status, 0));
		ASSERT_EQ(0, status)
		{
			TH_LOG("writing /proc/sys/vm/drop_caches failed (status %#x)", status);
		}
		TH_LOG("%ld drops of the dentry cache, %ld walks found /proc/PID gone (ESRCH)",
		       j->drops, j->vanished);
	}
	if (j->op == OP_MKDIR_BELOW) {
		j->landed[0] = count_made(ENF_AT(&self->tree, "pub/d"));
		j->landed[1] = count_made(ENF_AT(&self->tree, "priv/d"));
	}

	TH_LOG("%ld tries by %ld walkers (%ld killed) against %ld swaps: %ld in pub/d, %ld in "
	       "priv/d, %ld refused, %ld other errors",
	       j->tries, lives, kills, j->swaps, j->landed[0], j->landed[1], j->refused,
	       j->other_errors);
	EXPECT_EQ(0, j->other_errors)
	{
		TH_LOG("last unexpected error: %s", strerror(j->other_errno));
	}
	/* No walker is killed, whatever the holder does. */
	EXPECT_EQ(0, kills);
	if (enf_expectation() != ENF_EXPECT_REFUSED) {
		EXPECT_LT(0, j->landed[0]);
		EXPECT_LT(0, j->landed[1]);
		EXPECT_EQ(0, j->refused);
	} else if (variant->taker) {
		/* It could take whatever the holder swaps in: nothing is refused. */
		EXPECT_LT(0, j->landed[0]);
		EXPECT_EQ(0, j->refused);
	} else if (enf_jump_hook()) {
		/* The hook at the jump refuses it there, whatever the call: pub/d is reached. */
		EXPECT_LT(0, j->landed[0]);
		EXPECT_EQ(0, j->landed[1]);
	} else if (variant->class == CLASS_PLACE) {
		EXPECT_EQ(0, j->landed[0]);
		EXPECT_EQ(0, j->landed[1]);
	} else if (variant->class == CLASS_META) {
		/* The attacker's gain, measured: metadata of what the holder swapped in. */
		TH_LOG("metadata read in priv/d: %ld of %ld tries (reported, not refused)",
		       j->landed[1], j->tries);
		EXPECT_LT(0, j->landed[0]);
	} else {
		EXPECT_LT(0, j->landed[0]);
		EXPECT_EQ(0, j->landed[1]);
	}
}

/* The walker's own link: a thread of its own swaps the fds under the truncate or the link. */
struct self_race {
	struct jump *j;
	int fd[2];	/* [0] pub/d/mine read-write, [1] priv/d/victim read-only */
};

static void *self_swap(void *arg)
{
	struct self_race *s = arg;

	while (!load(&s->j->stop)) {
		for (int i = 1; i >= 0; i--)
			if (dup2(s->fd[i], JUMP_FD) < 0)
				return NULL;
		s->j->swaps++;
	}
	return NULL;
}

/* One truncate or link through /proc/self/fd/JUMP_FD: 0 or -1 (errno). */
static int self_once(struct jump *j)
{
	const char *link = enf_fmt("/proc/self/fd/%d", JUMP_FD);
	char name[PATH_MAX];
	struct stat st;
	int ret;

	if (j->op == OP_TRUNCATE_SELF) {
		ret = truncate(link, 0);
		if (!ret)
			j->landed[0]++;	/* which file: the test reads the victim afterwards */
		return ret;
	}
	snprintf(name, sizeof(name), "%s/pub/d/l.%ld", j->tree, j->tries);
	ret = linkat(AT_FDCWD, link, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
	if (ret)
		return ret;
	if (!stat(name, &st))
		j->landed[st.st_ino == j->victim_ino]++;
	unlink(name);
	return 0;
}

static int self_racer(struct enf_agent *agent, void *arg)
{
	struct self_race s = { .j = arg };
	struct jump *j = s.j;
	pthread_t thread;
	double start;

	s.fd[0] = open(enf_fmt("%s/pub/d/mine", j->tree), O_RDWR | O_CLOEXEC);
	s.fd[1] = open(enf_fmt("%s/priv/d/victim", j->tree), O_RDONLY | O_CLOEXEC);
	if (s.fd[0] < 0 || s.fd[1] < 0)
		return setup_failed(j, "opening the two files");
	if (dup2(s.fd[0], JUMP_FD) != JUMP_FD)
		return setup_failed(j, "dup2");
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	errno = pthread_create(&thread, NULL, self_swap, &s);
	if (errno)
		return setup_failed(j, "pthread_create");
	for (start = now(); now() - start < JUMP_SECONDS; j->tries++) {
		if (!self_once(j))
			continue;
		if (errno == EACCES) {
			j->refused++;
		} else {
			j->other_errors++;
			j->other_errno = errno;
		}
	}
	__atomic_store_n(&j->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(thread, NULL);
	return 0;
}

FIXTURE(jump_self)
{
	struct enf_tree tree;
	struct jump *j;
};

FIXTURE_SETUP(jump_self)
{
	tree_setup(_metadata, &self->tree, &self->j, false);
}

FIXTURE_TEARDOWN(jump_self)
{
	tree_teardown(&self->tree, self->j);
}

FIXTURE_VARIANT(jump_self)
{
	int op;
};

FIXTURE_VARIANT_ADD(jump_self, truncate) { .op = OP_TRUNCATE_SELF };
FIXTURE_VARIANT_ADD(jump_self, linkat) { .op = OP_LINK_SELF };

TEST_F_TIMEOUT(jump_self, read_only_file_never_truncated_nor_linked, JUMP_SECONDS + 60)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct jump *j = self->j;
	char buf[256];
	ssize_t n;
	int status;

	j->op = variant->op;
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, self_racer, j));
	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("racer: %s: %s", j->why, strerror(j->setup_err));
	}
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "priv"), 0700));
	enf_agent_resume(&agent);
	status = enf_agent_join(&agent);
	ASSERT_EQ(0, status)
	{
		TH_LOG("racer failed (exit %d): %s: %s", status, j->why, strerror(j->setup_err));
	}
	if (j->op == OP_TRUNCATE_SELF) {
		n = enf_read_path(ENF_AT(&self->tree, "priv/d/victim"), buf, sizeof(buf));
		j->landed[1] = n != (ssize_t)strlen(ENF_ORIGINAL);
	}
	TH_LOG("%ld tries against %ld swaps: %ld done (%s), the read-only file %s; %ld refused, "
	       "%ld other errors",
	       j->tries, j->swaps, j->landed[0] + (j->op == OP_LINK_SELF ? j->landed[1] : 0),
	       j->op == OP_TRUNCATE_SELF ? "truncated" : "linked",
	       j->landed[1] ? "reached" : "untouched", j->refused, j->other_errors);
	EXPECT_EQ(0, j->other_errors)
	{
		TH_LOG("last unexpected error: %s", strerror(j->other_errno));
	}
	EXPECT_LT(0, j->landed[0]);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(0, j->landed[1]);
	} else {
		EXPECT_LT(0, j->landed[1]);
		EXPECT_EQ(0, j->refused);
	}
}

/*
 * A walker sharing its fd table, or its cwd and root, with a process outside its thread group,
 * and that cannot take the holder's fds (ptrace_scope 1): a stat below another process's fd
 * link (held still on pub/d) reaches pub/d/secret whatever it shares. (nodefd once killed a
 * walker whose jump landed elsewhere, and so refused, at the link, one that shared what would
 * outlive the kill.) And a thread's own /proc/self link is its own.
 */
FIXTURE(jump_shared)
{
	struct enf_tree tree;
	struct jump *j;
	int old_scope;
};

FIXTURE_SETUP(jump_shared)
{
	self->old_scope = -1;
	tree_setup(_metadata, &self->tree, &self->j, false);
	self->old_scope = enf_ptrace_scope_set(1);
}

FIXTURE_TEARDOWN(jump_shared)
{
	if (self->old_scope >= 0)
		enf_ptrace_scope_set(self->old_scope);
	tree_teardown(&self->tree, self->j);
}

static int sibling_sleeps(void *arg)
{
	(void)arg;
	pause();
	return 0;
}

/* stat() below the holder's link, with a sibling made with clone(j->share) alive if any. */
static int stat_through(struct enf_agent *agent, void *arg)
{
	struct jump *j = arg;
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t sibling = -1;
	struct stat st;
	int ret, err;

	(void)agent;
	if (j->share) {
		sibling = clone(sibling_sleeps, stack + sizeof(stack), j->share | SIGCHLD, NULL);
		if (sibling < 0)
			return setup_failed(j, "clone()");
	}
	ret = stat(enf_fmt("/proc/%d/fd/%d/secret", j->holder, JUMP_FD), &st);
	err = errno;
	if (sibling > 0) {
		kill(sibling, SIGKILL);
		waitpid(sibling, NULL, 0);
	}
	if (ret)
		return err == EACCES ? 1 : 2;
	return st.st_ino == j->secret_ino[0] ? 0 : 3;
}

TEST_F_TIMEOUT(jump_shared, stat_through_another_link_whatever_it_shares, 60)
{
	static const struct {
		int flags;
		const char *what;
	} share[] = {
		{ 0, "nothing" },
		{ CLONE_FILES, "its fd table" },
		{ CLONE_FS, "its cwd and root" },
		{ CLONE_VM, "its memory" },
	};
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct jump *j = self->j;
	int got[4];

	j->still = 1;
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, holder, j));
	ASSERT_TRUE(enf_agent_wait(&agent));
	j->holder = agent.pid;
	enf_agent_resume(&agent);
	for (int i = 0; i < 4; i++) {
		j->share = share[i].flags;
		got[i] = enf_run_as(&ENF_AS_NOBODY, stat_through, j);
	}
	__atomic_store_n(&j->stop, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, enf_agent_join(&agent));
	for (int i = 0; i < 4; i++) {
		TH_LOG("sharing %s: %d (0 reached pub/d/secret, 1 EACCES)", share[i].what, got[i]);
		EXPECT_EQ(0, got[i]);
	}
}

/* utimensat() through /proc/self/fd/N from a thread that is not the group leader. */
struct own_thread {
	int fd;
	int ret, err;
};

static void *touch_own_link(void *arg)
{
	struct own_thread *t = arg;
	char link[64];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", t->fd);
	t->ret = utimensat(AT_FDCWD, link, NULL, 0);
	t->err = errno;
	return NULL;
}

static int touch_from_thread(struct enf_agent *agent, void *arg)
{
	struct jump *j = arg;
	struct own_thread t = { .ret = -1 };
	pthread_t thread;

	(void)agent;
	t.fd = open(enf_fmt("%s/pub/d/mine", j->tree), O_RDONLY | O_CLOEXEC);
	if (t.fd < 0)
		return setup_failed(j, "open");
	errno = pthread_create(&thread, NULL, touch_own_link, &t);
	if (errno)
		return setup_failed(j, "pthread_create");
	pthread_join(thread, NULL);
	if (t.ret)
		enf_say("utimensat through /proc/self/fd from a thread: %s", strerror(t.err));
	return t.ret ? (t.err == EACCES ? 1 : 2) : 0;
}

TEST_F_TIMEOUT(jump_shared, own_link_from_a_thread_is_its_own, 60)
{
	EXPECT_EQ(0, enf_run_as(&ENF_AS_NOBODY, touch_from_thread, self->j))
	{
		TH_LOG("%s: %s", self->j->why, strerror(self->j->setup_err));
	}
}

TEST_HARNESS_MAIN
