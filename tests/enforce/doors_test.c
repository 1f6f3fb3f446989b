// SPDX-License-Identifier: GPL-2.0
/* enforce tests - what else a path through /proc/self/fd/N can do: sockets, xattrs, watches */

/*
 * An O_PATH fd allows no connect(), no xattr and no inotify watch on its file (EBADF by the fd;
 * a unix socket cannot be opened at all). Through /proc/self/fd/N the path allows them all, as
 * the file's own mode allows: after the directory above closed (0700), the link would give
 * the holder of an O_PATH fd what its name no longer gives. With nodefd, each is refused; with
 * the directory still open (systemd connects to a socket whose path is too long through its
 * O_PATH fd's link), each works. An fd opened for reading allows xattr reads by itself
 * (fgetxattr()): through its link they work after the close as well.
 */

#include "common.h"

#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>

struct door {
	char tree[sizeof(ENF_TREE_TEMPLATE)];
	int close_dir;		/* the test closes open/ before the tries */
	int err[5];		/* per door: errno, 0 for success */
};

enum { DOOR_CONNECT, DOOR_GETXATTR, DOOR_SETXATTR, DOOR_WATCH, DOOR_RDONLY_GETXATTR };

static const char *const door_name[] = {
	"connect() to the socket", "getxattr() of the file", "setxattr() of the file",
	"inotify_add_watch() on the file", "getxattr() through an fd open for reading",
};

FIXTURE(doors)
{
	struct enf_tree tree;
	struct door *d;
	int srv;
};

FIXTURE_SETUP(doors)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	self->d = enf_shared(sizeof(*self->d));
	ASSERT_NE(NULL, self->d);
	strcpy(self->d->tree, self->tree.path);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "open"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "open/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	self->srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, self->srv);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", ENF_AT(&self->tree, "open/sock"));
	ASSERT_EQ(0, bind(self->srv, (struct sockaddr *)&sun, sizeof(sun)));
	ASSERT_EQ(0, chmod(sun.sun_path, 0777));
	ASSERT_EQ(0, listen(self->srv, 64));
}

FIXTURE_TEARDOWN(doors)
{
	if (self->srv >= 0)
		close(self->srv);
	enf_tree_remove(&self->tree);
	if (self->d)
		munmap(self->d, sizeof(*self->d));
}

/* nobody: O_PATH fds of the socket and the file, an O_RDONLY one of the file; then each door. */
static int knocker(struct enf_agent *agent, void *arg)
{
	struct door *d = arg;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int sock, file, rdonly, s, in;
	char buf[64];

	sock = open(enf_fmt("%s/open/sock", d->tree), O_PATH | O_CLOEXEC);
	file = open(enf_fmt("%s/open/file", d->tree), O_PATH | O_CLOEXEC);
	rdonly = open(enf_fmt("%s/open/file", d->tree), O_RDONLY | O_CLOEXEC);
	if (sock < 0 || file < 0 || rdonly < 0 || enf_agent_sync(agent))
		return ENF_SETUP_FAILED;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "/proc/self/fd/%d", sock);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return ENF_SETUP_FAILED;
	d->err[DOOR_CONNECT] = connect(s, (struct sockaddr *)&sun, sizeof(sun)) ? errno : 0;
	close(s);
	d->err[DOOR_GETXATTR] =
		getxattr(enf_fmt("/proc/self/fd/%d", file), "user.door", buf, sizeof(buf)) < 0 ?
			errno : 0;
	d->err[DOOR_SETXATTR] =
		setxattr(enf_fmt("/proc/self/fd/%d", file), "user.door", "x", 1, 0) ? errno : 0;
	in = inotify_init1(IN_CLOEXEC);
	if (in < 0)
		return ENF_SETUP_FAILED;
	d->err[DOOR_WATCH] =
		inotify_add_watch(in, enf_fmt("/proc/self/fd/%d", file), IN_MODIFY) < 0 ? errno : 0;
	close(in);
	d->err[DOOR_RDONLY_GETXATTR] =
		getxattr(enf_fmt("/proc/self/fd/%d", rdonly), "user.door", buf, sizeof(buf)) < 0 ?
			errno : 0;
	return 0;
}

static void knock(struct __test_metadata *const _metadata, FIXTURE_DATA(doors) *self,
		  bool close_dir)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct door *d = self->d;

	for (int i = 0; i < 5; i++)
		d->err[i] = -1;
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, knocker, d));
	ASSERT_TRUE(enf_agent_wait(&agent));
	if (close_dir)
		ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "open"), 0700));
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	for (int i = 0; i < 5; i++)
		TH_LOG("%s: %s", door_name[i], d->err[i] ? strerror(d->err[i]) : "done");
	/* Whatever the filesystem says of user xattrs (ENODATA, EOPNOTSUPP), never EACCES here. */
	EXPECT_NE(EACCES, d->err[DOOR_RDONLY_GETXATTR]);
	EXPECT_NE(-1, d->err[DOOR_RDONLY_GETXATTR]);
}

