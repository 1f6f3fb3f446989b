// SPDX-License-Identifier: GPL-2.0
/* enforce tests - the permission model against the kernel's own open() by name, on random trees */

/*
 * The rule: a reopen through a proc magic link succeeds iff the access asked is within the
 * access of the fd it came from, or the opener could open the same file by name now, with the
 * same access, credentials and root. The kernel checks the file's own mode (and ACL) on both
 * paths anyway. So, for every file F, origin fd and access A:
 *
 *	link(A) opens  <=>  name(A) opens  ||  (A within the origin's access && file_perm(A))
 *
 * where name(A) is open(2) of F's path as the same task (from its own root), and file_perm(A)
 * is faccessat2(origin, "", A, AT_EMPTY_PATH | AT_EACCESS): the file's own permission, no walk.
 * An O_PATH origin has no access, so there link(A) <=> name(A).
 *
 * Each case builds a random tree under a base directory on the filesystem under test (random
 * names, depth 1-6, a few side branches, 1-3 files), with random owners, modes (sticky,
 * set-gid, modes that differ only in the group or other x bit) and, where the filesystem
 * takes them, random POSIX ACLs. A helper with random credentials (uid, gid, 0-40
 * supplementary groups, root with all, some or none of CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH, a user with one of them) opens every file O_PATH and O_RDONLY while the
 * tree is open to everyone, sometimes chroots into a random directory of the tree, and waits;
 * the test (root) then gives the tree its random modes, owners and ACLs; the helper reopens
 * every file through /proc/self/fd for each access (all link opens first, so that on ext4 no
 * walk by name read an ACL before), then opens it by name, and reports.
 *
 * On ext4 about a quarter of the cases leave every ACL of the tree uncached, as on a disk
 * filesystem where only the owners have walked a directory since it was read from disk: the
 * tree gets its final modes and ACLs first, ext4 is mounted afresh, and the helper, still root,
 * reaches the files walking down with each directory owner's fsuid (the owner's class is
 * decided before the ACL would be read); the fds it then holds pin the tree, so an ACL that was
 * cached when they were opened would stay cached, and dropping caches could not help.
 *
 * Every disagreement is printed with what reproduces it (the case's seed, the tree, the
 * credentials, the errnos) and counted by kind. NODEFD_EXPECT=refused (nodefd loaded): there
 * must be none, but for one kind counted apart and printed: in the uncached ext4 cases, a
 * refusal below a directory that carries an ACL, which nodefd cannot read before the kernel has
 * (a fail-closed point of docs/design.md; directories with no extended attributes at all are
 * known to have no ACL and must agree). NODEFD_EXPECT=hole (not loaded): the kernel alone must disagree with the model
 * (it lets the link through where the name is refused: the test can fail), and must never
 * refuse a link the model allows (that would be the model's mistake, or the test's).
 *
 * NODEFD_MODEL_SEED=N replays a run, NODEFD_MODEL_CASES=N sets the cases per filesystem,
 * NODEFD_MODEL_ONLY=K runs case K alone, NODEFD_MODEL_SHOW=N details the first N disagreeing
 * cases per filesystem (default 3).
 */

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/fsuid.h>
#include <sys/statfs.h>

#include "common.h"

#define EXT4_MOUNT "/mnt/ext4"
#define EXT4_SUPER_MAGIC 0xEF53

#define MODEL_CASES_DEFAULT 400
#define MODEL_MAX_NODES 14		/* the case directory and up to 13 below it */
#define MODEL_MAX_DEPTH 6
#define MODEL_MAX_FILES 3
#define MODEL_MAX_ACL 12
#define MODEL_MAX_KINDS 96

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif
#ifndef __NR_faccessat2
#define __NR_faccessat2 439
#endif

static const uid_t uid_pool[] = { 0, 1000, 1001, 1002, 65534 };
static const gid_t gid_pool[] = { 0, 1000, 1001, 4242, 5035, 65534 };
#define NUID (sizeof(uid_pool) / sizeof(uid_pool[0]))
#define NGID (sizeof(gid_pool) / sizeof(gid_pool[0]))

static const mode_t dir_modes[] = {
	0700, 0705, 0750, 0755, 0711, 0710, 0701, 0770, 0777, 01777, 01770, 02750, 02710,
	0500, 0000, 0050, 0005, 0001, 0010, 0100, 0751, 0715, 0671, 0766, 0676, 0707, 0077,
};
static const mode_t file_modes[] = {
	0644, 0600, 0640, 0604, 0666, 0660, 0606, 0400, 0200, 0000, 0444, 0222,
	0060, 0006, 0046, 0064, 0620, 0602, 0462,
};

static const int accesses[] = { O_RDONLY, O_WRONLY, O_RDWR };
static const char *const access_names[] = { "O_RDONLY", "O_WRONLY", "O_RDWR" };
#define NACC 3

enum origin { ORIGIN_PATH, ORIGIN_RDONLY, ORIGIN_NR };
static const char *const origin_names[] = { "O_PATH", "O_RDONLY" };

enum capset_kind { CAPS_ALL, CAPS_NONE, CAPS_READ_SEARCH, CAPS_OVERRIDE };
static const char *const caps_names[] = { "all caps", "no caps", "CAP_DAC_READ_SEARCH",
					  "CAP_DAC_OVERRIDE" };

