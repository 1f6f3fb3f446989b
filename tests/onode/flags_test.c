// SPDX-License-Identifier: GPL-2.0
/* O_NODE tests - O_NODE with every other open flag, through open(2) and openat2(2) */

#include "common.h"

/* __O_TMPFILE, which glibc only gives with O_DIRECTORY folded in (O_TMPFILE). */
#define ONODE_O_TMPFILE_BIT ((__u64)(O_TMPFILE & ~O_DIRECTORY))

/* FMODE_NONOTIFY, an f_mode bit that openat2(2) strips from the flags before checking them. */
#define ONODE_FMODE_NONOTIFY ((__u64)0x4000000)

/* __O_SYNC, O_SYNC without the O_DSYNC that glibc folds into it. */
#define ONODE_O_SYNC_BIT ((__u64)(O_SYNC & ~O_DSYNC))

/* What open(2) keeps of the flags when O_PATH is among them (fs/open.c). */
#define ONODE_O_PATH_FLAGS ((__u64)(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC))

/* What an O_NODE open takes out of the flags it keeps in f_flags. */
#define ONODE_OPEN_ONLY_FLAGS ((__u64)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC))

/* Mismatches a sweep logs before it only counts them. */
#define ONODE_SWEEP_LOG_MAX 20

/*
 * The syscalls that open by name.  open(2) and openat(2) share their flag handling, but both are
 * called: open(2) is where the "O_PATH beats everything" rule comes from, and the one syscall
 * that programs not written for openat2(2) use.  Architectures without open(2) call openat(2)
 * in its place.
 */
enum open_call {
	OPEN_CALL_OPEN,
	OPEN_CALL_OPENAT,
	OPEN_CALL_OPENAT2,
	OPEN_CALL_NR,
};

static const char *const open_call_names[OPEN_CALL_NR] = {
	[OPEN_CALL_OPEN] = "open",
	[OPEN_CALL_OPENAT] = "openat",
	[OPEN_CALL_OPENAT2] = "openat2",
};

FIXTURE(flags)
{
	struct onode_tree tree;
};

ONODE_VARIANTS(flags);

FIXTURE_SETUP(flags)
{
	onode_tree_setup(_metadata, &self->tree);
}

FIXTURE_TEARDOWN(flags)
{
	onode_tree_teardown(_metadata, &self->tree);
}

/*
 * An open that blocks (a fifo's, one breaking a lease) has reached what O_NODE keeps it from:
 * SIGALRM ends the check, or, once a sweep has called alarm_interrupts(), just that open.
 */
static int open_with(enum open_call call, const struct onode_tree *tree, const char *name,
		     __u64 flags)
{
	char path[PATH_MAX];
	int fd = -1;

	alarm(ONODE_BLOCK_TIMEOUT);
	switch (call) {
	case OPEN_CALL_OPEN:
#ifdef __NR_open
		snprintf(path, sizeof(path), "%s/%s", tree->path, name);
		fd = syscall(__NR_open, path, (int)flags, 0);
#else
		/* Same as openat(2), which shares its flag handling. */
		(void)path;
		fd = sys_openat(tree->fd, name, (int)flags);
#endif
		break;
	case OPEN_CALL_OPENAT:
		fd = sys_openat(tree->fd, name, (int)flags);
		break;
	case OPEN_CALL_OPENAT2:
		fd = sys_openat2(tree->fd, name, flags, 0);
		break;
	case OPEN_CALL_NR:
		errno = EINVAL;
		break;
	}
	alarm(0);
	return fd;
}

static void ignore_signal(int sig)
{
	(void)sig;
}

/* Without SA_RESTART, the interrupted open fails with EINTR, which no spec outcome is. */
static void alarm_interrupts(struct __test_metadata *const _metadata)
{
	const struct sigaction action = { .sa_handler = ignore_signal };

	ASSERT_EQ(0, sigaction(SIGALRM, &action, NULL));
}

