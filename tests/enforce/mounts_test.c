// SPDX-License-Identifier: GPL-2.0
/* enforce tests - reach by what the opener's mounts show: over-mounts and detached mounts */

/*
 * A sandbox hides a directory by mounting over it in its own mount namespace (systemd's
 * InaccessiblePaths=, bubblewrap's --tmpfs): a lookup by name then enters the covering mount
 * and never reaches what lies below. An fd opened before, read-only, must not be reopened for
 * writing through /proc/self/fd/N after the sandbox dropped its privileges: the name gives
 * nothing. The fd may be on the sandbox's own copy of the mount (opened after unshare()) or
 * on the mount it came from (opened before). A file beside the covered directory, and one on
 * the covering mount itself (or bound over the file), are reopened as before.
 *
 * A mount detached with umount2(MNT_DETACH) is no one's by name. Root in a mount namespace of
 * its own whose root is PID 1's (PrivateTmp=) reopens an O_PATH fd on it as the same root in
 * the initial namespace does. A chrooted root is still refused: the mount is outside its root.
 *
 * Each case runs on the tree's filesystem (tmpfs), on the ext4 scratch disk and on an overlay.
 */

#include "common.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#define EXT4_MOUNT "/mnt/ext4"

enum cover {
	COVER_DIR,		/* a tmpfs on the file's directory */
	COVER_ABOVE,		/* a tmpfs on the directory above that */
	COVER_FILE,		/* another file bound onto the file */
};

struct hide {
	char base[PATH_MAX];	/* where the case's directories are */
	enum cover cover;
	int before_unshare;	/* the fd is opened in the initial mount namespace */
	int err;		/* reopen of the hidden file for writing: errno, 0 opened */
	int beside_err;		/* of a file beside the covered directory */
	int on_cover_err;	/* of a file on the covering mount */
	int named;		/* the hidden file's name still opened the same file */
};

struct detach {
	char base[PATH_MAX];
	int chrooted;
	int err;		/* reopen for reading: errno, 0 opened */
};

FIXTURE(mounts)
{
	struct enf_tree tree;
	struct hide *h;
	struct detach *dt;
	char base[PATH_MAX];
};

enum base_fs { BASE_TMPFS, BASE_EXT4, BASE_OVERLAY };

FIXTURE_VARIANT(mounts)
{
	enum base_fs fs;
};

FIXTURE_VARIANT_ADD(mounts, tmpfs)
{
	.fs = BASE_TMPFS,
};

FIXTURE_VARIANT_ADD(mounts, ext4)
{
	.fs = BASE_EXT4,
};

/* An overlay of two tmpfs directories, as container storage. */
FIXTURE_VARIANT_ADD(mounts, overlay)
{
	.fs = BASE_OVERLAY,
};