/* splitmix64: every case has its own seed, so that one case replays alone. */
static __u64 rng_next(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rnd(__u64 *s, unsigned int n)
{
	return rng_next(s) % n;
}

/* true with probability pct %. */
static bool chance(__u64 *s, unsigned int pct)
{
	return rnd(s, 100) < pct;
}

struct acl {
	int n;			/* 0: no ACL */
	struct posix_acl_xattr_entry e[MODEL_MAX_ACL];
};

struct node {
	int parent;		/* -1 for the case directory */
	int depth;
	char name[20];
	char path[PATH_MAX];	/* absolute */
	uid_t uid;
	gid_t gid;
	mode_t mode;
	struct acl acl;
};

struct mfile {
	int dir;		/* the node it is in */
	char name[32];
	char path[PATH_MAX];
	uid_t uid0, uid;	/* owner while the helper opens it, and after */
	gid_t gid0, gid;
	mode_t mode0, mode;
	struct acl acl;		/* set after the helper opened it */
};

struct creds {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[40];
	enum capset_kind caps;
};

/* One case: what the test decided, then what the helper found (shared across fork()). */
struct mcase {
	__u64 seed;
	int nnodes, nfiles;
	struct node nodes[MODEL_MAX_NODES];
	struct mfile files[MODEL_MAX_FILES];
	struct creds cr;
	int chroot_node;	/* -1: none */
	bool uncached;		/* ext4 mounted afresh, only the owners walked the tree since */

	/* From the helper. */
	int setup_err;
	char setup_what[128];
	int origin_err[MODEL_MAX_FILES][ORIGIN_NR];	/* 0: the origin fd was opened */
	int link_err[MODEL_MAX_FILES][ORIGIN_NR][NACC];
	int name_err[MODEL_MAX_FILES][NACC];		/* -1: outside the helper's root */
	int perm_err[MODEL_MAX_FILES][NACC];		/* faccessat2() of the origin */
};

struct kind {
	char key[200];
	unsigned int count;
};

struct fsrun {
	const char *fs;
	char base[128];	/* where the cases' directories go */
	bool acls;
	bool overlay;
	char ovl_root[128];
	__u64 seed;		/* the run's: with a case's index, replays that case */
	unsigned int cases, comparisons, disagreements, refusals, holes, shown, show;
	unsigned int fail_closed;	/* refusals at an uncached ACL: nodefd's listed limit */
	struct kind kinds[MODEL_MAX_KINDS];
	int nkinds;
};

static unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	n = strtoul(v, &end, 0);
	return *end ? def : n;
}

static void random_name(__u64 *s, char *buf, size_t size)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_-.+=, ";
	unsigned int len = 1 + rnd(s, size - 1 < 12 ? size - 1 : 12);

	do {
		for (unsigned int i = 0; i < len; i++)
			buf[i] = chars[rnd(s, sizeof(chars) - 1)];
		buf[len] = '\0';
	} while (!strcmp(buf, ".") || !strcmp(buf, ".."));
}

/* Adds up to @max distinct ids from @pool to @out, ascending; returns how many. */
static int pick_ids(__u64 *s, const __u32 *pool, int npool, int max, __u32 *out)
{
	int n = 0;

	for (int i = 0; i < npool && n < max; i++)
		if (chance(s, 30))
			out[n++] = pool[i];
	return n;
}

/* A valid access ACL, entries in the order the kernel requires (by tag, then by id). */
static void random_acl(__u64 *s, struct acl *acl)
{
	__u32 users[NUID], groups[NGID], upool[NUID], gpool[NGID];
	int nu, ng, n = 0;

	for (unsigned int i = 0; i < NUID; i++)
		upool[i] = uid_pool[i];
	for (unsigned int i = 0; i < NGID; i++)
		gpool[i] = gid_pool[i];
	nu = pick_ids(s, upool, NUID, 3, users);
	ng = pick_ids(s, gpool, NGID, 3, groups);
	acl->e[n++] = (struct posix_acl_xattr_entry){ ACL_USER_OBJ, rnd(s, 8), ACL_UNDEFINED_ID };
	for (int i = 0; i < nu; i++)
		acl->e[n++] = (struct posix_acl_xattr_entry){ ACL_USER, rnd(s, 8), users[i] };
	acl->e[n++] = (struct posix_acl_xattr_entry){ ACL_GROUP_OBJ, rnd(s, 8), ACL_UNDEFINED_ID };
	for (int i = 0; i < ng; i++)
		acl->e[n++] = (struct posix_acl_xattr_entry){ ACL_GROUP, rnd(s, 8), groups[i] };
	if (nu || ng || chance(s, 20))
		acl->e[n++] = (struct posix_acl_xattr_entry){ ACL_MASK, rnd(s, 8), ACL_UNDEFINED_ID };
	acl->e[n++] = (struct posix_acl_xattr_entry){ ACL_OTHER, rnd(s, 8), ACL_UNDEFINED_ID };
	acl->n = n;
}

static int set_acl(const char *path, const struct acl *acl)
{
	struct {
		struct posix_acl_xattr_header h;
		struct posix_acl_xattr_entry e[MODEL_MAX_ACL];
	} x = { .h = { .a_version = POSIX_ACL_XATTR_VERSION } };

	memcpy(x.e, acl->e, acl->n * sizeof(acl->e[0]));
	return setxattr(path, "system.posix_acl_access", &x,
			sizeof(x.h) + acl->n * sizeof(acl->e[0]), 0) ? -errno : 0;
}