/* VALID_OPEN_FLAGS of the patched kernel; @largefile is the kernel's O_LARGEFILE. */
static __u64 valid_open_flags(int largefile)
{
	return O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK |
	       O_DSYNC | O_ASYNC | O_DIRECT | largefile | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |
	       O_CLOEXEC | O_SYNC | O_PATH | ONODE_O_TMPFILE_BIT | O_NODE;
}

static const struct onode_node *find_node(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(onode_nodes); i++)
		if (!strcmp(onode_nodes[i].name, name))
			return &onode_nodes[i];
	return NULL;
}

/* Whether the unprivileged user may search every directory on the way to @node. */
static bool nobody_reaches(const struct onode_node *node)
{
	const char *slash = strrchr(node->name, '/');
	char parent[32];

	if (!slash)
		return true;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - node->name), node->name);
	return find_node(parent)->mode & S_IXOTH;
}

/**
 * struct outcome - what an open should give
 * @err: the errno, 0 when it succeeds
 * @getfl: F_GETFL of the descriptor
 * @type: S_IFMT that fstat() of the descriptor shows
 */
struct outcome {
	int err;
	int getfl;
	mode_t type;
};

/*
 * The spec, as a function: what opening @node with @flags, which hold O_NODE, must give, in the
 * order the kernel checks.  open(2) and openat(2) first drop unknown flags and, when O_PATH is
 * set, all but the O_PATH ones, O_NODE among them; openat2(2) refuses unknown flags instead.
 */
static struct outcome expect_open(const struct onode_node *node, __u64 flags, enum open_call call,
				  int largefile)
{
	const __u64 valid = valid_open_flags(largefile);
	const struct onode_node *reached = node;
	struct outcome out = {};

	if (call != OPEN_CALL_OPENAT2) {
		flags = ((unsigned int)flags | largefile) & valid;
		if (flags & O_PATH)
			flags &= ONODE_O_PATH_FLAGS;
	} else {
		if (!(flags & O_PATH))
			flags |= largefile;
		flags &= ~ONODE_FMODE_NONOTIFY;
		if (flags & ~valid)
			goto einval;
	}

	if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT))
		goto einval;
	if ((flags & ONODE_O_TMPFILE_BIT) && (!(flags & O_DIRECTORY) || !(flags & O_ACCMODE)))
		goto einval;
	if ((flags & O_PATH) && (flags & ~ONODE_O_PATH_FLAGS))
		goto einval;
	if ((flags & O_NODE) && ((flags & O_ACCMODE) != O_NOACCESS ||
				 (flags & (O_CREAT | O_TRUNC | ONODE_O_TMPFILE_BIT | O_PATH))))
		goto einval;
	if (flags & ONODE_O_SYNC_BIT)
		flags |= O_DSYNC;

	if (!onode_is_root() && !nobody_reaches(node)) {
		out.err = EACCES;
		return out;
	}
	if (S_ISLNK(node->mode) && !(flags & O_NOFOLLOW)) {
		reached = find_node(node->target);
		if (!reached) {
			out.err = ENOENT;
			return out;
		}
	}
	if ((flags & O_DIRECTORY) && !S_ISDIR(reached->mode)) {
		out.err = ENOTDIR;
		return out;
	}
	if (flags & O_PATH) {
		out.getfl = flags & ~(__u64)O_CLOEXEC;
		out.type = reached->mode & S_IFMT;
		return out;
	}
	/* Symlinks are root's: see onode_create_node(). */
	if ((flags & O_NOATIME) && !onode_is_root() &&
	    (S_ISLNK(reached->mode) ? 0 : reached->uid) != geteuid()) {
		out.err = EPERM;
		return out;
	}
	out.getfl = flags & ~ONODE_OPEN_ONLY_FLAGS;
	out.type = reached->mode & S_IFMT;
	return out;

einval:
	out.err = EINVAL;
	return out;
}

/*
 * Opens @node with @flags, compares with expect_open() and returns whether they agree; logs the
 * first ONODE_SWEEP_LOG_MAX disagreements of the process.
 */
