// SPDX-License-Identifier: GPL-2.0
/* O_NODE tests - what an O_NODE open of each file type does, and what its descriptor allows */

#include "common.h"

#include <dirent.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>

FIXTURE(node)
{
	struct onode_tree tree;
};

ONODE_VARIANTS(node);

FIXTURE_SETUP(node)
{
	onode_tree_setup(_metadata, &self->tree);
}

FIXTURE_TEARDOWN(node)
{
	onode_tree_teardown(_metadata, &self->tree);
}

/* Expects the regular file @name to still hold ONODE_DATA, read through a plain open. */
static void expect_data_intact(struct __test_metadata *const _metadata,
			       const struct onode_tree *tree, const char *name)
{
	char buf[sizeof(ONODE_DATA)] = {};
	int fd;

	/* Root reads whatever the mode, nobody only what the mode lets it. */
	fd = openat(tree->fd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && !onode_is_root())
		return;
	ASSERT_LE(0, fd);
	EXPECT_EQ(sizeof(ONODE_DATA) - 1, read(fd, buf, sizeof(buf)));
	EXPECT_STREQ(ONODE_DATA, buf);
	EXPECT_EQ(0, close(fd));
}

static int count_entries(struct __test_metadata *const _metadata, const struct onode_tree *tree,
			 const char *name)
{
	const int fd = openat(tree->fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *entry;
	int count = 0;
	DIR *dir;

	ASSERT_LE(0, fd);
	dir = fdopendir(fd);
	ASSERT_NE(NULL, dir);
	while ((entry = readdir(dir)))
		if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
			count++;
	EXPECT_EQ(0, closedir(dir));
	return count;
}

TEST_AS(node, regular_file)
{
	const int fd = onode_open(tree, "file", 0);

	onode_expect_same_node(_metadata, tree, fd, "file", 0);
	EXPECT_EQ(onode_kernel_flags(_metadata, tree) | O_NODE | O_NOACCESS, fcntl(fd, F_GETFL));
	EXPECT_EQ(0, fcntl(fd, F_GETFD));
	EXPECT_EQ(0, close(fd));
}

/*
 * The descriptor has neither FMODE_READ nor FMODE_WRITE: every way to move data through it
 * fails, for a file as for a device whose driver would have answered.
 */
TEST_AS(node, no_data_through_the_fd)
{
	static const char *const names[] = { "file", "own", "null" };
	char buf[sizeof(ONODE_DATA)] = {};
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	const int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	size_t i;

	ASSERT_LE(0, out);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const bool passing = _metadata->passed;
		const int fd = onode_open(tree, names[i], 0);

		EXPECT_ERRNO(EBADF, read(fd, buf, sizeof(buf)));
		EXPECT_ERRNO(EBADF, write(fd, ONODE_DATA, sizeof(ONODE_DATA) - 1));
		EXPECT_ERRNO(EBADF, readv(fd, &iov, 1));
		EXPECT_ERRNO(EBADF, writev(fd, &iov, 1));
		/* Not seekable, so no positioned I/O either. */
		EXPECT_ERRNO(ESPIPE, pread(fd, buf, sizeof(buf), 0));
		EXPECT_ERRNO(ESPIPE, pwrite(fd, buf, 1, 0));
		EXPECT_ERRNO(EBADF, sendfile(out, fd, NULL, sizeof(buf)));
		EXPECT_ERRNO(EBADF, fallocate(fd, 0, 0, 1));
		errno = 0;
		EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0));
		EXPECT_EQ(EACCES, errno);
		EXPECT_ERRNO(EBADF, flock(fd, LOCK_SH | LOCK_NB));
		EXPECT_EQ(0, close(fd));
		onode_blame(_metadata, passing, names[i]);
	}
	{
		const int fd = onode_open(tree, "own", 0);

		EXPECT_ERRNO(EINVAL, ftruncate(fd, 0));
		EXPECT_EQ(0, close(fd));
	}
	EXPECT_EQ(0, close(out));
	expect_data_intact(_metadata, tree, "file");
	expect_data_intact(_metadata, tree, "own");
}

TEST_AS(node, refuses_seek)
{
	static const char *const names[] = { "file", "dir", "null" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const bool passing = _metadata->passed;
		const int fd = onode_open(tree, names[i], 0);

		EXPECT_ERRNO(ESPIPE, lseek(fd, 0, SEEK_SET));
		EXPECT_ERRNO(ESPIPE, lseek(fd, 1, SEEK_CUR));
		EXPECT_ERRNO(ESPIPE, lseek(fd, 0, SEEK_END));
		EXPECT_EQ(0, close(fd));
		onode_blame(_metadata, passing, names[i]);
	}
}

