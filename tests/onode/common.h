/* SPDX-License-Identifier: GPL-2.0 */
/* O_NODE tests - the node tree, the variant's user and the open wrappers shared by the suites */

#ifndef ONODE_TESTS_COMMON_H
#define ONODE_TESTS_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onode.h"
#include "kselftest_harness.h"

#ifndef __NR_openat2
#define __NR_openat2 437
#endif

/* The unprivileged variants run as nobody, in nobody's group only. */
#define ONODE_NOBODY 65534

/*
 * A device major that no driver registers: Documentation/admin-guide/devices.txt keeps 120-127
 * for local and experimental use, and dynamic majors come from 234-254 and 384-511.  A plain open
 * of such a node fails with ENXIO.
 */
#define ONODE_NODRV_MAJOR 120

/* What every regular file of the tree holds, so that a read that works would show. */
#define ONODE_DATA "onode\n"

/*
 * The root of the tree: a tmpfs mounted over /tmp in the test's own mount namespace, so that the
 * real /tmp never sees the tree, not even when a timeout kills the test before its teardown.
 */
#define ONODE_TREE "/tmp"

/* Seconds an open that must not block gets before SIGALRM interrupts it. */
#define ONODE_BLOCK_TIMEOUT 5

/**
 * struct onode_node - one node of the tree every fixture builds
 * @name: path relative to the tree root
 * @mode: file type and permission bits
 * @uid: owner, also the group; a symlink is root's whatever its target
 * @major: device number of a device node
 * @minor: device number of a device node
 * @target: what a symlink points to
 */
struct onode_node {
	const char *name;
	mode_t mode;
	uid_t uid;
	unsigned int major;
	unsigned int minor;
	const char *target;
};

/*
 * One node of each type O_NODE deals with, and the permission cases: a file only root may read
 * or write, one the unprivileged user owns, a directory only root may search and one only root
 * may even list.  Parents come before their children.
 */
static const struct onode_node onode_nodes[] = {
	{ .name = "file", .mode = S_IFREG | 0644 },
	{ .name = "secret", .mode = S_IFREG | 0000 },
	{ .name = "own", .mode = S_IFREG | 0600, .uid = ONODE_NOBODY },
	{ .name = "dir", .mode = S_IFDIR | 0755 },
	{ .name = "dir/file", .mode = S_IFREG | 0644 },
	{ .name = "private", .mode = S_IFDIR | 0700 },
	{ .name = "private/file", .mode = S_IFREG | 0644 },
	{ .name = "locked", .mode = S_IFDIR | 0000 },
	{ .name = "locked/file", .mode = S_IFREG | 0644 },
	{ .name = "fifo", .mode = S_IFIFO | 0666 },
	{ .name = "sock", .mode = S_IFSOCK | 0666 },
	{ .name = "null", .mode = S_IFCHR | 0666, .major = 1, .minor = 3 },
	{ .name = "nodrv", .mode = S_IFCHR | 0666, .major = ONODE_NODRV_MAJOR },
	{ .name = "nodrv-blk", .mode = S_IFBLK | 0666, .major = ONODE_NODRV_MAJOR },
	{ .name = "link", .mode = S_IFLNK | 0777, .target = "file" },
	{ .name = "dirlink", .mode = S_IFLNK | 0777, .target = "dir" },
	{ .name = "dangling", .mode = S_IFLNK | 0777, .target = "missing" },
};

/**
 * struct onode_tree - a tree of onode_nodes on a tmpfs of its own
 * @path: the root, ONODE_TREE once built, NULL before
 * @fd: O_PATH descriptor of the root, for the *at() calls
 * @taint: /proc/sys/kernel/tainted when the tree was built, -1 if unreadable
 */
struct onode_tree {
	const char *path;
	int fd;
	long taint;
};

static inline int sys_openat(int dirfd, const char *path, int flags)
{
	/* The bare syscall: libc must not add, drop or reorder anything. */
	return syscall(__NR_openat, dirfd, path, flags, 0);
}