static void acl_string(const struct acl *acl, char *buf, size_t size)
{
	static const char rwx[][4] = { "---", "--x", "-w-", "-wx", "r--", "r-x", "rw-", "rwx" };
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < acl->n && len < size; i++) {
		const struct posix_acl_xattr_entry *e = &acl->e[i];
		const char *tag = e->e_tag == ACL_USER_OBJ || e->e_tag == ACL_USER ? "user" :
				  e->e_tag == ACL_GROUP_OBJ || e->e_tag == ACL_GROUP ? "group" :
				  e->e_tag == ACL_MASK ? "mask" : "other";
		char id[16] = "";

		if (e->e_tag == ACL_USER || e->e_tag == ACL_GROUP)
			snprintf(id, sizeof(id), "%u", e->e_id);
		len += snprintf(buf + len, size - len, "%s%s:%s:%s", i ? "," : "", tag, id,
				rwx[e->e_perm & 7]);
	}
}

static void random_creds(__u64 *s, struct creds *cr)
{
	static const uid_t users[] = { 1000, 1001, 1002, 65534 };
	int want;

	memset(cr, 0, sizeof(*cr));
	if (chance(s, 25)) {
		unsigned int r = rnd(s, 100);

		cr->uid = 0;
		cr->caps = r < 40 ? CAPS_ALL : r < 70 ? CAPS_NONE : r < 85 ? CAPS_READ_SEARCH :
			   CAPS_OVERRIDE;
	} else {
		unsigned int r = rnd(s, 100);

		cr->uid = users[rnd(s, 4)];
		cr->caps = r < 80 ? CAPS_NONE : r < 90 ? CAPS_READ_SEARCH : CAPS_OVERRIDE;
	}
	cr->gid = gid_pool[rnd(s, NGID)];
	if (cr->uid == 0 && cr->caps == CAPS_ALL && chance(s, 50))
		return;	/* root exactly as it comes */
	want = chance(s, 40) ? 0 : chance(s, 65) ? 1 + rnd(s, 5) : 30 + rnd(s, 11);
	/* Each pool gid with some chance, then fillers 5000.. (5035 is in the pool). */
	for (unsigned int i = 0; i < NGID && cr->ngroups < want; i++)
		if (chance(s, 35))
			cr->groups[cr->ngroups++] = gid_pool[i];
	for (gid_t g = 5000; cr->ngroups < want && g < 5100; g++) {
		bool dup = false;

		for (int i = 0; i < cr->ngroups; i++)
			dup |= cr->groups[i] == g;
		if (!dup)
			cr->groups[cr->ngroups++] = g;
	}
	/* A random order: the kernel sorts them. */
	for (int i = cr->ngroups - 1; i > 0; i--) {
		int j = rnd(s, i + 1);
		gid_t t = cr->groups[i];

		cr->groups[i] = cr->groups[j];
		cr->groups[j] = t;
	}
}