TEST_AS(node, directory)
{
	const int fd = onode_open(tree, "dir", 0);
	char buf[sizeof(ONODE_DATA)] = {};
	char dents[1024];
	int file;

	onode_expect_same_node(_metadata, tree, fd, "dir", 0);

	/* A dirfd for the *at() calls, O_NODE opens included. */
	file = openat(fd, "file", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, file);
	EXPECT_EQ(sizeof(ONODE_DATA) - 1, read(file, buf, sizeof(buf)));
	EXPECT_STREQ(ONODE_DATA, buf);
	EXPECT_EQ(0, close(file));
	file = sys_openat(fd, "file", O_NODE | O_NOACCESS);
	ASSERT_LE(0, file);
	onode_expect_same_node(_metadata, tree, file, "dir/file", 0);
	EXPECT_EQ(0, close(file));

	/* Listing needs a directory opened for reading: the node's file has no such operations. */
	EXPECT_ERRNO(ENOTDIR, syscall(__NR_getdents64, fd, dents, sizeof(dents)));

	ASSERT_EQ(0, fchdir(fd));
	file = open("file", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, file);
	EXPECT_EQ(0, close(file));
	EXPECT_EQ(0, close(fd));
}

TEST_AS(node, not_a_directory)
{
	const int fd = onode_open(tree, "file", 0);

	EXPECT_ERRNO(ENOTDIR, fchdir(fd));
	EXPECT_ERRNO(ENOTDIR, sys_openat(fd, "file", O_NODE | O_NOACCESS));
	EXPECT_EQ(0, close(fd));
}

/* A fifo's ->open() waits for the other end: the node open must not get there. */
TEST_AS(node, fifo_does_not_block)
{
	int fd, reader, writer;

	alarm(ONODE_BLOCK_TIMEOUT);
	fd = onode_open(tree, "fifo", 0);
	alarm(0);
	onode_expect_same_node(_metadata, tree, fd, "fifo", 0);
	EXPECT_ERRNO(EBADF, read(fd, &writer, 1));

	/* It is no reader: a writer still finds none... */
	EXPECT_ERRNO(ENXIO, openat(tree->fd, "fifo", O_WRONLY | O_NONBLOCK | O_CLOEXEC));
	/* ...until a real one comes. */
	reader = openat(tree->fd, "fifo", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, reader);
	writer = openat(tree->fd, "fifo", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, writer);
	EXPECT_EQ(0, close(writer));
	EXPECT_EQ(0, close(reader));
	EXPECT_EQ(0, close(fd));
}

TEST_AS(node, unix_socket)
{
	int fd;

	EXPECT_ERRNO(ENXIO, openat(tree->fd, "sock", O_RDONLY | O_CLOEXEC));
	fd = onode_open(tree, "sock", 0);
	onode_expect_same_node(_metadata, tree, fd, "sock", 0);
	EXPECT_ERRNO(ENOTSOCK, listen(fd, 1));
	EXPECT_EQ(0, close(fd));
}

TEST_AS(node, char_device)
{
	const int fd = onode_open(tree, "null", 0);
	struct stat st;
	char buf[1];
	int dev;

	onode_expect_same_node(_metadata, tree, fd, "null", 0);
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(makedev(1, 3), st.st_rdev);
	/* The driver is not behind the descriptor... */
	EXPECT_ERRNO(EBADF, read(fd, buf, sizeof(buf)));
	EXPECT_ERRNO(EBADF, write(fd, "x", 1));
	EXPECT_EQ(0, close(fd));

	/* ...as it is behind a plain open: /dev/null reads nothing and swallows everything. */
	dev = openat(tree->fd, "null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	EXPECT_EQ(0, read(dev, buf, sizeof(buf)));
	EXPECT_EQ(1, write(dev, "x", 1));
	EXPECT_EQ(0, close(dev));
}

TEST_AS(node, devices_without_driver)
{
	static const char *const names[] = { "nodrv", "nodrv-blk" };
	/*
	 * A kernel without CONFIG_BLOCK (the test kernel is tinyconfig-based) opens every block
	 * node to fs/no-block.c's ENODEV; /sys/block is there only with the block layer.
	 */
	const int errs[] = { ENXIO, access("/sys/block", F_OK) ? ENODEV : ENXIO };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const bool passing = _metadata->passed;
		int fd;

		EXPECT_ERRNO(errs[i], openat(tree->fd, names[i], O_RDONLY | O_CLOEXEC));
		fd = onode_open(tree, names[i], 0);
		onode_expect_same_node(_metadata, tree, fd, names[i], 0);
		EXPECT_EQ(0, close(fd));
		onode_blame(_metadata, passing, names[i]);
	}
}