FIXTURE_SETUP(mounts)
{
	struct statfs sfs;

	ENF_ASSERT_EXPECTATION();
	enf_tree_make(_metadata, &self->tree);
	self->h = enf_shared(sizeof(*self->h));
	ASSERT_NE(NULL, self->h);
	self->dt = enf_shared(sizeof(*self->dt));
	ASSERT_NE(NULL, self->dt);
	switch (variant->fs) {
	case BASE_TMPFS:
		snprintf(self->base, sizeof(self->base), "%s", self->tree.path);
		return;
	case BASE_OVERLAY:
		snprintf(self->base, sizeof(self->base), "%s", ENF_AT(&self->tree, "merged"));
		enf_mkdir(_metadata, ENF_AT(&self->tree, "lower"), 0755, 0, 0);
		enf_mkdir(_metadata, ENF_AT(&self->tree, "upper"), 0755, 0, 0);
		enf_mkdir(_metadata, ENF_AT(&self->tree, "work"), 0755, 0, 0);
		enf_mkdir(_metadata, self->base, 0755, 0, 0);
		if (mount("overlay", self->base, "overlay", 0,
			  enf_fmt("lowerdir=%s,upperdir=%s,workdir=%s",
				  ENF_AT(&self->tree, "lower"), ENF_AT(&self->tree, "upper"),
				  ENF_AT(&self->tree, "work")))) {
			self->base[0] = '\0';
			SKIP(return, "no overlayfs: %s", strerror(errno));
		}
		return;
	case BASE_EXT4:
		break;
	}
	if (statfs(EXT4_MOUNT, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC)
		SKIP(return, "no ext4 filesystem on " EXT4_MOUNT);
	snprintf(self->base, sizeof(self->base), "%s/mounts.%d", EXT4_MOUNT, getpid());
	enf_mkdir(_metadata, self->base, 0755, 0, 0);
}

FIXTURE_TEARDOWN(mounts)
{
	/* The covers were in the helpers' namespaces, gone with them. */
	if (variant->fs == BASE_OVERLAY && self->base[0])
		umount2(self->base, MNT_DETACH);
	else if (variant->fs == BASE_EXT4 && self->base[0])
		nftw(self->base, enf_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	enf_tree_remove(&self->tree);
	if (self->h)
		munmap(self->h, sizeof(*self->h));
	if (self->dt)
		munmap(self->dt, sizeof(*self->dt));
}

#define AT_BASE(h, rel) enf_fmt("%s/%s", (h)->base, (rel))

/* A new mount namespace whose mounts propagate nowhere. 0 or errno. */
static int private_namespace(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return errno;
	return 0;
}

/* errno of opening self/fd/@fd in /proc (@proc) with @flags, 0 if it opened. */
static int reopen(int proc, int fd, int flags)
{
	int nfd = openat(proc, enf_fmt("self/fd/%d", fd), flags | O_CLOEXEC);

	if (nfd < 0)
		return errno;
	close(nfd);
	return 0;
}

/*
 * Root, then nobody: opens a/d/file (nobody's, 0600) read-only, covers it in a namespace of
 * its own, drops to nobody (no capability left) and reopens it for writing.
 */
static int hider(struct enf_agent *agent, void *arg)
{
	struct hide *h = arg;
	const char *cover;
	int fd = -1, beside, on_cover, by_name, proc;
	struct stat st_fd, st_name;

	(void)agent;
	if (h->before_unshare)
		fd = open(AT_BASE(h, "a/d/file"), O_RDONLY | O_CLOEXEC);
	if (private_namespace())
		return ENF_SETUP_FAILED;
	if (!h->before_unshare)
		fd = open(AT_BASE(h, "a/d/file"), O_RDONLY | O_CLOEXEC);
	beside = open(AT_BASE(h, "beside/file"), O_RDONLY | O_CLOEXEC);
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || beside < 0 || proc < 0 || fstat(fd, &st_fd))
		return ENF_SETUP_FAILED;
	switch (h->cover) {
	case COVER_DIR:
		cover = AT_BASE(h, "a/d");
		break;
	case COVER_ABOVE:
		cover = AT_BASE(h, "a");
		break;
	default:
		cover = AT_BASE(h, "a/d/file");
		break;
	}
	if (h->cover == COVER_FILE) {
		if (mount(AT_BASE(h, "other"), cover, NULL, MS_BIND, NULL))
			return ENF_SETUP_FAILED;
		on_cover = open(AT_BASE(h, "other"), O_RDONLY | O_CLOEXEC);
	} else {
		if (mount("tmpfs", cover, "tmpfs", 0, "mode=0755"))
			return ENF_SETUP_FAILED;
		enf_say("covered %s", cover);
		if (mkdir(enf_fmt("%s/d", cover), 0755) && errno != EEXIST)
			return ENF_SETUP_FAILED;
		{
			const char *f = enf_fmt("%s/mine", cover);
			int c = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

			if (c < 0 || fchown(c, ENF_NOBODY, ENF_NOBODY))
				return ENF_SETUP_FAILED;
			close(c);
			on_cover = open(f, O_RDONLY | O_CLOEXEC);
		}
	}
	if (on_cover < 0 || enf_become(&ENF_AS_NOBODY))
		return ENF_SETUP_FAILED;
	by_name = open(AT_BASE(h, "a/d/file"), O_RDONLY | O_CLOEXEC);
	h->named = by_name >= 0 && !fstat(by_name, &st_name) && st_name.st_ino == st_fd.st_ino &&
		   st_name.st_dev == st_fd.st_dev;
	h->err = reopen(proc, fd, O_RDWR);
	h->beside_err = reopen(proc, beside, O_RDWR);
	h->on_cover_err = reopen(proc, on_cover, O_RDWR);
	return 0;
}

static void hide_case(struct __test_metadata *const _metadata, FIXTURE_DATA(mounts) *self,
		      enum cover cover, int before_unshare)
{
	struct hide *h = self->h;
	int status;

	snprintf(h->base, sizeof(h->base), "%s", self->base);
	h->cover = cover;
	h->before_unshare = before_unshare;
	h->err = h->beside_err = h->on_cover_err = -1;
	enf_mkdir(_metadata, AT_BASE(h, "a"), 0755, 0, 0);
	enf_mkdir(_metadata, AT_BASE(h, "a/d"), 0755, 0, 0);
	enf_mkdir(_metadata, AT_BASE(h, "beside"), 0755, 0, 0);
	enf_mkfile(_metadata, AT_BASE(h, "a/d/file"), 0600, ENF_NOBODY, ENF_ORIGINAL);
	enf_mkfile(_metadata, AT_BASE(h, "beside/file"), 0600, ENF_NOBODY, ENF_ORIGINAL);
	enf_mkfile(_metadata, AT_BASE(h, "other"), 0600, ENF_NOBODY, ENF_ORIGINAL);
	status = enf_run_as(&ENF_ROOT, hider, h);
	TH_LOG("reopen for writing: hidden file %s, beside %s, on the cover %s (by name: %s)",
	       h->err ? strerror(h->err) : "opened",
	       h->beside_err ? strerror(h->beside_err) : "opened",
	       h->on_cover_err ? strerror(h->on_cover_err) : "opened",
	       h->named ? "the same file" : "not the file");
	ASSERT_EQ(0, status);
	ASSERT_FALSE(h->named);		/* the cover hides it: what the test is about */
	EXPECT_EQ(0, h->beside_err);
	EXPECT_EQ(0, h->on_cover_err);
	if (enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, h->err);
	} else {
		EXPECT_EQ(0, h->err);
	}
}