static inline int sys_openat2(int dirfd, const char *path, __u64 flags, __u64 resolve)
{
	struct open_how how = {
		.flags = flags,
		.resolve = resolve,
	};

	return syscall(__NR_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * SKIP() for a FIXTURE_SETUP().  The 6.1 harness goes on to run the test after a setup that
 * skipped (later harnesses return early), and a test run without its fixture, or on a kernel it
 * says nothing about, must not fail, let alone pass.  Jumping out the way a failed ASSERT does
 * ends the test there, with no teardown and no failure, and the harness reports the reason.
 */
#define ONODE_SKIP_SETUP(fmt, ...) SKIP(longjmp(_metadata->env, 1), fmt, ##__VA_ARGS__)

/*
 * Stock kernels reject the unknown flag in openat2(2), which checks all its flags; open(2)
 * would drop it silently and open the node for real.
 */
static inline bool onode_kernel_has_onode(struct __test_metadata *const _metadata)
{
	int fd = sys_openat2(AT_FDCWD, "/", O_NODE | O_NOACCESS, 0);

	if (fd < 0) {
		ASSERT_EQ(EINVAL, errno)
		{
			TH_LOG("openat2(\"/\", O_NODE|O_NOACCESS): %s", strerror(errno));
		}
		return false;
	}
	EXPECT_EQ(0, close(fd));
	return true;
}

/* Returns -1 when /proc/sys is not there. */
static inline long onode_read_taint(void)
{
	FILE *file = fopen("/proc/sys/kernel/tainted", "re");
	long taint = -1;

	if (!file)
		return -1;
	if (fscanf(file, "%ld", &taint) != 1)
		taint = -1;
	fclose(file);
	return taint;
}

static inline void onode_create_node(struct __test_metadata *const _metadata,
				     const struct onode_tree *tree, const struct onode_node *node)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	switch (node->mode & S_IFMT) {
	case S_IFREG:
		fd = openat(tree->fd, node->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		ASSERT_LE(0, fd);
		ASSERT_EQ(sizeof(ONODE_DATA) - 1, write(fd, ONODE_DATA, sizeof(ONODE_DATA) - 1));
		ASSERT_EQ(0, close(fd));
		break;
	case S_IFDIR:
		ASSERT_EQ(0, mkdirat(tree->fd, node->name, 0700));
		break;
	case S_IFIFO:
		ASSERT_EQ(0, mkfifoat(tree->fd, node->name, 0600));
		break;
	case S_IFSOCK:
		/* The node outlives the socket: nothing listens behind it. */
		ASSERT_GT(sizeof(addr.sun_path),
			  (size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%s",
					   tree->path, node->name));
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, bind(fd, (struct sockaddr *)&addr, sizeof(addr)));
		ASSERT_EQ(0, close(fd));
		break;
	case S_IFCHR:
	case S_IFBLK:
		ASSERT_EQ(0, mknodat(tree->fd, node->name, (node->mode & S_IFMT) | 0600,
				     makedev(node->major, node->minor)));
		break;
	case S_IFLNK:
		ASSERT_EQ(0, symlinkat(node->target, tree->fd, node->name));
		/* Symlinks have no mode and no other owner to set. */
		return;
	default:
		ASSERT_TRUE(false)
		{
			TH_LOG("%s: no way to make type %o", node->name, node->mode & S_IFMT);
		}
	}
	/* Modes are set after creation, so the umask has no say. */
	ASSERT_EQ(0, fchmodat(tree->fd, node->name, node->mode & 07777, 0));
	ASSERT_EQ(0, fchownat(tree->fd, node->name, node->uid, node->uid, AT_SYMLINK_NOFOLLOW));
}

/*
 * Builds the tree, or skips when the kernel has no O_NODE or when not root (mknod and chown need
 * root).  The tree is a tmpfs in a mount namespace of the test's own: tests mount nodev and
 * read-only filesystems inside it, and whatever a test leaves behind goes away with the test
 * process.
 */
static inline void onode_tree_setup(struct __test_metadata *const _metadata,
				    struct onode_tree *tree)
{
	size_t i;

	tree->fd = -1;
	tree->path = NULL;
	if (!onode_kernel_has_onode(_metadata))
		ONODE_SKIP_SETUP("kernel has no O_NODE");
	if (geteuid() != 0)
		ONODE_SKIP_SETUP("needs root to build the node tree");

	tree->taint = onode_read_taint();
	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_EQ(0, mount("onode", ONODE_TREE, "tmpfs", 0, "mode=0755"))
	{
		TH_LOG("mount tmpfs on %s: %s", ONODE_TREE, strerror(errno));
	}
	tree->path = ONODE_TREE;
	tree->fd = open(tree->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, tree->fd);
	for (i = 0; i < ARRAY_SIZE(onode_nodes); i++)
		onode_create_node(_metadata, tree, &onode_nodes[i]);
}

static inline void onode_tree_teardown(struct __test_metadata *const _metadata,
				       struct onode_tree *tree)
{
	long taint;

	if (!tree->path)
		return;
	if (tree->fd >= 0)
		EXPECT_EQ(0, close(tree->fd));
	/* Detaching takes the mounts the test made inside the tree along. */
	EXPECT_EQ(0, umount2(tree->path, MNT_DETACH));

	/* A warning or an oops the test provoked need not have failed any of its syscalls. */
	taint = onode_read_taint();
	EXPECT_EQ(tree->taint, taint)
	{
		TH_LOG("the kernel got tainted during the test: %#lx -> %#lx (see dmesg)",
		       tree->taint, taint);
	}
}

/* setgroups() first: what setgid() and setuid() leave alone must not keep root's groups. */
static inline void onode_become_nobody(struct __test_metadata *const _metadata)
{
	ASSERT_EQ(0, setgroups(0, NULL));
	ASSERT_EQ(0, setgid(ONODE_NOBODY));
	ASSERT_EQ(0, setuid(ONODE_NOBODY));
	ASSERT_EQ(ONODE_NOBODY, geteuid());
	ASSERT_EQ(ONODE_NOBODY, getegid());
	ASSERT_EQ(0, getgroups(0, NULL));
	/* Proves the capabilities went with the uid. */
	ASSERT_EQ(-1, setuid(0));
	ASSERT_EQ(EPERM, errno);
}

static inline bool onode_is_root(void)
{
	return geteuid() == 0;
}

typedef void (*onode_check_t)(struct __test_metadata *_metadata, const struct onode_tree *tree);

/*
 * Runs @check in a child, as nobody or as root, and fails the test unless the child passed.
 * The fixture stays with the parent, which tears it down as root.  The child re-arms the
 * harness's jump buffer so that a failed ASSERT ends the child right here: otherwise it would
 * jump back into the harness and run the teardown, and then the rest of the test, a second time.
 */
static inline void onode_run_as(struct __test_metadata *const _metadata, uid_t uid,
				onode_check_t check, const struct onode_tree *tree)
{
	int status;
	pid_t child;

	fflush(NULL);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		if (setjmp(_metadata->env) == 0) {
			if (uid != 0)
				onode_become_nobody(_metadata);
			check(_metadata, tree);
		}
		_exit(_metadata->passed ? EXIT_SUCCESS : EXIT_FAILURE);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status))
	{
		TH_LOG("the check was killed by signal %d", WTERMSIG(status));
	}
	ASSERT_EQ(EXIT_SUCCESS, WEXITSTATUS(status));
}