/*
 * __fput() must not drop a cdev reference that the node open never took.  The plain open first
 * hangs the cdev on the inode, which is when a wrong cdev_put() would count: the refcount
 * underflows (a warning that taints the kernel, which the teardown checks) and the cdev is
 * freed under /dev/null's next open.
 */
TEST_AS(node, char_device_references)
{
	char buf[1];
	int fd, i;

	fd = openat(tree->fd, "null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	for (i = 0; i < 1000; i++) {
		fd = sys_openat(tree->fd, "null", O_NODE | O_NOACCESS);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, close(fd));
	}
	fd = openat(tree->fd, "null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(1, write(fd, "x", 1));
	EXPECT_EQ(0, close(fd));
}

TEST_AS(node, node_permission_not_needed)
{
	const int fd = onode_open(tree, "secret", 0);

	onode_expect_same_node(_metadata, tree, fd, "secret", 0);
	EXPECT_EQ(0, close(fd));

	/* What the node open does without: */
	if (onode_is_root()) {
		EXPECT_EQ(0, close(openat(tree->fd, "secret", O_RDONLY | O_CLOEXEC)));
	} else {
		EXPECT_ERRNO(EACCES, openat(tree->fd, "secret", O_RDONLY | O_CLOEXEC));
		EXPECT_ERRNO(EACCES, openat(tree->fd, "secret", O_NOACCESS | O_CLOEXEC));
		EXPECT_ERRNO(EACCES, openat(tree->fd, "file", O_NOACCESS | O_CLOEXEC));
	}
}

TEST_AS(node, search_permission_needed)
{
	static const char *const dirs[] = { "private", "locked" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		const bool passing = _metadata->passed;
		char path[32];
		int fd;

		snprintf(path, sizeof(path), "%s/file", dirs[i]);
		/* The directory is a node like any other... */
		fd = onode_open(tree, dirs[i], 0);
		onode_expect_same_node(_metadata, tree, fd, dirs[i], 0);
		if (onode_is_root()) {
			EXPECT_EQ(0, close(onode_open(tree, path, 0)));
			EXPECT_EQ(0, close(sys_openat2(tree->fd, path, O_NODE | O_NOACCESS, 0)));
			EXPECT_EQ(0, close(sys_openat(fd, "file", O_NODE | O_NOACCESS)));
		} else {
			/* ...but looking up a name in it takes search permission. */
			EXPECT_ERRNO(EACCES, sys_openat(tree->fd, path, O_NODE | O_NOACCESS));
			EXPECT_ERRNO(EACCES, sys_openat2(tree->fd, path, O_NODE | O_NOACCESS, 0));
			EXPECT_ERRNO(EACCES, sys_openat(fd, "file", O_NODE | O_NOACCESS));
		}
		EXPECT_EQ(0, close(fd));
		onode_blame(_metadata, passing, dirs[i]);
	}
}

/* fchdir() checks search permission on the node, which the open did not. */
TEST_AS(node, fchdir_checks_search_permission)
{
	const int fd = onode_open(tree, "locked", 0);

	if (onode_is_root()) {
		EXPECT_EQ(0, fchdir(fd));
	} else {
		EXPECT_ERRNO(EACCES, fchdir(fd));
	}
	EXPECT_EQ(0, close(fd));
}

TEST_AS(node, fchmod_fchown_owner_rules)
{
	struct stat st;
	int fd;

	/* nobody's file: its owner may change its mode and its group to one of its own. */
	fd = onode_open(tree, "own", 0);
	EXPECT_EQ(0, fchmod(fd, 0640));
	ASSERT_EQ(0, fstatat(tree->fd, "own", &st, 0));
	EXPECT_EQ(S_IFREG | 0640, st.st_mode);
	EXPECT_EQ(0, fchown(fd, -1, ONODE_NOBODY));
	if (onode_is_root()) {
		EXPECT_EQ(0, fchown(fd, 0, 0));
	} else {
		EXPECT_ERRNO(EPERM, fchown(fd, 0, -1));
		EXPECT_ERRNO(EPERM, fchown(fd, -1, 0));
	}
	EXPECT_EQ(0, close(fd));

	/* root's file. */
	fd = onode_open(tree, "secret", 0);
	if (onode_is_root()) {
		EXPECT_EQ(0, fchmod(fd, 0604));
		EXPECT_EQ(0, fchown(fd, ONODE_NOBODY, ONODE_NOBODY));
	} else {
		EXPECT_ERRNO(EPERM, fchmod(fd, 0604));
		EXPECT_ERRNO(EPERM, fchown(fd, ONODE_NOBODY, ONODE_NOBODY));
	}
	ASSERT_EQ(0, fstatat(tree->fd, "secret", &st, 0));
	EXPECT_EQ(S_IFREG | (onode_is_root() ? 0604 : 0000), st.st_mode);
	EXPECT_EQ(onode_is_root() ? ONODE_NOBODY : 0, st.st_uid);
	EXPECT_EQ(0, close(fd));
}