TEST_F(doors, o_path_link_opens_no_door_its_name_does_not)
{
	knock(_metadata, self, true);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		for (int i = DOOR_CONNECT; i <= DOOR_WATCH; i++)
			EXPECT_EQ(EACCES, self->d->err[i]);
	} else {
		EXPECT_EQ(0, self->d->err[DOOR_CONNECT]);
		EXPECT_EQ(0, self->d->err[DOOR_WATCH]);
		EXPECT_NE(EACCES, self->d->err[DOOR_GETXATTR]);
		EXPECT_NE(EACCES, self->d->err[DOOR_SETXATTR]);
	}
}

TEST_F(doors, o_path_link_opens_every_door_while_the_name_does)
{
	knock(_metadata, self, false);
	EXPECT_EQ(0, self->d->err[DOOR_CONNECT]);
	EXPECT_EQ(0, self->d->err[DOOR_WATCH]);
	EXPECT_NE(EACCES, self->d->err[DOOR_GETXATTR]);
	EXPECT_NE(EACCES, self->d->err[DOOR_SETXATTR]);
}

/*
 * The article's attack by a mount: nobody, in a user and mount namespace of its own (unshare
 * -Urm), binds the file of a read-only fd whose directory went 0700 onto a file of its own,
 * through /proc/self/fd/N, and opens that for writing. mount(2) as util-linux 2.38 (Debian 12)
 * does it, or open_tree() and move_mount() as 2.39 and later do.
 */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#define SYS_move_mount 429
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

struct bind {
	char tree[sizeof(ENF_TREE_TEMPLATE)];
	int new_api;
	int mount_err;
	int write_err;
};

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int binder(struct enf_agent *agent, void *arg)
{
	struct bind *b = arg;
	const char *target = enf_fmt("%s/mine", b->tree);
	char link[32], tgt[PATH_MAX];
	int fd, tfd, wfd;

	snprintf(tgt, sizeof(tgt), "%s", target);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) || write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", enf_fmt("0 %d 1", ENF_NOBODY)) ||
	    write_file("/proc/self/gid_map", enf_fmt("0 %d 1", ENF_NOBODY)) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return ENF_SETUP_FAILED;
	/* Opened in its own mount namespace: a bind mount's source must be one of its mounts. */
	fd = open(enf_fmt("%s/open/file", b->tree), O_RDONLY | O_CLOEXEC);
	if (fd < 0 || enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (b->new_api) {
		tfd = (int)syscall(SYS_open_tree, AT_FDCWD, link, OPEN_TREE_CLONE | O_CLOEXEC);
		b->mount_err = tfd < 0 ? errno : 0;
		if (tfd >= 0 && syscall(SYS_move_mount, tfd, "", AT_FDCWD, tgt,
					MOVE_MOUNT_F_EMPTY_PATH))
			b->mount_err = errno;
	} else {
		b->mount_err = mount(link, tgt, NULL, MS_BIND, NULL) ? errno : 0;
	}
	if (b->mount_err)
		return 0;
	wfd = open(tgt, O_RDWR | O_TRUNC | O_CLOEXEC);
	b->write_err = wfd < 0 ? errno : 0;
	if (wfd >= 0) {
		if (enf_write_all(wfd, ENF_PAYLOAD, strlen(ENF_PAYLOAD)))
			b->write_err = errno;
		close(wfd);
	}
	return 0;
}

static void bind_attack(struct __test_metadata *const _metadata, FIXTURE_DATA(doors) *self,
			int new_api)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct bind *b = enf_shared(sizeof(*b));
	int status;

	ASSERT_NE(NULL, b);
	strcpy(b->tree, self->tree.path);
	b->new_api = new_api;
	b->mount_err = b->write_err = -1;
	enf_mkfile(_metadata, ENF_AT(&self->tree, "mine"), 0644, ENF_NOBODY, "mine\n");
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, binder, b));
	ASSERT_TRUE(enf_agent_wait(&agent))
	{
		TH_LOG("no user and mount namespace for nobody (unshare -Urm), or no file there");
	}
	ASSERT_EQ(0, chmod(ENF_AT(&self->tree, "open"), 0700));
	enf_agent_resume(&agent);
	status = enf_agent_join(&agent);
	ASSERT_EQ(0, status)
	{
		TH_LOG("the helper could not enter a user and mount namespace of its own, or open "
		       "the file there (exit %d)", status);
	}
	TH_LOG("%s through the link: %s; open for writing: %s",
	       new_api ? "open_tree+move_mount" : "mount --bind",
	       b->mount_err ? strerror(b->mount_err) : "mounted",
	       b->mount_err ? "-" : b->write_err ? strerror(b->write_err) : "written");
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, b->mount_err);
		ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "open/file"), ENF_ORIGINAL);
	} else {
		EXPECT_EQ(0, b->mount_err);
		EXPECT_EQ(0, b->write_err);
		ENF_EXPECT_CONTENT(ENF_AT(&self->tree, "open/file"), ENF_PAYLOAD);
	}
	munmap(b, sizeof(*b));
}

TEST_F(doors, bind_mount_through_the_link_of_a_read_only_fd)
{
	bind_attack(_metadata, self, 0);
}

TEST_F(doors, open_tree_through_the_link_of_a_read_only_fd)
{
	bind_attack(_metadata, self, 1);
}

TEST_HARNESS_MAIN