/* Every fixture comes as root and as nobody. */
#define ONODE_VARIANTS(fixture)                            \
	FIXTURE_VARIANT(fixture) {                         \
		uid_t uid;                                 \
	};                                                 \
	FIXTURE_VARIANT_ADD(fixture, root) {               \
		.uid = 0,                                  \
	};                                                 \
	FIXTURE_VARIANT_ADD(fixture, nobody) {             \
		.uid = ONODE_NOBODY,                       \
	}

/*
 * TEST_AS(fixture, name) { ... } is a TEST_F() whose body runs as the variant's user, given the
 * fixture's tree as @tree (onode_run_as()).  The fixture must hold its tree as self->tree.
 */
#define TEST_AS(fixture, test_name)                                                          \
	static void fixture##_##test_name##_as(struct __test_metadata *_metadata,            \
					       const struct onode_tree *tree);               \
	TEST_F(fixture, test_name)                                                           \
	{                                                                                    \
		onode_run_as(_metadata, variant->uid, fixture##_##test_name##_as, &self->tree); \
	}                                                                                    \
	static void fixture##_##test_name##_as(                                              \
		struct __test_metadata __attribute__((unused)) *_metadata,                   \
		const struct onode_tree __attribute__((unused)) *tree)

/*
 * Opens @name below the tree with O_NODE|O_NOACCESS|@extra through openat(2), asserting success,
 * and returns the descriptor.
 */