TEST_AS(node, symlink_nofollow_opens_the_link)
{
	static const char *const names[] = { "link", "dirlink", "dangling" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const bool passing = _metadata->passed;
		const struct onode_node *node = NULL;
		char target[32] = {};
		size_t j;
		int fd;

		for (j = 0; j < ARRAY_SIZE(onode_nodes); j++)
			if (!strcmp(onode_nodes[j].name, names[i]))
				node = &onode_nodes[j];
		ASSERT_NE(NULL, node);

		fd = onode_open(tree, names[i], O_NOFOLLOW);
		onode_expect_same_node(_metadata, tree, fd, names[i], AT_SYMLINK_NOFOLLOW);
		EXPECT_EQ(strlen(node->target), readlinkat(fd, "", target, sizeof(target)));
		EXPECT_STREQ(node->target, target);
		EXPECT_ERRNO(ENOTDIR, fchdir(fd));
		EXPECT_ERRNO(ENOTDIR, sys_openat(fd, "file", O_NODE | O_NOACCESS));
		EXPECT_EQ(onode_kernel_flags(_metadata, tree) | O_NODE | O_NOACCESS | O_NOFOLLOW,
			  fcntl(fd, F_GETFL));
		EXPECT_EQ(0, close(fd));

		/* The link is no directory, whatever it points to. */
		EXPECT_ERRNO(ENOTDIR, sys_openat(tree->fd, names[i],
						 O_NODE | O_NOACCESS | O_NOFOLLOW | O_DIRECTORY));
		/* Without O_NODE, O_NOFOLLOW keeps refusing links, in every access mode. */
		EXPECT_ERRNO(ELOOP, sys_openat(tree->fd, names[i], O_RDONLY | O_NOFOLLOW));
		EXPECT_ERRNO(ELOOP, sys_openat(tree->fd, names[i], O_NOACCESS | O_NOFOLLOW));
		EXPECT_ERRNO(ELOOP, sys_openat2(tree->fd, names[i], O_RDONLY | O_NOFOLLOW, 0));
		onode_blame(_metadata, passing, names[i]);
	}
}

TEST_AS(node, symlink_followed)
{
	int fd;

	fd = onode_open(tree, "link", 0);
	onode_expect_same_node(_metadata, tree, fd, "file", 0);
	EXPECT_EQ(0, close(fd));
	fd = onode_open(tree, "dirlink", O_DIRECTORY);
	onode_expect_same_node(_metadata, tree, fd, "dir", 0);
	EXPECT_EQ(0, close(fd));
	EXPECT_ERRNO(ENOENT, sys_openat(tree->fd, "dangling", O_NODE | O_NOACCESS));
	EXPECT_ERRNO(ENOENT, sys_openat2(tree->fd, "dangling", O_NODE | O_NOACCESS, 0));
	EXPECT_ERRNO(ENOTDIR, sys_openat(tree->fd, "link", O_NODE | O_NOACCESS | O_DIRECTORY));

	/* A trailing slash follows the link even with O_NOFOLLOW. */
	fd = onode_open(tree, "dirlink/", O_NOFOLLOW);
	onode_expect_same_node(_metadata, tree, fd, "dir", 0);
	EXPECT_EQ(0, close(fd));
	EXPECT_ERRNO(ENOTDIR, sys_openat(tree->fd, "link/", O_NODE | O_NOACCESS | O_NOFOLLOW));
	EXPECT_ERRNO(ENOENT, sys_openat(tree->fd, "dangling/", O_NODE | O_NOACCESS | O_NOFOLLOW));
}

/*
 * A descriptor of a symlink, reopened through its /proc/self/fd magic link, reaches the link
 * node without any walk having stopped at it: a plain open refuses that with ELOOP, and so must
 * an O_NODE open without O_NOFOLLOW, which asks for the link to be followed.
 */