static bool check_open(struct __test_metadata *const _metadata, const struct onode_tree *tree,
		       const struct onode_node *node, __u64 flags, enum open_call call,
		       int largefile)
{
	const struct outcome want = expect_open(node, flags, call, largefile);
	static unsigned int logged;
	struct outcome got = {};
	int fd, fdflags = 0;
	struct stat st;

	errno = 0;
	fd = open_with(call, tree, node->name, flags);
	if (fd < 0) {
		got.err = errno;
	} else {
		got.getfl = fcntl(fd, F_GETFL);
		fdflags = fcntl(fd, F_GETFD);
		got.type = fstat(fd, &st) ? 0 : st.st_mode & S_IFMT;
		close(fd);
	}
	if (got.err == want.err && got.getfl == want.getfl && got.type == want.type &&
	    (fd < 0 || fdflags == ((flags & O_CLOEXEC) ? FD_CLOEXEC : 0)))
		return true;

	if (logged++ < ONODE_SWEEP_LOG_MAX)
		TH_LOG("%s(%s, %#llo): want %s (flags %#o, type %#o), got %s (%#o, %#o, fd %d)",
		       open_call_names[call], node->name, (unsigned long long)flags,
		       want.err ? strerror(want.err) : "success", want.getfl, want.type,
		       got.err ? strerror(got.err) : "success", got.getfl, got.type, fdflags);
	return false;
}

/* Expects @call to fail with EINVAL for @name and @flags. */
static void expect_einval(struct __test_metadata *const _metadata, const struct onode_tree *tree,
			  const char *name, __u64 flags)
{
	enum open_call call;

	for (call = 0; call < OPEN_CALL_NR; call++) {
		errno = 0;
		EXPECT_EQ(-1, open_with(call, tree, name, flags));
		EXPECT_EQ(EINVAL, errno)
		{
			TH_LOG("%s(%s, %#llo): %s", open_call_names[call], name,
			       (unsigned long long)flags, strerror(errno));
		}
	}
}

TEST_AS(flags, access_modes)
{
	static const char *const names[] = { "file", "dir", "fifo", "sock", "null", "link" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		enum open_call call;

		expect_einval(_metadata, tree, names[i], O_NODE | O_RDONLY);
		expect_einval(_metadata, tree, names[i], O_NODE | O_WRONLY);
		expect_einval(_metadata, tree, names[i], O_NODE | O_RDWR);
		for (call = 0; call < OPEN_CALL_NR; call++) {
			const int fd = open_with(call, tree, names[i], O_NODE | O_NOACCESS);

			EXPECT_LE(0, fd)
			{
				TH_LOG("%s(%s): %s", open_call_names[call], names[i],
				       strerror(errno));
			}
			EXPECT_EQ(0, close(fd));
		}
	}
}

TEST_AS(flags, create_truncate_tmpfile_rejected)
{
	struct stat st;

	/* Nothing is created, truncated or made as a side effect of the refusal. */
	expect_einval(_metadata, tree, "missing", O_NODE | O_NOACCESS | O_CREAT);
	expect_einval(_metadata, tree, "missing", O_NODE | O_NOACCESS | O_CREAT | O_EXCL);
	expect_einval(_metadata, tree, "dangling", O_NODE | O_NOACCESS | O_CREAT);
	EXPECT_ERRNO(ENOENT, fstatat(tree->fd, "missing", &st, 0));

	expect_einval(_metadata, tree, "file", O_NODE | O_NOACCESS | O_CREAT);
	expect_einval(_metadata, tree, "file", O_NODE | O_NOACCESS | O_TRUNC);
	expect_einval(_metadata, tree, "own", O_NODE | O_NOACCESS | O_TRUNC);
	expect_einval(_metadata, tree, "fifo", O_NODE | O_NOACCESS | O_TRUNC);
	ASSERT_EQ(0, fstatat(tree->fd, "file", &st, 0));
	EXPECT_EQ(sizeof(ONODE_DATA) - 1, (size_t)st.st_size);
	ASSERT_EQ(0, fstatat(tree->fd, "own", &st, 0));
	EXPECT_EQ(sizeof(ONODE_DATA) - 1, (size_t)st.st_size);

	expect_einval(_metadata, tree, "dir", O_NODE | O_NOACCESS | O_TMPFILE);
	expect_einval(_metadata, tree, "dir", O_NODE | O_NOACCESS | ONODE_O_TMPFILE_BIT);
	expect_einval(_metadata, tree, "dir", O_NODE | O_RDWR | O_TMPFILE);
}

