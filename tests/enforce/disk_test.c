// SPDX-License-Identifier: GPL-2.0
/* enforce tests - search permission from POSIX ACLs that a disk filesystem reads on demand */

/*
 * tmpfs keeps every ACL in memory, so an ACL is always cached there. A disk filesystem (ext4
 * here, on the scratch disk vmtest/run mounts on /mnt/ext4) reads a directory's ACL from disk
 * only when generic_permission() first needs it for someone who is not the owner; until then
 * the inode's ACL is "not cached" and nodefd must not take that for "no ACL". On 6.2 and later
 * the method that fetches it is ->get_inode_acl (->get_acl is another one): reading the old
 * name there let a group member through whom the ACL shuts out.
 *
 * The scene: uid 1000 owns victim/, mode 0775 with the ACL
 *	user::rwx user:1234:rwx group::--- mask::rwx other::r-x
 * so the owning group (4242) may not search it although its mode bits (the mask) say rwx, and
 * everyone else may. nobody, in group 4242, holds a read-only fd of victim/file (0666) that the
 * owner opened: the owner's own walk never reads the ACL. nobody reopens it read-write: beyond
 * its fd, so allowed only if it could open the file by name, which the ACL forbids. And nobody
 * reopens it read-only, the access its fd has: allowed whatever the ACL, cached or not (`wc -l
 * /dev/stdin <file` in a directory the user cannot search).
 * "cached": someone else walked victim/ first, so the ACL is in memory; "uncached": the
 * filesystem was just mounted and no one but the owner has walked it.
 *
 * plain/ beside it has no ACL (mode 0775, no extended attributes at all): nobody reopening its
 * read-only fd of plain/file (0666) read-write is what the kernel allows by name, cached or not,
 * and must be allowed: ext4 keeps no ACL for an inode with no extended attributes.
 */

#include <sys/fsuid.h>
#include <sys/vfs.h>

#include "common.h"

#define EXT4_MOUNT "/mnt/ext4"
#define EXT4_SUPER_MAGIC 0xEF53
#define ENF_BYSTANDER 2000	/* walks the tree to make the kernel cache what it reads */

static int set_acl_group_shut_out(const char *path)
{
	struct {
		struct posix_acl_xattr_header h;
		struct posix_acl_xattr_entry e[5];
	} acl = {
		.h = { .a_version = POSIX_ACL_XATTR_VERSION },
		.e = {
			{ .e_tag = ACL_USER_OBJ, .e_perm = 7, .e_id = ACL_UNDEFINED_ID },
			{ .e_tag = ACL_USER, .e_perm = 7, .e_id = 1234 },
			{ .e_tag = ACL_GROUP_OBJ, .e_perm = 0, .e_id = ACL_UNDEFINED_ID },
			{ .e_tag = ACL_MASK, .e_perm = 7, .e_id = ACL_UNDEFINED_ID },
			{ .e_tag = ACL_OTHER, .e_perm = 5, .e_id = ACL_UNDEFINED_ID },
		},
	};

	return setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0) ? -errno : 0;
}

/* stat() of @arg as a bystander: the kernel reads the ACL of every directory it searches. */
static int bystander_stat(struct enf_agent *agent, void *arg)
{
	struct stat st;

	(void)agent;
	return stat(arg, &st) ? errno : 0;
}

struct reopen {
	int fd;			/* inherited: the owner's read-only fd of victim/file */
	int flags;		/* of the reopen */
	char file[PATH_MAX];
	int name_err;		/* nobody's own open of the file by name */
	struct enf_attempt at;
};

/* nobody, in group 4242: reopen first, by name after, so that nothing read the ACL before. */
static int group_member_reopens(struct enf_agent *agent, void *arg)
{
	struct reopen *r = arg;
	char proc[64];
	int f;

	(void)agent;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", r->fd);
	enf_attempt(&r->at, proc, r->flags);
	f = open(r->file, O_RDONLY | O_CLOEXEC);
	r->name_err = f < 0 ? errno : 0;
	if (f >= 0)
		close(f);
	return 0;
}

FIXTURE(ext4_acl)
{
	char tree[PATH_MAX];
	struct reopen *r;
};

FIXTURE_VARIANT(ext4_acl)
{
	bool cached;
};

FIXTURE_VARIANT_ADD(ext4_acl, cached)
{
	.cached = true,
};

FIXTURE_VARIANT_ADD(ext4_acl, uncached)
{
	.cached = false,
};