static void reopen_symlink_fd(struct __test_metadata *const _metadata,
			      const struct onode_tree *tree)
{
	const int fd = onode_open(tree, "link", O_NOFOLLOW);
	char proc[64];
	int reopened;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	EXPECT_ERRNO(ELOOP, sys_openat(AT_FDCWD, proc, O_RDONLY));
	EXPECT_ERRNO(ELOOP, sys_openat(AT_FDCWD, proc, O_NODE | O_NOACCESS));
	/* With O_NOFOLLOW the magic link itself is the node. */
	reopened = sys_openat(AT_FDCWD, proc, O_NODE | O_NOACCESS | O_NOFOLLOW);
	ASSERT_LE(0, reopened);
	EXPECT_EQ(0, close(reopened));
	EXPECT_EQ(0, close(fd));
}

/*
 * Reopening the descriptor through /proc is a new open of the node, with the node's own
 * permission checks: O_NODE gets no more out of a node than O_PATH does.
 */
static void reopen_through_proc(struct __test_metadata *const _metadata,
				const struct onode_tree *tree)
{
	char buf[sizeof(ONODE_DATA)] = {};
	char proc[64];
	int fd, reopened;

	fd = onode_open(tree, "secret", 0);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (onode_is_root()) {
		reopened = open(proc, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, reopened);
		EXPECT_EQ(sizeof(ONODE_DATA) - 1, read(reopened, buf, sizeof(buf)));
		EXPECT_STREQ(ONODE_DATA, buf);
		EXPECT_EQ(0, close(reopened));
	} else {
		EXPECT_ERRNO(EACCES, open(proc, O_RDONLY | O_CLOEXEC));
		EXPECT_ERRNO(EACCES, open(proc, O_WRONLY | O_CLOEXEC));
	}
	reopened = sys_openat(AT_FDCWD, proc, O_NODE | O_NOACCESS);
	ASSERT_LE(0, reopened);
	onode_expect_same_node(_metadata, tree, reopened, "secret", 0);
	EXPECT_EQ(0, close(reopened));
	EXPECT_EQ(0, close(fd));

	fd = onode_open(tree, "file", 0);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	reopened = open(proc, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, reopened);
	EXPECT_EQ(sizeof(ONODE_DATA) - 1, read(reopened, buf, sizeof(buf)));
	EXPECT_EQ(0, close(reopened));
	if (!onode_is_root())
		EXPECT_ERRNO(EACCES, open(proc, O_WRONLY | O_CLOEXEC));
	EXPECT_EQ(0, close(fd));
}

TEST_F(node, reopen_through_proc)
{
	if (access("/proc/self/fd", X_OK))
		SKIP(return, "no /proc");
	onode_run_as(_metadata, variant->uid, reopen_through_proc, &self->tree);
}

TEST_F(node, reopen_symlink_fd_through_proc)
{
	if (access("/proc/self/fd", X_OK))
		SKIP(return, "no /proc");
	onode_run_as(_metadata, variant->uid, reopen_symlink_fd, &self->tree);
}

static void open_on_nodev_mount(struct __test_metadata *const _metadata,
				const struct onode_tree *tree)
{
	int fd;

	EXPECT_ERRNO(EACCES, openat(tree->fd, "nodev/null", O_RDONLY | O_CLOEXEC));
	fd = onode_open(tree, "nodev/null", 0);
	onode_expect_same_node(_metadata, tree, fd, "nodev/null", 0);
	EXPECT_EQ(0, close(fd));
}

TEST_F(node, device_on_nodev_mount)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/nodev", self->tree.path);
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, mount("onode-nodev", path, "tmpfs", MS_NODEV, "mode=0755"));
	ASSERT_EQ(0, mknodat(self->tree.fd, "nodev/null", S_IFCHR | 0666, makedev(1, 3)));
	ASSERT_EQ(0, fchmodat(self->tree.fd, "nodev/null", 0666, 0));
	onode_run_as(_metadata, variant->uid, open_on_nodev_mount, &self->tree);
}

/* An O_NODE open writes nothing, so a read-only mount lets it through, and only it. */
static void open_on_read_only_mount(struct __test_metadata *const _metadata,
				    const struct onode_tree *tree)
{
	int fd;

	fd = onode_open(tree, "ro/file", 0);
	onode_expect_same_node(_metadata, tree, fd, "ro/file", 0);
	EXPECT_ERRNO(EROFS, fchmod(fd, 0600));
	EXPECT_EQ(0, close(fd));
	EXPECT_ERRNO(EROFS, openat(tree->fd, "ro/file", O_NOACCESS | O_CLOEXEC));
	EXPECT_ERRNO(EROFS, openat(tree->fd, "ro/file", O_RDWR | O_CLOEXEC));
	EXPECT_EQ(0, close(openat(tree->fd, "ro/file", O_RDONLY | O_CLOEXEC)));
}