/* open(2) lets O_PATH beat every other flag, O_NODE included; openat2(2) refuses the mix. */
TEST_AS(flags, o_path_beats_onode_in_open)
{
	static const int extras[] = { 0, O_NOACCESS, O_RDWR | O_CREAT | O_TRUNC, O_NOFOLLOW };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(extras); i++) {
		const int flags = O_PATH | O_NODE | extras[i];
		enum open_call call;

		for (call = 0; call < OPEN_CALL_OPENAT2; call++) {
			const int fd = open_with(call, tree, "link", flags);

			ASSERT_LE(0, fd)
			{
				TH_LOG("%s(link, %#o): %s", open_call_names[call], flags,
				       strerror(errno));
			}
			EXPECT_EQ(O_PATH | (flags & O_NOFOLLOW), fcntl(fd, F_GETFL));
			onode_expect_same_node(_metadata, tree, fd, (flags & O_NOFOLLOW) ? "link" : "file",
					       AT_SYMLINK_NOFOLLOW);
			EXPECT_EQ(0, close(fd));
		}
		EXPECT_ERRNO(EINVAL, open_with(OPEN_CALL_OPENAT2, tree, "link", flags));
	}
}

TEST_AS(flags, accepted_flags)
{
	const int largefile = onode_kernel_flags(_metadata, tree);
	const struct {
		int flag;
		const char *name;
	} cases[] = {
		{ O_NONBLOCK, "fifo" },	 { O_APPEND, "file" },	 { O_DSYNC, "file" },
		{ O_SYNC, "file" },	 { O_ASYNC, "file" },	 { O_DIRECT, "file" },
		{ largefile, "file" },	 { O_NOCTTY, "null" },	 { O_EXCL, "file" },
		{ O_CLOEXEC, "file" },	 { O_NOFOLLOW, "link" }, { O_DIRECTORY, "dir" },
		{ O_NOATIME, "own" },
	};
	const int all = O_NONBLOCK | O_APPEND | O_SYNC | O_ASYNC | O_DIRECT | largefile |
			O_NOCTTY | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOATIME;
	enum open_call call;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (call = 0; call < OPEN_CALL_NR; call++) {
			const int fd = open_with(call, tree, cases[i].name,
						 O_NODE | O_NOACCESS | cases[i].flag);
			const int kept = cases[i].flag & ~(O_EXCL | O_NOCTTY | O_CLOEXEC);

			ASSERT_LE(0, fd)
			{
				TH_LOG("%s(%s, O_NODE|O_NOACCESS|%#o): %s", open_call_names[call],
				       cases[i].name, cases[i].flag, strerror(errno));
			}
			EXPECT_EQ(largefile | O_NODE | O_NOACCESS | kept, fcntl(fd, F_GETFL))
			{
				TH_LOG("flag %#o", cases[i].flag);
			}
			EXPECT_EQ(cases[i].flag == O_CLOEXEC ? FD_CLOEXEC : 0, fcntl(fd, F_GETFD));
			EXPECT_EQ(0, close(fd));
		}
	}

	/* All of them at once, but O_DIRECTORY, which this regular file is not. */
	for (call = 0; call < OPEN_CALL_NR; call++) {
		const int fd = open_with(call, tree, "own", O_NODE | O_NOACCESS | all);

		ASSERT_LE(0, fd);
		EXPECT_EQ(largefile | O_NODE | O_NOACCESS | (all & ~(O_EXCL | O_NOCTTY | O_CLOEXEC)),
			  fcntl(fd, F_GETFL));
		EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
		EXPECT_EQ(0, close(fd));
	}
}