TEST_F(mounts, directory_covered_after_the_open)
{
	hide_case(_metadata, self, COVER_DIR, 0);
}

TEST_F(mounts, directory_covered_fd_from_the_initial_namespace)
{
	hide_case(_metadata, self, COVER_DIR, 1);
}

TEST_F(mounts, directory_above_covered)
{
	hide_case(_metadata, self, COVER_ABOVE, 0);
}

TEST_F(mounts, file_itself_covered)
{
	hide_case(_metadata, self, COVER_FILE, 1);
}

/* Root in a namespace of its own: an O_PATH fd on a tmpfs, detached, then reopened. */
static int detacher(struct enf_agent *agent, void *arg)
{
	struct detach *dt = arg;
	const char *mnt = AT_BASE(dt, "m");
	int fd, c, proc;

	(void)agent;
	proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0 || private_namespace() || mount("tmpfs", mnt, "tmpfs", 0, "mode=0755"))
		return ENF_SETUP_FAILED;
	c = open(enf_fmt("%s/file", mnt), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (c < 0 || enf_write_all(c, ENF_ORIGINAL, strlen(ENF_ORIGINAL)))
		return ENF_SETUP_FAILED;
	close(c);
	fd = open(enf_fmt("%s/file", mnt), O_PATH | O_CLOEXEC);
	if (fd < 0 || umount2(mnt, MNT_DETACH) || !access(enf_fmt("%s/file", mnt), F_OK))
		return ENF_SETUP_FAILED;
	if (dt->chrooted && (chroot(AT_BASE(dt, "jail")) || chdir("/")))
		return ENF_SETUP_FAILED;
	dt->err = reopen(proc, fd, O_RDONLY);
	return 0;
}

static void detach_case(struct __test_metadata *const _metadata, FIXTURE_DATA(mounts) *self,
			int chrooted)
{
	struct detach *dt = self->dt;
	int status;

	snprintf(dt->base, sizeof(dt->base), "%s", self->base);
	dt->chrooted = chrooted;
	dt->err = -1;
	enf_mkdir(_metadata, AT_BASE(dt, "m"), 0755, 0, 0);
	enf_mkdir(_metadata, AT_BASE(dt, "jail"), 0755, 0, 0);
	status = enf_run_as(&ENF_ROOT, detacher, dt);
	TH_LOG("root %s reopens an O_PATH fd on a detached mount: %s",
	       chrooted ? "chrooted" : "in a namespace of its own",
	       dt->err ? strerror(dt->err) : "opened");
	ASSERT_EQ(0, status);
	if (chrooted && enf_expectation() == ENF_EXPECT_REFUSED) {
		EXPECT_EQ(EACCES, dt->err);
	} else {
		EXPECT_EQ(0, dt->err);
	}
}

TEST_F(mounts, root_of_a_private_namespace_reopens_on_a_detached_mount)
{
	detach_case(_metadata, self, 0);
}

TEST_F(mounts, chrooted_root_reopens_nothing_on_a_detached_mount)
{
	detach_case(_metadata, self, 1);
}

TEST_HARNESS_MAIN