TEST_F(node, read_only_mount)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/ro", self->tree.path);
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, mount("onode-ro", path, "tmpfs", 0, "mode=0755"));
	fd = openat(self->tree.fd, "ro/file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fchmod(fd, 0666));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, mount(NULL, path, NULL, MS_REMOUNT | MS_RDONLY, NULL));
	onode_run_as(_metadata, variant->uid, open_on_read_only_mount, &self->tree);
}

/*
 * A descriptor holding write access to a mount keeps it from going read-only (EBUSY).  Who holds
 * the descriptor does not matter, so the test process, root, holds it in both variants.
 */
TEST_F(node, no_write_access_to_the_mount)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/rw", self->tree.path);
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, mount("onode-rw", path, "tmpfs", 0, "mode=0755"));
	fd = openat(self->tree.fd, "rw/file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));

	fd = onode_open(&self->tree, "rw/file", 0);
	EXPECT_EQ(0, mount(NULL, path, NULL, MS_REMOUNT | MS_RDONLY, NULL));
	EXPECT_EQ(0, mount(NULL, path, NULL, MS_REMOUNT, NULL));
	EXPECT_EQ(0, close(fd));

	/* What write access looks like: mode 3 without O_NODE takes it, as O_RDWR does. */
	fd = openat(self->tree.fd, "rw/file", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EBUSY, mount(NULL, path, NULL, MS_REMOUNT | MS_RDONLY, NULL));
	EXPECT_EQ(0, close(fd));
}

/*
 * Opening devpts' ptmx allocates a pty, which shows as a new entry next to it.  The devpts
 * instance is the test's own, so the count starts at ptmx alone.
 */
static void ptmx_allocates_nothing(struct __test_metadata *const _metadata,
				   const struct onode_tree *tree)
{
	int fd, master;

	ASSERT_EQ(1, count_entries(_metadata, tree, "pts"));
	fd = onode_open(tree, "pts/ptmx", 0);
	onode_expect_same_node(_metadata, tree, fd, "pts/ptmx", 0);
	EXPECT_EQ(1, count_entries(_metadata, tree, "pts"));
	EXPECT_ERRNO(ENOTTY, ioctl(fd, TIOCGPTN, &(unsigned int){ 0 }));
	EXPECT_EQ(0, close(fd));

	master = openat(tree->fd, "pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	ASSERT_LE(0, master);
	EXPECT_EQ(2, count_entries(_metadata, tree, "pts"));
	EXPECT_EQ(0, ioctl(master, TIOCGPTN, &(unsigned int){ 0 }));
	EXPECT_EQ(0, close(master));
}

TEST_F(node, ptmx_allocates_no_pty)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/pts", self->tree.path);
	ASSERT_EQ(0, mkdir(path, 0755));
	if (mount("onode-pts", path, "devpts", 0, "newinstance,ptmxmode=0666")) {
		ASSERT_EQ(ENODEV, errno);
		SKIP(return, "kernel has no devpts");
	}
	onode_run_as(_metadata, variant->uid, ptmx_allocates_nothing, &self->tree);
}

/* The lease holder is the test process, which blocks SIGIO to see it arrive. */
static bool sigio_pending(void)
{
	sigset_t pending;

	sigemptyset(&pending);
	return !sigpending(&pending) && sigismember(&pending, SIGIO);
}

static void open_leased_file_as_node(struct __test_metadata *const _metadata,
				     const struct onode_tree *tree)
{
	int fd;

	/* A lease break would make this wait for the holder: the lease break time is 45s. */
	alarm(ONODE_BLOCK_TIMEOUT);
	fd = onode_open(tree, "file", 0);
	alarm(0);
	EXPECT_EQ(0, close(fd));
	fd = onode_open(tree, "file", O_NONBLOCK);
	EXPECT_EQ(0, close(fd));
}

static void open_leased_file(struct __test_metadata *const _metadata,
			     const struct onode_tree *tree)
{
	EXPECT_ERRNO(EWOULDBLOCK, openat(tree->fd, "file", O_RDONLY | O_NONBLOCK | O_CLOEXEC));
}