/* O_NOATIME stays for the owner and CAP_FOWNER, node open or not. */
TEST_AS(flags, noatime_owner_rule)
{
	enum open_call call;

	for (call = 0; call < OPEN_CALL_NR; call++) {
		int fd;

		fd = open_with(call, tree, "own", O_NODE | O_NOACCESS | O_NOATIME);
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, close(fd));
		if (onode_is_root()) {
			fd = open_with(call, tree, "secret", O_NODE | O_NOACCESS | O_NOATIME);
			ASSERT_LE(0, fd);
			EXPECT_EQ(0, close(fd));
		} else {
			EXPECT_ERRNO(EPERM, open_with(call, tree, "secret",
						      O_NODE | O_NOACCESS | O_NOATIME));
			EXPECT_ERRNO(EPERM, open_with(call, tree, "file",
						      O_NODE | O_NOACCESS | O_NOATIME));
			EXPECT_ERRNO(EPERM, open_with(call, tree, "dir",
						      O_NODE | O_NOACCESS | O_NOATIME));
			/* The same answer as without O_NODE. */
			EXPECT_ERRNO(EPERM, open_with(call, tree, "file", O_RDONLY | O_NOATIME));
		}
	}
}

TEST_AS(flags, directory_flag)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(onode_nodes); i++) {
		const struct onode_node *node = &onode_nodes[i];
		const struct onode_node *reached = node;
		enum open_call call;

		if (!onode_is_root() && !nobody_reaches(node))
			continue;
		if (S_ISLNK(node->mode))
			reached = find_node(node->target);
		for (call = 0; call < OPEN_CALL_NR; call++) {
			const __u64 flags = O_NODE | O_NOACCESS | O_DIRECTORY;
			const int fd = open_with(call, tree, node->name, flags);

			if (reached && S_ISDIR(reached->mode)) {
				EXPECT_LE(0, fd)
				{
					TH_LOG("%s(%s): %s", open_call_names[call], node->name,
					       strerror(errno));
				}
				EXPECT_EQ(0, close(fd));
			} else {
				EXPECT_EQ(-1, fd);
				EXPECT_EQ(reached ? ENOTDIR : ENOENT, errno)
				{
					TH_LOG("%s(%s): %s", open_call_names[call], node->name,
					       strerror(errno));
				}
			}
		}
	}
}

/* openat2(2) refuses what it does not know; open(2) drops it. */
TEST_AS(flags, unknown_flags)
{
	const int largefile = onode_kernel_flags(_metadata, tree);
	const __u64 known = valid_open_flags(largefile) | ONODE_FMODE_NONOTIFY;
	unsigned int bit;

	for (bit = 0; bit < 64; bit++) {
		const __u64 flag = (__u64)1 << bit;
		int fd;

		if (flag & known)
			continue;
		EXPECT_ERRNO(EINVAL, sys_openat2(tree->fd, "file", O_NODE | O_NOACCESS | flag, 0));
		if (bit >= 32)
			continue;
		fd = sys_openat(tree->fd, "file", O_NODE | O_NOACCESS | (int)flag);
		ASSERT_LE(0, fd)
		{
			TH_LOG("bit %u: %s", bit, strerror(errno));
		}
		EXPECT_EQ(largefile | O_NODE | O_NOACCESS, fcntl(fd, F_GETFL))
		{
			TH_LOG("bit %u", bit);
		}
		EXPECT_EQ(0, close(fd));
	}
}