FIXTURE_SETUP(ext4_acl)
{
	struct statfs sfs;
	const char *victim;

	ENF_ASSERT_EXPECTATION();
	if (statfs(EXT4_MOUNT, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC)
		SKIP(return, "no ext4 filesystem on " EXT4_MOUNT " (vmtest/run mounts its scratch disk there)");
	snprintf(self->tree, sizeof(self->tree), EXT4_MOUNT "/acl.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->tree));
	ASSERT_EQ(0, chmod(self->tree, 0755));
	victim = enf_fmt("%s/victim", self->tree);
	enf_mkdir(_metadata, victim, 0775, ENF_OWNER, ENF_GROUP);
	enf_mkfile(_metadata, enf_fmt("%s/victim/file", self->tree), 0666, ENF_OWNER, ENF_ORIGINAL);
	ASSERT_EQ(0, set_acl_group_shut_out(victim));
	enf_mkdir(_metadata, enf_fmt("%s/plain", self->tree), 0775, ENF_OWNER, ENF_GROUP);
	enf_mkfile(_metadata, enf_fmt("%s/plain/file", self->tree), 0666, ENF_OWNER, ENF_ORIGINAL);

	/* Setting the ACL cached it: mount the filesystem afresh to forget every ACL. */
	ASSERT_EQ(0, umount(EXT4_MOUNT))
	{
		TH_LOG("umount " EXT4_MOUNT ": %s", strerror(errno));
	}
	ASSERT_EQ(0, mount("/dev/vda", EXT4_MOUNT, "ext4", 0, "acl"));

	/* The directories above victim/ are read, so that only victim/'s own ACL is in question. */
	ASSERT_EQ(0, enf_run_as(&((struct enf_ident){ .uid = ENF_BYSTANDER, .gid = ENF_BYSTANDER }),
				bystander_stat, (void *)victim));
	/* "other" may search victim/: reading its ACL to find that out caches it. */
	if (variant->cached) {
		ASSERT_EQ(0, enf_run_as(&((struct enf_ident){ .uid = ENF_BYSTANDER,
							      .gid = ENF_BYSTANDER }),
					bystander_stat,
					(void *)enf_fmt("%s/victim/file", self->tree)));
		ASSERT_EQ(0, enf_run_as(&((struct enf_ident){ .uid = ENF_BYSTANDER,
							      .gid = ENF_BYSTANDER }),
					bystander_stat,
					(void *)enf_fmt("%s/plain/file", self->tree)));
	}

	self->r = enf_shared(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
	strcpy(self->r->file, enf_fmt("%s/victim/file", self->tree));
}

FIXTURE_TEARDOWN(ext4_acl)
{
	if (self->tree[0])
		nftw(self->tree, enf_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	if (self->r)
		munmap(self->r, sizeof(*self->r));
}

static void group_member_reopen(struct __test_metadata *const _metadata,
				FIXTURE_DATA(ext4_acl) *self, const FIXTURE_VARIANT(ext4_acl) *variant,
				int flags)
{
	struct enf_ident member = ENF_AS_NOBODY;
	struct reopen *r = self->r;

	member.ngroups = 1;
	member.groups[0] = ENF_GROUP;

	/* The owner's open: its walk checks the owner bits, never the ACL. */
	setfsuid(ENF_OWNER);
	ASSERT_EQ(ENF_OWNER, setfsuid(-1));
	r->fd = open(r->file, O_RDONLY);
	r->flags = flags;
	setfsuid(0);
	ASSERT_LE(0, r->fd)
	{
		TH_LOG("the owner's open of %s: %s", r->file, strerror(errno));
	}
	ASSERT_EQ(0, enf_run_as(&member, group_member_reopens, r));
	close(r->fd);

	TH_LOG("%s ACL: reopen with flags %#o: %s", variant->cached ? "cached" : "uncached", flags,
	       r->at.open_err ? strerror(r->at.open_err) : "opened");
}

/* A member of the owning group, beyond its fd in a directory with no ACL: what the name gives. */
TEST_F(ext4_acl, no_acl_reopen_write_by_name)
{
	struct reopen *r = self->r;

	strcpy(r->file, enf_fmt("%s/plain/file", self->tree));
	group_member_reopen(_metadata, self, variant, O_RDWR);
	ASSERT_EQ(0, r->name_err);
	ENF_EXPECT_ALLOWED(&r->at, O_RDWR, r->file, ENF_ORIGINAL);
}

TEST_F(ext4_acl, group_shut_out_reopen_write)
{
	group_member_reopen(_metadata, self, variant, O_RDWR);
	/* The kernel shuts the group out by name. */
	ASSERT_EQ(EACCES, self->r->name_err);
	ENF_EXPECT_ATTACK(&self->r->at, O_RDWR, self->r->file, ENF_ORIGINAL);
}

TEST_F(ext4_acl, group_shut_out_reopen_read_within_fd)
{
	group_member_reopen(_metadata, self, variant, O_RDONLY);
	ASSERT_EQ(EACCES, self->r->name_err);
	ENF_EXPECT_ALLOWED(&self->r->at, O_RDONLY, self->r->file, ENF_ORIGINAL);
}

TEST_HARNESS_MAIN