static void creds_string(const struct creds *cr, char *buf, size_t size)
{
	size_t len = snprintf(buf, size, "uid %u gid %u, %s, groups [", cr->uid, cr->gid,
			      caps_names[cr->caps]);

	for (int i = 0; i < cr->ngroups && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%u", i ? " " : "", cr->groups[i]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
}

/* Is node @a an ancestor of node @b, or @b itself? */
static bool node_contains(const struct mcase *c, int a, int b)
{
	for (; b >= 0; b = c->nodes[b].parent)
		if (a == b)
			return true;
	return false;
}

/* Decides the whole case from its seed; paths below @base/c<index>. */
static void case_plan(struct mcase *c, const struct fsrun *run, unsigned int index, __u64 seed)
{
	__u64 s = seed;
	int chain, extra, deepest;

	memset(c, 0, sizeof(*c));
	c->seed = seed;
	c->nodes[0].parent = -1;
	snprintf(c->nodes[0].name, sizeof(c->nodes[0].name), "c%u", index);
	snprintf(c->nodes[0].path, PATH_MAX, "%s/c%u", run->base, index);
	c->nodes[0].mode = 0755;
	c->nnodes = 1;
	chain = 1 + rnd(&s, MODEL_MAX_DEPTH);
	for (int i = 0; i < chain; i++) {
		struct node *n = &c->nodes[c->nnodes];

		n->parent = c->nnodes - 1;
		n->depth = c->nodes[n->parent].depth + 1;
		c->nnodes++;
	}
	deepest = c->nnodes - 1;
	extra = rnd(&s, MODEL_MAX_NODES - c->nnodes + 1);
	for (int i = 0; i < extra; i++) {
		int p = rnd(&s, c->nnodes);

		if (c->nodes[p].depth >= MODEL_MAX_DEPTH)
			continue;
		c->nodes[c->nnodes].parent = p;
		c->nodes[c->nnodes++].depth = c->nodes[p].depth + 1;
	}
	for (int i = 1; i < c->nnodes; i++) {
		struct node *n = &c->nodes[i];

		random_name(&s, n->name, sizeof(n->name));
		/*
		 * Siblings must differ: a clash gets "~" and its index, which no random name
		 * has and no other node gets (a plain number could be another sibling's name).
		 */
		for (int j = 1; j < i; j++)
			if (c->nodes[j].parent == n->parent && !strcmp(c->nodes[j].name, n->name)) {
				snprintf(n->name + strlen(n->name) / 2, 8, "~%d", i);
				break;
			}
		snprintf(n->path, PATH_MAX, "%s/%s", c->nodes[n->parent].path, n->name);
		n->uid = uid_pool[rnd(&s, NUID)];
		n->gid = gid_pool[rnd(&s, NGID)];
		n->mode = chance(&s, 85) ? dir_modes[rnd(&s, sizeof(dir_modes) / sizeof(dir_modes[0]))]
					 : rnd(&s, 07777 + 1);
		if (run->acls && chance(&s, 40))
			random_acl(&s, &n->acl);
	}
	c->nfiles = 1 + rnd(&s, MODEL_MAX_FILES);
	for (int i = 0; i < c->nfiles; i++) {
		struct mfile *f = &c->files[i];
		char name[20];

		f->dir = i ? (int)rnd(&s, c->nnodes) : deepest;
		random_name(&s, name, 16);
		/* "~f": no directory's name, random or made unique, ends so. */
		snprintf(f->name, sizeof(f->name), "%s~f%d", name, i);
		snprintf(f->path, PATH_MAX, "%s/%s", c->nodes[f->dir].path, f->name);
		f->uid0 = f->uid = uid_pool[rnd(&s, NUID)];
		f->gid0 = f->gid = gid_pool[rnd(&s, NGID)];
		f->mode0 = f->mode = file_modes[rnd(&s, sizeof(file_modes) / sizeof(file_modes[0]))];
		if (chance(&s, 25)) {
			f->uid = uid_pool[rnd(&s, NUID)];
			f->gid = gid_pool[rnd(&s, NGID)];
			f->mode = file_modes[rnd(&s, sizeof(file_modes) / sizeof(file_modes[0]))];
		}
		if (run->acls && chance(&s, 20))
			random_acl(&s, &f->acl);
	}
	random_creds(&s, &c->cr);
	c->chroot_node = chance(&s, 25) ? (int)rnd(&s, c->nnodes) : -1;
	/* A chroot would walk (and cache) the ACLs before the links are tried. */
	c->uncached = !strcmp(run->fs, "ext4") && c->chroot_node < 0 && chance(&s, 30);
	if (c->uncached)
		for (int i = 0; i < c->nfiles; i++) {
			c->files[i].uid0 = c->files[i].uid;
			c->files[i].gid0 = c->files[i].gid;
			c->files[i].mode0 = c->files[i].mode;
		}
}

/* Builds the tree open to everyone, the files with their first owner and mode. 0 or -errno. */
static int case_build(struct mcase *c, char *what, size_t size)
{
	for (int i = 0; i < c->nnodes; i++) {
		if (mkdir(c->nodes[i].path, 0755) || chmod(c->nodes[i].path, 0755)) {
			snprintf(what, size, "mkdir %s", c->nodes[i].path);
			return -errno;
		}
	}
	for (int i = 0; i < c->nfiles; i++) {
		struct mfile *f = &c->files[i];
		int fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (fd < 0 || fchown(fd, f->uid0, f->gid0) || fchmod(fd, f->mode0)) {
			snprintf(what, size, "creat %s", f->path);
			if (fd >= 0)
				close(fd);
			return -errno;
		}
		close(fd);
	}
	return 0;
}

/* Gives the tree its modes, owners and ACLs (deepest first is not needed: root does it). */
static int case_apply(struct mcase *c, char *what, size_t size)
{
	int err;

	for (int i = 0; i < c->nfiles; i++) {
		struct mfile *f = &c->files[i];

		if (chown(f->path, f->uid, f->gid) || chmod(f->path, f->mode)) {
			snprintf(what, size, "chown/chmod %s", f->path);
			return -errno;
		}
		if (f->acl.n && (err = set_acl(f->path, &f->acl))) {
			snprintf(what, size, "setxattr %s", f->path);
			return err;
		}
	}
	for (int i = 1; i < c->nnodes; i++) {
		struct node *n = &c->nodes[i];

		/* chown() first: it clears the set-gid bit. The ACL after: it sets the mode's
		 * group class to its mask. */
		if (chown(n->path, n->uid, n->gid) || chmod(n->path, n->mode)) {
			snprintf(what, size, "chown/chmod %s", n->path);
			return -errno;
		}
		if (n->acl.n && (err = set_acl(n->path, &n->acl))) {
			snprintf(what, size, "setxattr %s", n->path);
			return err;
		}
	}
	return 0;
}

static int do_capset(__u64 caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (__u32)caps, .permitted = (__u32)caps },
		{ .effective = (__u32)(caps >> 32), .permitted = (__u32)(caps >> 32) },
	};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static __u64 caps_of(enum capset_kind k)
{
	switch (k) {
	case CAPS_READ_SEARCH:
		return 1ULL << CAP_DAC_READ_SEARCH;
	case CAPS_OVERRIDE:
		return 1ULL << CAP_DAC_OVERRIDE;
	default:
		return 0;
	}
}

/*
 * Opens @f with @flags as root, walking down the tree with the fsuid of each directory's
 * owner: the owner's class is decided before any ACL is read, so the walk leaves every ACL
 * of the tree uncached. SECBIT_NO_SETUID_FIXUP keeps the capabilities across setfsuid(),
 * for an owner that may not search its own directory. An fd or -errno.
 */