/* The rest of struct open_how is checked as for any flags. */
TEST_AS(flags, openat2_how)
{
	struct open_how how = { .flags = O_NODE | O_NOACCESS };
	struct {
		struct open_how how;
		__u64 extension;
	} bigger = { .how = how };
	int fd;

	how.mode = 0600;
	EXPECT_ERRNO(EINVAL, syscall(__NR_openat2, tree->fd, "file", &how, sizeof(how)));
	how.mode = 0;
	how.resolve = (__u64)1 << 63;
	EXPECT_ERRNO(EINVAL, syscall(__NR_openat2, tree->fd, "file", &how, sizeof(how)));
	how.resolve = RESOLVE_BENEATH | RESOLVE_IN_ROOT;
	EXPECT_ERRNO(EINVAL, syscall(__NR_openat2, tree->fd, "file", &how, sizeof(how)));
	how.resolve = 0;
	EXPECT_ERRNO(EINVAL, syscall(__NR_openat2, tree->fd, "file", &how, sizeof(how) - 1));

	fd = syscall(__NR_openat2, tree->fd, "file", &bigger, sizeof(bigger));
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));
	bigger.extension = 1;
	EXPECT_ERRNO(E2BIG, syscall(__NR_openat2, tree->fd, "file", &bigger, sizeof(bigger)));
}

/* Path resolution does not care that the open is a node open. */
TEST_AS(flags, openat2_resolve)
{
	const __u64 node = O_NODE | O_NOACCESS;
	char path[PATH_MAX];
	int dir, fd;

	dir = openat(tree->fd, "dir", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, dir);
	snprintf(path, sizeof(path), "%s/file", tree->path);

	fd = sys_openat2(dir, "file", node, RESOLVE_BENEATH);
	ASSERT_LE(0, fd);
	onode_expect_same_node(_metadata, tree, fd, "dir/file", 0);
	EXPECT_EQ(0, close(fd));
	EXPECT_ERRNO(EXDEV, sys_openat2(dir, "../file", node, RESOLVE_BENEATH));
	EXPECT_ERRNO(EXDEV, sys_openat2(dir, path, node, RESOLVE_BENEATH));

	/* In the root, "/" and ".." are the directory itself. */
	fd = sys_openat2(dir, "/file", node, RESOLVE_IN_ROOT);
	ASSERT_LE(0, fd);
	onode_expect_same_node(_metadata, tree, fd, "dir/file", 0);
	EXPECT_EQ(0, close(fd));
	fd = sys_openat2(dir, "../file", node, RESOLVE_IN_ROOT);
	ASSERT_LE(0, fd);
	onode_expect_same_node(_metadata, tree, fd, "dir/file", 0);
	EXPECT_EQ(0, close(fd));

	EXPECT_ERRNO(ELOOP, sys_openat2(tree->fd, "link", node, RESOLVE_NO_SYMLINKS));
	EXPECT_ERRNO(ELOOP, sys_openat2(tree->fd, "dirlink/file", node, RESOLVE_NO_SYMLINKS));
	/* A trailing link that is not followed is no symlink resolution. */
	fd = sys_openat2(tree->fd, "link", node | O_NOFOLLOW, RESOLVE_NO_SYMLINKS);
	ASSERT_LE(0, fd);
	onode_expect_same_node(_metadata, tree, fd, "link", AT_SYMLINK_NOFOLLOW);
	EXPECT_EQ(0, close(fd));

	/* The tree is a mount of its own: getting there from / crosses one. */
	EXPECT_ERRNO(EXDEV, sys_openat2(AT_FDCWD, path, node, RESOLVE_NO_XDEV));
	fd = sys_openat2(tree->fd, "dir/file", node, RESOLVE_NO_XDEV);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));

	/* Cached lookups work as they do for a plain open of the same, now cached, path. */
	fd = sys_openat2(tree->fd, "dir/file", O_RDONLY, RESOLVE_CACHED);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));
	fd = sys_openat2(tree->fd, "dir/file", node, RESOLVE_CACHED);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));

	if (!access("/proc/self/fd", X_OK)) {
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dir);
		fd = sys_openat2(AT_FDCWD, proc, node, 0);
		ASSERT_LE(0, fd);
		onode_expect_same_node(_metadata, tree, fd, "dir", 0);
		EXPECT_EQ(0, close(fd));
		EXPECT_ERRNO(ELOOP, sys_openat2(AT_FDCWD, proc, node, RESOLVE_NO_MAGICLINKS));
	} else {
		TH_LOG("no /proc: RESOLVE_NO_MAGICLINKS not tested");
	}
	EXPECT_EQ(0, close(dir));
}