#define onode_open(tree, name, extra)                                                      \
	({                                                                                  \
		const int __fd = sys_openat((tree)->fd, (name), O_NODE | O_NOACCESS | (extra)); \
		ASSERT_LE(0, __fd)                                                          \
		{                                                                           \
			TH_LOG("O_NODE open of %s: %s", (name), strerror(errno));           \
		}                                                                           \
		__fd;                                                                       \
	})

/* Expects @call to fail with @err (one errno value, not "any failure"). */
#define EXPECT_ERRNO(err, call)                                                            \
	do {                                                                                \
		errno = 0;                                                                  \
		EXPECT_EQ(-1, (long)(call));                                                \
		EXPECT_EQ((err), errno)                                                     \
		{                                                                           \
			TH_LOG("%s: %s", #call, strerror(errno));                           \
		}                                                                           \
	} while (0)

#define ASSERT_ERRNO(err, call)                                                            \
	do {                                                                                \
		errno = 0;                                                                  \
		ASSERT_EQ(-1, (long)(call));                                                \
		ASSERT_EQ((err), errno)                                                     \
		{                                                                           \
			TH_LOG("%s: %s", #call, strerror(errno));                           \
		}                                                                           \
	} while (0)

/*
 * For checks in a loop: names the iteration in which the test started failing, and stays quiet
 * otherwise.  @was_passing is _metadata->passed from the start of the iteration.
 */
static inline void onode_blame(struct __test_metadata *const _metadata, bool was_passing,
			       const char *what)
{
	if (was_passing && !_metadata->passed)
		TH_LOG("the failures above are about %s", what);
}

/* F_GETFL of a plain open: the flags the kernel adds on its own (O_LARGEFILE on 64-bit). */
static inline int onode_kernel_flags(struct __test_metadata *const _metadata,
				     const struct onode_tree *tree)
{
	const int fd = openat(tree->fd, "dir", O_RDONLY | O_CLOEXEC);
	int flags;

	ASSERT_LE(0, fd);
	flags = fcntl(fd, F_GETFL);
	ASSERT_LE(0, flags);
	ASSERT_EQ(0, close(fd));
	return flags & ~O_ACCMODE;
}

/* Expects fstat(@fd) to describe the same node as [l]stat(@name). */
static inline void onode_expect_same_node(struct __test_metadata *const _metadata,
					  const struct onode_tree *tree, int fd, const char *name,
					  int at_flags)
{
	struct stat got, want;

	ASSERT_EQ(0, fstat(fd, &got));
	ASSERT_EQ(0, fstatat(tree->fd, name, &want, at_flags));
	EXPECT_EQ(want.st_dev, got.st_dev);
	EXPECT_EQ(want.st_ino, got.st_ino);
	EXPECT_EQ(want.st_mode, got.st_mode);
	EXPECT_EQ(want.st_nlink, got.st_nlink);
	EXPECT_EQ(want.st_uid, got.st_uid);
	EXPECT_EQ(want.st_gid, got.st_gid);
	EXPECT_EQ(want.st_rdev, got.st_rdev);
	EXPECT_EQ(want.st_size, got.st_size);
}

#endif /* ONODE_TESTS_COMMON_H */