static int owner_walk(const struct mcase *c, const struct mfile *f, int flags)
{
	int chain[MODEL_MAX_DEPTH + 1], n = 0, cur = 0, dirfd, fd, err;

	for (int d = f->dir; d > 0; d = c->nodes[d].parent)
		chain[n++] = d;
	dirfd = open(c->nodes[0].path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (dirfd >= 0 && n--) {
		int next;

		setfsuid(c->nodes[cur].uid);
		cur = chain[n];
		next = openat(dirfd, c->nodes[cur].name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = errno;
		close(dirfd);
		dirfd = next;
		errno = err;
	}
	if (dirfd < 0) {
		err = -errno;
		setfsuid(0);
		return err;
	}
	setfsuid(c->nodes[cur].uid);
	fd = openat(dirfd, f->name, flags | O_CLOEXEC);
	err = -errno;
	setfsuid(0);
	close(dirfd);
	return fd < 0 ? err : fd;
}

#define HELPER_FAIL(c, what_fmt, ...)                                                            \
	do {                                                                                     \
		(c)->setup_err = errno;                                                          \
		snprintf((c)->setup_what, sizeof((c)->setup_what), what_fmt, ##__VA_ARGS__);     \
		return ENF_SETUP_FAILED;                                                         \
	} while (0)

/* The helper, started as root: becomes the case's credentials, opens, waits, compares. */
static int helper(struct enf_agent *agent, void *arg)
{
	struct mcase *c = arg;
	const struct creds *cr = &c->cr;
	int fds[MODEL_MAX_FILES][ORIGIN_NR];
	const char *names[MODEL_MAX_FILES];
	int procfd = -1;
	bool keep_all = cr->uid == 0 && cr->caps == CAPS_ALL;
	__u64 caps = caps_of(cr->caps);

	if (c->uncached) {
		if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0))
			HELPER_FAIL(c, "PR_SET_SECUREBITS");
		for (int i = 0; i < c->nfiles; i++)
			for (int o = 0; o < ORIGIN_NR; o++) {
				fds[i][o] = owner_walk(c, &c->files[i], o ? O_RDONLY : O_PATH);
				if (fds[i][o] < 0) {
					errno = -fds[i][o];
					HELPER_FAIL(c, "owner's walk to %s", c->files[i].path);
				}
				c->origin_err[i][o] = 0;
			}
		if (prctl(PR_SET_SECUREBITS, 0, 0, 0, 0))
			HELPER_FAIL(c, "PR_SET_SECUREBITS");
	}
	if (c->chroot_node >= 0) {
		procfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (procfd < 0)
			HELPER_FAIL(c, "open /proc/self/fd");
		caps |= 1ULL << CAP_SYS_CHROOT;
	}
	if (!keep_all || cr->ngroups || cr->gid) {
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
			HELPER_FAIL(c, "PR_SET_KEEPCAPS");
		if (setgroups(cr->ngroups, cr->groups) || setresgid(cr->gid, cr->gid, cr->gid))
			HELPER_FAIL(c, "setgroups/setresgid");
		if (cr->uid && setresuid(cr->uid, cr->uid, cr->uid))
			HELPER_FAIL(c, "setresuid");
		if (!keep_all && do_capset(caps))
			HELPER_FAIL(c, "capset");
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			HELPER_FAIL(c, "PR_SET_DUMPABLE");
	}
	for (int i = 0; i < c->nfiles; i++) {
		names[i] = c->files[i].path;
		if (c->uncached)
			continue;
		fds[i][ORIGIN_PATH] = open(c->files[i].path, O_PATH | O_CLOEXEC);
		if (fds[i][ORIGIN_PATH] < 0)
			HELPER_FAIL(c, "O_PATH open of %s", c->files[i].path);
		c->origin_err[i][ORIGIN_PATH] = 0;
		fds[i][ORIGIN_RDONLY] = open(c->files[i].path, O_RDONLY | O_CLOEXEC);
		c->origin_err[i][ORIGIN_RDONLY] = fds[i][ORIGIN_RDONLY] < 0 ? errno : 0;
	}
	if (c->chroot_node >= 0) {
		const struct node *root = &c->nodes[c->chroot_node];
		size_t len = strlen(root->path);

		if (chroot(root->path) || chdir("/"))
			HELPER_FAIL(c, "chroot %s", root->path);
		if (!keep_all && do_capset(caps & ~(1ULL << CAP_SYS_CHROOT)))
			HELPER_FAIL(c, "capset after chroot");
		for (int i = 0; i < c->nfiles; i++)
			names[i] = node_contains(c, c->chroot_node, c->files[i].dir) ?
					   c->files[i].path + len : NULL;
	}
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;

	/* Every link first: no walk by name before them reads (and caches) an ACL. */
	for (int i = 0; i < c->nfiles; i++)
		for (int o = 0; o < ORIGIN_NR; o++)
			for (int a = 0; a < NACC; a++) {
				char num[16];
				int fd;

				if (fds[i][o] < 0)
					continue;
				snprintf(num, sizeof(num), "%d", fds[i][o]);
				if (procfd >= 0)
					fd = openat(procfd, num, accesses[a] | O_CLOEXEC);
				else
					fd = open(enf_fmt("/proc/self/fd/%s", num),
						  accesses[a] | O_CLOEXEC);
				c->link_err[i][o][a] = fd < 0 ? errno : 0;
				if (fd >= 0)
					close(fd);
			}
	for (int i = 0; i < c->nfiles; i++)
		for (int a = 0; a < NACC; a++) {
			static const int modes[] = { R_OK, W_OK, R_OK | W_OK };
			int fd;

			c->perm_err[i][a] = syscall(__NR_faccessat2, fds[i][ORIGIN_PATH], "",
						    modes[a], AT_EMPTY_PATH | AT_EACCESS) ? errno : 0;
			if (!names[i]) {
				c->name_err[i][a] = -1;
				continue;
			}
			fd = open(names[i], accesses[a] | O_CLOEXEC);
			c->name_err[i][a] = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
		}
	return 0;
}

static const char *err_name(int err)
{
	if (err == -1)
		return "outside its root";
	if (!err)
		return "opens";
	return strerrorname_np(err) ?: strerror(err);
}

static void count_kind(struct fsrun *run, const char *key)
{
	for (int i = 0; i < run->nkinds; i++)
		if (!strcmp(run->kinds[i].key, key)) {
			run->kinds[i].count++;
			return;
		}
	if (run->nkinds < MODEL_MAX_KINDS) {
		snprintf(run->kinds[run->nkinds].key, sizeof(run->kinds[0].key), "%s", key);
		run->kinds[run->nkinds++].count = 1;
	}
}

static void case_show(const struct fsrun *run, const struct mcase *c, unsigned int index)
{
	char buf[512];

	creds_string(&c->cr, buf, sizeof(buf));
	fprintf(stderr, "#   case %u of %s (NODEFD_MODEL_SEED=%#llx NODEFD_MODEL_ONLY=%u): %s", index,
		run->fs, (unsigned long long)run->seed, index, buf);
	if (c->chroot_node >= 0)
		fprintf(stderr, ", chroot %s", c->nodes[c->chroot_node].path);
	fprintf(stderr, "%s\n", c->uncached ? ", ACLs not cached (ext4 mounted afresh)" : "");
	for (int i = 1; i < c->nnodes; i++) {
		const struct node *n = &c->nodes[i];

		acl_string(&n->acl, buf, sizeof(buf));
		/* The mode as chmod() set it: an ACL set after it rewrites its permission bits. */
		fprintf(stderr, "#     dir  %04o %u:%u %s%s%s\n", n->mode, n->uid, n->gid,
			n->path, n->acl.n ? " acl " : "", buf);
	}
	for (int i = 0; i < c->nfiles; i++) {
		const struct mfile *f = &c->files[i];

		acl_string(&f->acl, buf, sizeof(buf));
		fprintf(stderr, "#     file %04o %u:%u %s (while opened: %04o %u:%u)%s%s\n", f->mode,
			f->uid, f->gid, f->path, f->mode0, f->uid0, f->gid0,
			f->acl.n ? " acl " : "", buf);
	}
}

/*
 * Does a directory above file @i carry an ACL? On ext4 mounted afresh nodefd cannot read such
 * an ACL before the kernel has (it is on disk only), and refuses what depends on it: the
 * fail-closed point docs/design.md lists (reason unknown_acl). A directory with no extended
 * attributes at all is known to have none.
 */
static bool acl_above(const struct mcase *c, int i)
{
	for (int n = c->files[i].dir; n >= 0; n = c->nodes[n].parent)
		if (c->nodes[n].acl.n)
			return true;
	return false;
}

/* Compares one case's answers with the model; prints and counts each disagreement. */
static void case_judge(struct fsrun *run, const struct mcase *c, unsigned int index)
{
	bool shown = false;

	for (int i = 0; i < c->nfiles; i++)
		for (int o = 0; o < ORIGIN_NR; o++) {
			if (c->origin_err[i][o])
				continue;
			for (int a = 0; a < NACC; a++) {
				bool within = o == ORIGIN_RDONLY && accesses[a] == O_RDONLY;
				bool name_ok = c->name_err[i][a] == 0;
				bool want = name_ok || (within && !c->perm_err[i][a]);
				bool got = c->link_err[i][o][a] == 0;
				const char *root = c->uncached ? "own root, ACLs not cached" :
						   c->chroot_node < 0 ? "own root" :
						   c->name_err[i][a] == -1 ? "chroot, file outside" :
									      "chroot, file inside";
				char key[200];

				run->comparisons++;
				if (want == got)
					continue;
				if (want && !got && c->uncached && acl_above(c, i) &&
				    enf_expectation() == ENF_EXPECT_REFUSED) {
					run->fail_closed++;
					count_kind(run, "FAIL-CLOSED refused below an uncached "
							"ACL (unknown_acl)");
					continue;
				}
				run->disagreements++;
				if (got)
					run->holes++;
				else
					run->refusals++;
				snprintf(key, sizeof(key), "%s origin %s, %s: link %s, name %s (%s, %s%s)",
					 got ? "ALLOWED" : "REFUSED", origin_names[o],
					 access_names[a], err_name(c->link_err[i][o][a]),
					 err_name(c->name_err[i][a]), root,
					 c->cr.uid ? "user" : "uid 0", c->cr.caps == CAPS_NONE ? "" :
					 c->cr.caps == CAPS_ALL ? ", all caps" :
					 c->cr.caps == CAPS_OVERRIDE ? ", CAP_DAC_OVERRIDE" :
					 ", CAP_DAC_READ_SEARCH");
				count_kind(run, key);
				if (run->shown >= run->show)
					continue;
				if (!shown)
					case_show(run, c, index);
				shown = true;
				fprintf(stderr,
					"#     -> file %d, origin %s, %s: link %s, by name %s, "
					"file's own permission %s: the model says %s\n",
					i, origin_names[o], access_names[a],
					err_name(c->link_err[i][o][a]), err_name(c->name_err[i][a]),
					err_name(c->perm_err[i][a]), want ? "opens" : "refused");
			}
		}
	if (shown)
		run->shown++;
}

static void remove_tree(const char *path)
{
	nftw(path, enf_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/*
 * overlayfs: a fresh overlay for each case, its lower and upper on tmpfs under @ovl_root (or
 * its upper on ext4 for odd cases). The tree is built in the lower layer; the test's changes go
 * through the overlay, which copies up what they touch.
 */
static int overlay_mount(struct fsrun *run, unsigned int index, char *what, size_t size)
{
	const char *root = run->ovl_root;
	const char *upper_fs = index % 2 && !access(EXT4_MOUNT "/lost+found", F_OK) ?
				       EXT4_MOUNT : root;
	char opts[1024];

	snprintf(opts, sizeof(opts), "lowerdir=%s/lower,upperdir=%s/ovl-upper.%u,workdir=%s/ovl-work.%u",
		 root, upper_fs, index, upper_fs, index);
	if (mkdir(enf_fmt("%s/ovl-upper.%u", upper_fs, index), 0755) ||
	    mkdir(enf_fmt("%s/ovl-work.%u", upper_fs, index), 0755)) {
		snprintf(what, size, "mkdir upper/work in %s", upper_fs);
		return -errno;
	}
	if (mount("overlay", run->base, "overlay", 0, opts)) {
		snprintf(what, size, "mount overlay %s", opts);
		return -errno;
	}
	return 0;
}

static void overlay_umount(struct fsrun *run, unsigned int index)
{
	const char *root = run->ovl_root;

	umount2(run->base, MNT_DETACH);
	remove_tree(enf_fmt("%s/lower/c%u", root, index));
	for (int i = 0; i < 2; i++) {
		const char *fs = i ? EXT4_MOUNT : root;

		remove_tree(enf_fmt("%s/ovl-upper.%u", fs, index));
		remove_tree(enf_fmt("%s/ovl-work.%u", fs, index));
	}
}

/* Runs one case; false if it could not be set up (said why). */
static bool case_run(struct __test_metadata *const _metadata, struct fsrun *run, struct mcase *c,
		     unsigned int index, __u64 seed)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	char what[PATH_MAX + 64] = "";
	int err, status;
	bool ok = false;

	case_plan(c, run, index, seed);
	if (run->overlay) {
		/* Built in the lower layer, seen (and changed) through the overlay. */
		struct mcase *lower = malloc(sizeof(*lower));

		if (!lower)
			return false;
		*lower = *c;
		for (int i = 0; i < c->nnodes; i++)
			snprintf(lower->nodes[i].path, PATH_MAX, "%s/lower%s", run->ovl_root,
				 c->nodes[i].path + strlen(run->base));
		for (int i = 0; i < c->nfiles; i++)
			snprintf(lower->files[i].path, PATH_MAX, "%s/lower%s", run->ovl_root,
				 c->files[i].path + strlen(run->base));
		err = case_build(lower, what, sizeof(what));
		free(lower);
		if (!err)
			err = overlay_mount(run, index, what, sizeof(what));
	} else {
		err = case_build(c, what, sizeof(what));
		/* Not cached: the tree as it ends, and the filesystem mounted afresh. */
		if (!err && c->uncached) {
			err = case_apply(c, what, sizeof(what));
			if (!err && (umount(EXT4_MOUNT) ||
				     mount("/dev/vda", EXT4_MOUNT, "ext4", 0, "acl"))) {
				snprintf(what, sizeof(what), "mounting " EXT4_MOUNT " afresh");
				err = -errno;
			}
		}
	}
	if (err) {
		TH_LOG("case %u: %s: %s", index, what, strerror(-err));
		goto out;
	}
	if (enf_agent_start(&agent, &ENF_ROOT, helper, c)) {
		TH_LOG("case %u: cannot start the helper", index);
		goto out;
	}
	if (enf_agent_wait(&agent)) {
		err = c->uncached ? 0 : case_apply(c, what, sizeof(what));
		if (err)
			TH_LOG("case %u: %s: %s", index, what, strerror(-err));
		enf_agent_resume(&agent);
	}
	status = enf_agent_join(&agent);
	if (status) {
		TH_LOG("case %u: helper exit %d: %s: %s", index, status, c->setup_what,
		       strerror(c->setup_err));
		goto out;
	}
	ok = !err;
out:
	if (run->overlay)
		overlay_umount(run, index);
	else
		remove_tree(c->nodes[0].path);
	return ok;
}

FIXTURE(model)
{
	struct fsrun run;
	char tmp_mount[64];
};

FIXTURE_VARIANT(model)
{
	const char *fs;
};

FIXTURE_VARIANT_ADD(model, tmpfs)
{
	.fs = "tmpfs",
};

FIXTURE_VARIANT_ADD(model, ext4)
{
	.fs = "ext4",
};

FIXTURE_VARIANT_ADD(model, overlay)
{
	.fs = "overlay",
};

/* Whether the filesystem of @dir takes a POSIX access ACL. */
static bool acls_work(const char *dir)
{
	struct acl acl = { .n = 3,
			   .e = { { ACL_USER_OBJ, 7, ACL_UNDEFINED_ID },
				  { ACL_GROUP_OBJ, 5, ACL_UNDEFINED_ID },
				  { ACL_OTHER, 5, ACL_UNDEFINED_ID } } };
	const char *probe = enf_fmt("%s/acl-probe", dir);
	bool ok;

	if (mkdir(probe, 0755))
		return false;
	ok = !set_acl(probe, &acl);
	rmdir(probe);
	return ok;
}

FIXTURE_SETUP(model)
{
	struct fsrun *run = &self->run;
	struct statfs sfs;

	ENF_ASSERT_EXPECTATION();
	ASSERT_EQ(0, geteuid());
	memset(run, 0, sizeof(*run));
	run->fs = variant->fs;
	run->show = env_ulong("NODEFD_MODEL_SHOW", 3);
	/* A fresh tmpfs of our own for tmpfs and the overlay's layers. */
	strcpy(self->tmp_mount, "/tmp/model.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->tmp_mount));
	ASSERT_EQ(0, mount("tmpfs", self->tmp_mount, "tmpfs", 0, "mode=0755"))
	{
		TH_LOG("mount tmpfs on %s: %s", self->tmp_mount, strerror(errno));
	}
	if (!strcmp(run->fs, "tmpfs")) {
		snprintf(run->base, sizeof(run->base), "%s", self->tmp_mount);
	} else if (!strcmp(run->fs, "ext4")) {
		if (statfs(EXT4_MOUNT, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC)
			SKIP(return, "no ext4 filesystem on " EXT4_MOUNT
				     " (vmtest/run mounts its scratch disk there)");
		snprintf(run->base, sizeof(run->base), EXT4_MOUNT "/model");
		remove_tree(run->base);	/* left by an earlier run that died */
		ASSERT_EQ(0, mkdir(run->base, 0755));
	} else {
		run->overlay = true;
		snprintf(run->ovl_root, sizeof(run->ovl_root), "%s", self->tmp_mount);
		snprintf(run->base, sizeof(run->base), "%s/merged", self->tmp_mount);
		ASSERT_EQ(0, mkdir(enf_fmt("%s/lower", self->tmp_mount), 0755));
		ASSERT_EQ(0, mkdir(run->base, 0755));
		ASSERT_EQ(0, mkdir(enf_fmt("%s/u", self->tmp_mount), 0755));
		ASSERT_EQ(0, mkdir(enf_fmt("%s/w", self->tmp_mount), 0755));
		if (mount("overlay", run->base, "overlay", 0,
			  enf_fmt("lowerdir=%s/lower,upperdir=%s/u,workdir=%s/w", self->tmp_mount,
				  self->tmp_mount, self->tmp_mount)))
			SKIP(return, "no overlayfs: %s", strerror(errno));
		run->acls = acls_work(run->base);
		umount2(run->base, MNT_DETACH);
		return;
	}
	run->acls = acls_work(run->base);
}

FIXTURE_TEARDOWN(model)
{
	if (!strcmp(self->run.fs, "ext4"))
		remove_tree(self->run.base);
	umount2(self->tmp_mount, MNT_DETACH);
	rmdir(self->tmp_mount);
}

TEST_F_TIMEOUT(model, kernel_agrees, 1200)
{
	struct fsrun *run = &self->run;
	enum enf_expect expect = enf_expectation();
	unsigned long cases = env_ulong("NODEFD_MODEL_CASES", MODEL_CASES_DEFAULT);
	unsigned long only = env_ulong("NODEFD_MODEL_ONLY", ~0UL);
	__u64 seed = env_ulong("NODEFD_MODEL_SEED", 0);
	struct mcase *c = enf_shared(sizeof(*c));
	unsigned int failed_setup = 0;
	struct timespec t0, t1;

	if (_metadata->skip)
		return;	/* SKIP() in the setup does not stop the test on every harness */
	ASSERT_NE(NULL, c);
	if (!seed) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		seed = ((__u64)now.tv_sec << 20) ^ now.tv_nsec ^ ((__u64)getpid() << 40);
	}
	run->seed = seed;
	fprintf(stderr, "# model %s: seed NODEFD_MODEL_SEED=%#llx, %lu cases, ACLs %s\n", run->fs,
		(unsigned long long)seed, only == ~0UL ? cases : 1UL,
		run->acls ? "on" : "not supported");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 0; i < cases; i++) {
		__u64 s = seed ^ (0x5851f42d4c957f2dULL * (i + 1)) ^
			  ((__u64)(run->fs[0] + 256 * run->fs[1]) << 48);

		if (only != ~0UL && i != only)
			continue;
		rng_next(&s);
		if (!case_run(_metadata, run, c, i, s)) {
			failed_setup++;
			continue;
		}
		run->cases++;
		case_judge(run, c, i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "# model %s: %u cases, %u comparisons, %u disagreements "
		"(%u refused that the model allows, %u allowed that it refuses), "
		"%u refused at an uncached ACL (fail closed), %.1f s\n",
		run->fs, run->cases, run->comparisons, run->disagreements, run->refusals,
		run->holes, run->fail_closed,
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (int i = 0; i < run->nkinds; i++)
		fprintf(stderr, "# model %s: %5u x %s\n", run->fs, run->kinds[i].count,
			run->kinds[i].key);
	munmap(c, sizeof(*c));

	EXPECT_EQ(0, failed_setup);
	ASSERT_LT(0, run->comparisons);
	if (expect == ENF_EXPECT_HOLE) {
		/* The kernel alone must show the hole, and never refuse what the model allows. */
		EXPECT_LT(0, run->holes)
		{
			TH_LOG("without nodefd no link open went past the by-name rules: the test "
			       "cannot tell nodefd from nothing");
		}
		EXPECT_EQ(0, run->refusals)
		{
			TH_LOG("without nodefd the kernel refused link opens the model allows: the "
			       "model (or the test) is wrong");
		}
	} else {
		EXPECT_EQ(0, run->disagreements);
	}
}

TEST_HARNESS_MAIN