/*
 * Every access mode with every pair of the other flag bits, on every node, through both calls:
 * each open must give exactly what expect_open() says, and none may hurt the kernel (the
 * teardown checks its taint).
 */
static void sweep_flag_pairs(struct __test_metadata *const _metadata,
			     const struct onode_tree *tree)
{
	const int largefile = onode_kernel_flags(_metadata, tree);
	unsigned int mismatches = 0, opens = 0;
	enum open_call call;
	size_t n;

	alarm_interrupts(_metadata);
	for (call = 0; call < OPEN_CALL_NR; call++) {
		for (n = 0; n < ARRAY_SIZE(onode_nodes); n++) {
			const struct onode_node *node = &onode_nodes[n];
			unsigned int acc, i, j;

			for (acc = 0; acc <= O_ACCMODE; acc++) {
				for (i = 2; i < 32; i++) {
					for (j = i; j < 32; j++) {
						const __u64 flags = (__u64)(O_NODE | acc) |
								    (1U << i) | (1U << j);

						opens++;
						if (!check_open(_metadata, tree, node, flags, call,
								largefile))
							mismatches++;
					}
				}
			}
			/* openat2(2)'s flags are 64 bits wide. */
			for (i = 32; call == OPEN_CALL_OPENAT2 && i < 64; i++) {
				opens++;
				if (!check_open(_metadata, tree, node,
						(__u64)(O_NODE | O_NOACCESS) | ((__u64)1 << i),
						call, largefile))
					mismatches++;
			}
		}
	}
	EXPECT_EQ(0, mismatches)
	{
		TH_LOG("%u of %u opens differ from the spec", mismatches, opens);
	}
}

/* Every combination of the flags O_NODE accepts, on every node, through both calls. */
static void sweep_accepted_combinations(struct __test_metadata *const _metadata,
					const struct onode_tree *tree)
{
	const int largefile = onode_kernel_flags(_metadata, tree);
	const int accepted[] = {
		O_NONBLOCK, O_APPEND, O_DSYNC,	 ONODE_O_SYNC_BIT, O_ASYNC,	 O_DIRECT,   largefile,
		O_NOCTTY,   O_EXCL,   O_CLOEXEC, O_NOFOLLOW,	    O_DIRECTORY, O_NOATIME,
	};
	unsigned int mismatches = 0, opens = 0, set, i;
	enum open_call call;
	size_t n;

	alarm_interrupts(_metadata);
	for (call = 0; call < OPEN_CALL_NR; call++) {
		for (n = 0; n < ARRAY_SIZE(onode_nodes); n++) {
			for (set = 0; set < 1U << ARRAY_SIZE(accepted); set++) {
				__u64 flags = O_NODE | O_NOACCESS;

				for (i = 0; i < ARRAY_SIZE(accepted); i++)
					if (set & (1U << i))
						flags |= accepted[i];
				opens++;
				if (!check_open(_metadata, tree, &onode_nodes[n], flags, call,
						largefile))
					mismatches++;
			}
		}
	}
	EXPECT_EQ(0, mismatches)
	{
		TH_LOG("%u of %u opens differ from the spec", mismatches, opens);
	}
}

/* The sweeps make a few hundred thousand opens: room for a slow (TCG) guest. */
TEST_F_TIMEOUT(flags, sweep_flag_pairs, 600)
{
	onode_run_as(_metadata, variant->uid, sweep_flag_pairs, &self->tree);
}

TEST_F_TIMEOUT(flags, sweep_accepted_combinations, 600)
{
	onode_run_as(_metadata, variant->uid, sweep_accepted_combinations, &self->tree);
}

TEST_HARNESS_MAIN