TEST_F(node, lease_not_broken)
{
	sigset_t sigio;
	int holder;

	sigemptyset(&sigio);
	sigaddset(&sigio, SIGIO);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &sigio, NULL));
	holder = openat(self->tree.fd, "file", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, holder);
	ASSERT_EQ(0, fcntl(holder, F_SETLEASE, F_WRLCK));

	onode_run_as(_metadata, variant->uid, open_leased_file_as_node, &self->tree);
	EXPECT_EQ(F_WRLCK, fcntl(holder, F_GETLEASE));
	EXPECT_FALSE(sigio_pending());

	/* The same open without O_NODE does break it. */
	onode_run_as(_metadata, variant->uid, open_leased_file, &self->tree);
	EXPECT_EQ(F_RDLCK, fcntl(holder, F_GETLEASE));
	EXPECT_TRUE(sigio_pending());
	EXPECT_EQ(0, close(holder));
}

/*
 * A write lease is only granted when its holder's descriptor is the file's only reader or
 * writer: an O_NODE descriptor must count as neither.
 */
TEST_AS(node, no_reader_no_writer)
{
	const int fd = onode_open(tree, "own", 0);
	int holder, other;
	sigset_t sigio;

	/* A lease break signals the holder, here the check itself. */
	sigemptyset(&sigio);
	sigaddset(&sigio, SIGIO);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &sigio, NULL));
	holder = openat(tree->fd, "own", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, holder);
	EXPECT_EQ(0, fcntl(holder, F_SETLEASE, F_WRLCK));
	EXPECT_EQ(0, close(onode_open(tree, "own", 0)));
	EXPECT_EQ(F_WRLCK, fcntl(holder, F_GETLEASE));
	EXPECT_FALSE(sigio_pending());
	EXPECT_EQ(0, fcntl(holder, F_SETLEASE, F_UNLCK));

	other = openat(tree->fd, "own", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, other);
	EXPECT_ERRNO(EAGAIN, fcntl(holder, F_SETLEASE, F_WRLCK));
	EXPECT_EQ(0, close(other));
	EXPECT_EQ(0, close(holder));
	EXPECT_EQ(0, close(fd));
}

/* Access mode 3 without O_NODE is what it always was: a real open that needs read and write. */
TEST_AS(node, mode3_without_onode_unchanged)
{
	char buf[1];
	int fd;

	if (onode_is_root()) {
		fd = openat(tree->fd, "file", O_NOACCESS | O_CLOEXEC);
		ASSERT_LE(0, fd);
		EXPECT_EQ(onode_kernel_flags(_metadata, tree) | O_NOACCESS, fcntl(fd, F_GETFL));
		EXPECT_ERRNO(EBADF, read(fd, buf, sizeof(buf)));
		EXPECT_EQ(0, close(fd));
	} else {
		EXPECT_ERRNO(EACCES, openat(tree->fd, "file", O_NOACCESS | O_CLOEXEC));
	}
	fd = openat(tree->fd, "own", O_NOACCESS | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));

	EXPECT_ERRNO(EISDIR, openat(tree->fd, "dir", O_NOACCESS | O_CLOEXEC));
	EXPECT_ERRNO(EINVAL, openat(tree->fd, "fifo", O_NOACCESS | O_CLOEXEC));
	EXPECT_ERRNO(ENXIO, openat(tree->fd, "sock", O_NOACCESS | O_CLOEXEC));
	EXPECT_ERRNO(ENXIO, openat(tree->fd, "nodrv", O_NOACCESS | O_CLOEXEC));
	EXPECT_ERRNO(ELOOP, openat(tree->fd, "link", O_NOACCESS | O_NOFOLLOW | O_CLOEXEC));
	/* A device opened in mode 3 reaches its driver, for ioctls, as it always did. */
	fd = openat(tree->fd, "null", O_NOACCESS | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EBADF, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(0, close(fd));
}

TEST_AS(node, o_path_unchanged)
{
	char buf[1];
	int fd;

	fd = openat(tree->fd, "secret", O_PATH | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(O_PATH, fcntl(fd, F_GETFL));
	onode_expect_same_node(_metadata, tree, fd, "secret", 0);
	/* Unlike an O_NODE descriptor, it is no file for fchmod() and fchown(). */
	EXPECT_ERRNO(EBADF, fchmod(fd, 0));
	EXPECT_ERRNO(EBADF, fchown(fd, -1, -1));
	EXPECT_ERRNO(EBADF, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(0, close(fd));

	alarm(ONODE_BLOCK_TIMEOUT);
	fd = openat(tree->fd, "fifo", O_PATH | O_CLOEXEC);
	alarm(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));

	fd = openat(tree->fd, "link", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	ASSERT_LE(0, fd);
	onode_expect_same_node(_metadata, tree, fd, "link", AT_SYMLINK_NOFOLLOW);
	EXPECT_EQ(O_PATH | O_NOFOLLOW, fcntl(fd, F_GETFL));
	EXPECT_EQ(0, close(fd));
}

/* Handles of "fifo" and "link", made by the test process (root) for its checks. */
static struct {
	struct file_handle handle;
	unsigned char bytes[MAX_HANDLE_SZ];
} handles[2];

/*
 * open_by_handle_at(2) goes through the same flag checks as open(2), on a path that is the node
 * itself: O_NODE works there too, and only with O_NOACCESS.
 */
static void open_by_handle(struct __test_metadata *const _metadata, const struct onode_tree *tree)
{
	/* The mount is named by an open file, which an O_NODE descriptor is and O_PATH's not. */
	const int mnt = onode_open(tree, ".", 0);
	int fd;

	if (!onode_is_root()) {
		/* CAP_DAC_READ_SEARCH comes first. */
		EXPECT_ERRNO(EPERM, open_by_handle_at(mnt, &handles[0].handle,
						      O_NODE | O_NOACCESS));
		EXPECT_EQ(0, close(mnt));
		return;
	}
	alarm(ONODE_BLOCK_TIMEOUT);
	fd = open_by_handle_at(mnt, &handles[0].handle, O_NODE | O_NOACCESS);
	alarm(0);
	ASSERT_LE(0, fd)
	{
		TH_LOG("open_by_handle_at(fifo, O_NODE|O_NOACCESS): %s", strerror(errno));
	}
	onode_expect_same_node(_metadata, tree, fd, "fifo", 0);
	EXPECT_EQ(onode_kernel_flags(_metadata, tree) | O_NODE | O_NOACCESS, fcntl(fd, F_GETFL));
	EXPECT_EQ(0, close(fd));
	EXPECT_ERRNO(EINVAL, open_by_handle_at(mnt, &handles[0].handle, O_NODE | O_RDONLY));
	EXPECT_ERRNO(EINVAL, open_by_handle_at(mnt, &handles[0].handle,
					       O_NODE | O_NOACCESS | O_TRUNC));
	EXPECT_EQ(0, close(mnt));
}

/*
 * A handle is the node itself, a symlink included, which no walk follows: a plain open refuses
 * the link with ELOOP, and so must an O_NODE open without O_NOFOLLOW, which asks for the link
 * to be followed.
 */
static void open_symlink_by_handle(struct __test_metadata *const _metadata,
				   const struct onode_tree *tree)
{
	const int mnt = onode_open(tree, ".", 0);
	int fd;

	if (!onode_is_root()) {
		EXPECT_ERRNO(EPERM, open_by_handle_at(mnt, &handles[1].handle,
						      O_NODE | O_NOACCESS | O_NOFOLLOW));
		EXPECT_EQ(0, close(mnt));
		return;
	}
	EXPECT_ERRNO(ELOOP, open_by_handle_at(mnt, &handles[1].handle, O_RDONLY));
	EXPECT_ERRNO(ELOOP, open_by_handle_at(mnt, &handles[1].handle, O_NODE | O_NOACCESS));
	fd = open_by_handle_at(mnt, &handles[1].handle, O_NODE | O_NOACCESS | O_NOFOLLOW);
	ASSERT_LE(0, fd)
	{
		TH_LOG("open_by_handle_at(link, O_NODE|O_NOACCESS|O_NOFOLLOW): %s",
		       strerror(errno));
	}
	onode_expect_same_node(_metadata, tree, fd, "link", AT_SYMLINK_NOFOLLOW);
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(0, close(mnt));
}

static void make_handles(struct __test_metadata *const _metadata, const struct onode_tree *tree)
{
	static const char *const names[ARRAY_SIZE(handles)] = { "fifo", "link" };
	size_t i;
	int mount_id;

	for (i = 0; i < ARRAY_SIZE(handles); i++) {
		handles[i].handle.handle_bytes = MAX_HANDLE_SZ;
		ASSERT_EQ(0, name_to_handle_at(tree->fd, names[i], &handles[i].handle, &mount_id,
					       0));
	}
}

TEST_F(node, open_by_handle)
{
	make_handles(_metadata, &self->tree);
	onode_run_as(_metadata, variant->uid, open_by_handle, &self->tree);
}

TEST_F(node, open_symlink_by_handle)
{
	make_handles(_metadata, &self->tree);
	onode_run_as(_metadata, variant->uid, open_symlink_by_handle, &self->tree);
}

TEST_HARNESS_MAIN
