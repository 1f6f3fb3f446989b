// SPDX-License-Identifier: GPL-2.0
/* enforce tests - what `nodefdctl events --json` reports for each kind of refusal */

/*
 * Runs with nodefd loaded. Each case first reads and drops whatever earlier tests left in the
 * ring buffer (`events --json --timeout 0`), makes exactly one refusal in a helper whose pid it
 * knows, then reads it back with `nodefdctl events --json --count 1 --timeout 10` and checks
 * the fields; a last `--timeout 1` read checks that the refusal made no other event.
 */

#include "common.h"

#define EVENTS_FD 7

/* Runs nodefdctl @args (from PATH) with stdout into @out: its exit status, or -1. */
static int nodefdctl(const char *const args[], char *out, size_t size)
{
	const char *argv[16] = { "nodefdctl" };
	size_t len = 0;
	int p[2], status, n = 1;
	pid_t pid;

	for (; args[n - 1] && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (dup2(p[1], 1) != 1)
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "# cannot run nodefdctl: %s\n", strerror(errno));
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t r = read(p[0], out + len, size - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || len + r >= size - 1) {
			if (r > 0)
				len += r;
			break;
		}
		len += r;
	}
	out[len] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * The value of "@key" in one JSON object on one line: a string unescaped into @val, or a
 * number, true, false or null as written. 0, or -1 if the key is not there.
 */
static int json_get(const char *line, const char *key, char *val, size_t size)
{
	char pattern[64];
	const char *p = line;
	size_t n = 0;

	snprintf(pattern, sizeof(pattern), "\"%s\"", key);
	for (;;) {
		p = strstr(p, pattern);
		if (!p)
			return -1;
		p += strlen(pattern);
		while (*p == ' ')
			p++;
		if (*p == ':')
			break;
	}
	p++;
	while (*p == ' ')
		p++;
	if (*p == '"') {
		for (p++; *p && *p != '"' && n < size - 1; p++) {
			if (*p == '\\' && p[1]) {
				p++;
				if (*p == 'u') {
					/* Only what names can hold here: keep it visible. */
					val[n++] = '?';
					p += 4;
					continue;
				}
				val[n++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
				continue;
			}
			val[n++] = *p;
		}
	} else {
		while (*p && *p != ',' && *p != '}' && *p != ' ' && n < size - 1)
			val[n++] = *p++;
	}
	val[n] = '\0';
	return 0;
}

/* Expects "@key" of @line to be @want. */
#define EXPECT_FIELD(line, key, want)                                                              \
	do {                                                                                       \
		char __v[PATH_MAX];                                                                \
		EXPECT_EQ(0, json_get((line), (key), __v, sizeof(__v)))                            \
		{                                                                                  \
			TH_LOG("no \"%s\" in %s", (key), (line));                                  \
		}                                                                                  \
		EXPECT_STREQ((want), __v)                                                          \
		{                                                                                  \
			TH_LOG("\"%s\" in %s", (key), (line));                                     \
		}                                                                                  \
	} while (0)

/* Reads and drops what is waiting, so that the next event is the case's own. */
static void drain(struct __test_metadata *const _metadata)
{
	static const char *const args[] = { "--json", "events", "--timeout", "0", NULL };
	static char out[1 << 20];

	ASSERT_EQ(0, nodefdctl(args, out, sizeof(out)))
	{
		TH_LOG("nodefdctl --json events --timeout 0 failed: is nodefd loaded?");
	}
}

/* The one event of the case, into @line: asserts it came. */
static void one_event(struct __test_metadata *const _metadata, char *line, size_t size)
{
	static const char *const args[] = { "--json", "events", "--count", "1", "--timeout", "10",
					    NULL };
	int status = nodefdctl(args, line, size);
	char *nl;

	ASSERT_EQ(0, status)
	{
		TH_LOG("nodefdctl --json events --count 1 --timeout 10: exit %d, printed \"%s\"",
		       status, line);
	}
	nl = strchr(line, '\n');
	ASSERT_NE(NULL, nl)
	{
		TH_LOG("no line: \"%s\"", line);
	}
	ASSERT_EQ('\0', nl[1])
	{
		TH_LOG("more than one line for --count 1: \"%s\"", line);
	}
	*nl = '\0';
	TH_LOG("event: %s", line);
}

/* Asserts that nothing more is waiting. */
static void no_more_events(struct __test_metadata *const _metadata)
{
	static const char *const args[] = { "--json", "events", "--timeout", "1", NULL };
	char out[8192];

	ASSERT_EQ(0, nodefdctl(args, out, sizeof(out)));
	EXPECT_STREQ("", out)
	{
		TH_LOG("events nobody asked for");
	}
}

/* One refusal, made by a helper. */
struct refusal {
	char tree[PATH_MAX];
	char origin[PATH_MAX];
	int origin_flags;
	int flags;
	bool holder;		/* reopen through a child that holds the fd */
	bool pause;		/* let the test close the directory first */
	bool jail;		/* reopen from a chroot */
	bool cwd_walk;		/* from the chroot, walk /proc/<outsider>/cwd instead */
	bool no_ptrace;		/* drop CAP_SYS_PTRACE in the chroot */
	bool emptypath;		/* openat(fd, "", O_EMPTYPATH): no link at all (7.2) */
	bool cover;		/* in a mount namespace of its own, a tmpfs over the origin's directory */
	const char *tail;	/* after the link: a walk on through it */
	pid_t outsider;

	pid_t pid;
	pid_t holder_pid;
	int err;
	int setup_err;
	char why[128];
};

static int refuser(struct enf_agent *agent, void *arg)
{
	struct refusal *rf = arg;
	int fd, p[2] = { -1, -1 }, nfd;
	char link[PATH_MAX + 64], c;
	pid_t holder;

	rf->pid = getpid();
	rf->holder_pid = rf->pid;
	fd = open(rf->origin, rf->origin_flags | O_CLOEXEC);
	if (fd < 0 || dup2(fd, EVENTS_FD) != EVENTS_FD) {
		rf->setup_err = errno;
		snprintf(rf->why, sizeof(rf->why), "open %.100s", rf->origin);
		return ENF_SETUP_FAILED;
	}
	close(fd);
	if (rf->holder) {
		if (pipe2(p, O_CLOEXEC))
			return ENF_SETUP_FAILED;
		/* Not straight into rf: the child would write its 0 there too. */
		holder = fork();
		if (holder < 0)
			return ENF_SETUP_FAILED;
		if (!holder) {
			close(p[1]);
			while (read(p[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		rf->holder_pid = holder;
		close(p[0]);
		close(EVENTS_FD);
	}
	if (rf->pause && enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	if (rf->jail) {
		const char *jail = enf_fmt("%s/jail", rf->tree);

		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("proc", enf_fmt("%s/proc", jail), "proc", 0, NULL) || chroot(jail) ||
		    chdir("/")) {
			rf->setup_err = errno;
			snprintf(rf->why, sizeof(rf->why), "enter the jail");
			return ENF_SETUP_FAILED;
		}
		if (rf->no_ptrace && enf_drop_cap(CAP_SYS_PTRACE)) {
			rf->setup_err = errno;
			snprintf(rf->why, sizeof(rf->why), "drop CAP_SYS_PTRACE");
			return ENF_SETUP_FAILED;
		}
	}
	if (rf->cover) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", rf->origin);
		*strrchr(dir, '/') = '\0';
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", 0, "mode=0755")) {
			rf->setup_err = errno;
			snprintf(rf->why, sizeof(rf->why), "cover %.100s", dir);
			return ENF_SETUP_FAILED;
		}
	}
	if (rf->cwd_walk)
		snprintf(link, sizeof(link), "/proc/%d/cwd/secret", rf->outsider);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d%s", rf->holder_pid, EVENTS_FD,
			 rf->tail ?: "");
	if (rf->emptypath)
		nfd = openat(EVENTS_FD, "", O_EMPTYPATH | rf->flags | O_CLOEXEC);
	else
		nfd = open(link, rf->flags | O_CLOEXEC);
	rf->err = nfd < 0 ? errno : 0;
	if (nfd >= 0)
		close(nfd);
	if (rf->holder) {
		close(p[1]);
		waitpid(rf->holder_pid, NULL, 0);
	}
	return 0;
}

FIXTURE(events)
{
	struct enf_tree tree;
	struct refusal *rf;
	int old_scope;
};

FIXTURE_SETUP(events)
{
	self->old_scope = -1;
	enf_tree_make(_metadata, &self->tree);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "pub"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "pub/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "victim"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "victim/file"), 0666, ENF_OWNER, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "victim/sub"), 0755, ENF_OWNER, ENF_OWNER);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "victim/sub/file"), 0666, ENF_OWNER,
		   ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "outside"), 0755, 0, 0);
	enf_mkfile(_metadata, ENF_AT(&self->tree, "outside/secret"), 0644, 0, ENF_ORIGINAL);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail"), 0755, 0, 0);
	enf_mkdir(_metadata, ENF_AT(&self->tree, "jail/proc"), 0555, 0, 0);
	self->rf = enf_shared(sizeof(*self->rf));
	ASSERT_NE(NULL, self->rf);
	strcpy(self->rf->tree, self->tree.path);
	drain(_metadata);
}

FIXTURE_TEARDOWN(events)
{
	if (self->old_scope >= 0)
		enf_ptrace_scope_set(self->old_scope);
	if (chdir("/tmp"))
		TH_LOG("chdir(/tmp): %s", strerror(errno));
	enf_tree_remove(&self->tree);
	if (self->rf)
		munmap(self->rf, sizeof(*self->rf));
}

static int close_victim(struct enf_agent *agent, void *arg)
{
	(void)agent;
	return chmod(arg, 0700) ? errno : 0;
}

/* Makes the refusal described in self->rf as @id; asserts it was one. */
static void refuse(struct __test_metadata *const _metadata, FIXTURE_DATA(events) *self,
		   const struct enf_ident *id)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct refusal *rf = self->rf;
	int status;

	ASSERT_EQ(0, enf_agent_start(&agent, id, refuser, rf));
	if (rf->pause) {
		ASSERT_TRUE(enf_agent_wait(&agent));
		ASSERT_EQ(0, enf_run_as(&ENF_AS_OWNER, close_victim,
					(void *)ENF_AT(&self->tree, "victim")));
		enf_agent_resume(&agent);
	}
	status = enf_agent_join(&agent);
	ASSERT_EQ(0, status)
	{
		TH_LOG("helper (exit %d): %s: %s", status, rf->why, strerror(rf->setup_err));
	}
	ASSERT_EQ(EACCES, rf->err)
	{
		TH_LOG("the open was not refused: %s", rf->err ? strerror(rf->err) : "success");
	}
}

/* The same attack with no link: O_EMPTYPATH (7.2). The event names that door. */
TEST_F(events, upgrade_emptypath)
{
	char line[8192];

	if (!enf_kernel_has_emptypath())
		SKIP(return, "no O_EMPTYPATH on this kernel (7.2 and later have it)");
	strcpy(self->rf->origin, ENF_AT(&self->tree, "victim/file"));
	self->rf->origin_flags = O_PATH;
	self->rf->flags = O_RDWR;
	self->rf->pause = true;
	self->rf->emptypath = true;
	refuse(_metadata, self, &ENF_AS_NOBODY);
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "upgrade");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "kind", "fd");
	EXPECT_FIELD(line, "hook", "emptypath");
	EXPECT_FIELD(line, "reason", "rule");
	EXPECT_FIELD(line, "holder_pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "holder_fd", enf_fmt("%d", EVENTS_FD));
	EXPECT_FIELD(line, "orig", "path");
	EXPECT_FIELD(line, "req", "rw");
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "victim/file"));
	EXPECT_FIELD(line, "ancestor", "victim");
	no_more_events(_metadata);
}

/* The article's attack: write access the fd lacks, and the closed directory named as why. */
TEST_F(events, upgrade)
{
	char line[8192];

	strcpy(self->rf->origin, ENF_AT(&self->tree, "victim/file"));
	self->rf->origin_flags = O_RDONLY;
	self->rf->flags = O_WRONLY;
	self->rf->pause = true;
	refuse(_metadata, self, &ENF_AS_NOBODY);
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "upgrade");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "kind", "fd");
	EXPECT_FIELD(line, "hook", "open");
	EXPECT_FIELD(line, "reason", "rule");
	EXPECT_FIELD(line, "pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "uid", enf_fmt("%d", ENF_NOBODY));
	EXPECT_FIELD(line, "holder_pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "holder_fd", enf_fmt("%d", EVENTS_FD));
	EXPECT_FIELD(line, "orig", "r");
	EXPECT_FIELD(line, "req", "w");
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "victim/file"));
	EXPECT_FIELD(line, "ancestor", "victim");
	no_more_events(_metadata);
}

TEST_F(events, upgrade_through_other_process)
{
	char line[8192];

	strcpy(self->rf->origin, ENF_AT(&self->tree, "victim/file"));
	self->rf->origin_flags = O_RDONLY;
	self->rf->flags = O_RDWR;
	self->rf->holder = true;
	self->rf->pause = true;
	refuse(_metadata, self, &ENF_AS_NOBODY);
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "upgrade");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "kind", "fd");
	EXPECT_FIELD(line, "pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "holder_pid", enf_fmt("%d", self->rf->holder_pid));
	EXPECT_FIELD(line, "holder_fd", enf_fmt("%d", EVENTS_FD));
	EXPECT_FIELD(line, "req", "rw");
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "victim/file"));
	no_more_events(_metadata);
}

TEST_F(events, append)
{
	char line[8192];

	strcpy(self->rf->origin, ENF_AT(&self->tree, "victim/file"));
	self->rf->origin_flags = O_WRONLY | O_APPEND;
	self->rf->flags = O_WRONLY;
	self->rf->pause = true;
	refuse(_metadata, self, &ENF_AS_NOBODY);
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "append");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "kind", "fd");
	EXPECT_FIELD(line, "pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "holder_fd", enf_fmt("%d", EVENTS_FD));
	EXPECT_FIELD(line, "orig", "w+append");
	EXPECT_FIELD(line, "reason", "rule");
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "victim/file"));
	no_more_events(_metadata);
}

/*
 * A walk on through a directory fd below the closed directory: judged at the link, by name;
 * ancestors names the directory.
 */
TEST_F(events, ancestors)
{
	char line[8192];

	strcpy(self->rf->origin, ENF_AT(&self->tree, "victim/sub"));
	self->rf->origin_flags = O_RDONLY | O_DIRECTORY;
	self->rf->flags = O_RDONLY;
	self->rf->tail = "/file";
	self->rf->pause = true;
	refuse(_metadata, self, &ENF_AS_NOBODY);
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "ancestors");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "kind", "fd");
	EXPECT_FIELD(line, "hook", "follow");
	EXPECT_FIELD(line, "reason", "rule");
	EXPECT_FIELD(line, "pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "holder_fd", enf_fmt("%d", EVENTS_FD));
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "victim/sub"));
	EXPECT_FIELD(line, "ancestor", "victim");
	no_more_events(_metadata);
}

/* Root in a chroot reopens a read-only fd of a file outside it for writing. */
TEST_F(events, upgrade_outside_root)
{
	char line[8192], v[256];

	strcpy(self->rf->origin, ENF_AT(&self->tree, "outside/secret"));
	self->rf->origin_flags = O_RDONLY;
	self->rf->flags = O_RDWR;
	self->rf->jail = true;
	refuse(_metadata, self, &ENF_ROOT);
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "upgrade");
	EXPECT_FIELD(line, "reason", "outside_root");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "kind", "fd");
	EXPECT_FIELD(line, "hook", "open");
	EXPECT_FIELD(line, "pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "uid", "0");
	EXPECT_FIELD(line, "holder_fd", enf_fmt("%d", EVENTS_FD));
	/* Outside the opener's root: the path from the global root. */
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "outside/secret"));
	EXPECT_EQ(0, json_get(line, "ancestor", v, sizeof(v)));
	EXPECT_STREQ("null", v);
	no_more_events(_metadata);
}

/*
 * Root in a mount namespace of its own covers the directory of a file it holds read-only
 * (a sandbox's InaccessiblePaths=), then reopens the file for writing: its name is hidden.
 */
TEST_F(events, upgrade_hidden)
{
	char line[8192];

	strcpy(self->rf->origin, ENF_AT(&self->tree, "outside/secret"));
	self->rf->origin_flags = O_RDONLY;
	self->rf->flags = O_RDWR;
	self->rf->cover = true;
	refuse(_metadata, self, &ENF_ROOT);
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "upgrade");
	EXPECT_FIELD(line, "reason", "hidden");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "kind", "fd");
	EXPECT_FIELD(line, "hook", "open");
	EXPECT_FIELD(line, "uid", "0");
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "outside/secret"));
	no_more_events(_metadata);
}

/* An outsider: root without CAP_SYS_PTRACE, its cwd @arg, waiting. */
static int outsider(struct enf_agent *agent, void *arg)
{
	if (enf_drop_cap(CAP_SYS_PTRACE) || chdir(arg))
		return ENF_SETUP_FAILED;
	return enf_agent_sync(agent) ? ENF_SETUP_FAILED : 0;
}

/*
 * The same from a walk through another process's cwd: judged when the link is followed. The
 * walker (root in a chroot, without CAP_SYS_PTRACE) could not take the outsider's cwd under
 * Yama's scope 1: only its name counts.
 */
TEST_F(events, reach_walk_through_cwd)
{
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	char line[8192];

	self->old_scope = enf_ptrace_scope_set(1);
	if (self->old_scope < 0)
		SKIP(return, "no Yama (" ENF_PTRACE_SCOPE ")");
	strcpy(self->rf->origin, ENF_AT(&self->tree, "pub/file"));
	self->rf->origin_flags = O_RDONLY;
	self->rf->flags = O_RDONLY;
	self->rf->jail = true;
	self->rf->cwd_walk = true;
	self->rf->no_ptrace = true;
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_ROOT, outsider,
				     (void *)ENF_AT(&self->tree, "outside")));
	ASSERT_TRUE(enf_agent_wait(&agent));
	self->rf->outsider = agent.pid;
	refuse(_metadata, self, &ENF_ROOT);
	enf_agent_resume(&agent);
	EXPECT_EQ(0, enf_agent_join(&agent));
	one_event(_metadata, line, sizeof(line));
	EXPECT_FIELD(line, "rule", "reach");
	EXPECT_FIELD(line, "action", "enforce");
	EXPECT_FIELD(line, "reason", "outside_root");
	EXPECT_FIELD(line, "kind", "cwd");
	EXPECT_FIELD(line, "hook", "follow");
	EXPECT_FIELD(line, "pid", enf_fmt("%d", self->rf->pid));
	EXPECT_FIELD(line, "holder_pid", enf_fmt("%d", self->rf->outsider));
	EXPECT_FIELD(line, "holder_fd", "-1");
	EXPECT_FIELD(line, "path", ENF_AT(&self->tree, "outside"));
	no_more_events(_metadata);
}

/*
 * A flood of one kind of refusal from one source (nobody reopening a read-only fd for writing,
 * FLOOD times, with no reader) must not drown a refusal of a new kind that follows it (a walk
 * through the link into a closed directory), and nothing of it is lost: the events sent and
 * the counts of those held back that they carry add up to every refusal made.
 */
#define FLOOD 2000

struct flood {
	char tree[PATH_MAX];
	int made;		/* upgrade refusals made */
	int new_err;		/* errno of the new kind's walk */
	int last_err;		/* errno of the upgrade made after the flood */
};

static int flooder(struct enf_agent *agent, void *arg)
{
	struct flood *fl = arg;
	char link[64];
	int fd, sub, nfd;

	fd = open(enf_fmt("%s/victim/file", fl->tree), O_RDONLY | O_CLOEXEC);
	sub = open(enf_fmt("%s/victim/sub", fl->tree), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || sub < 0 || enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	for (int i = 0; i < FLOOD; i++) {
		nfd = open(link, O_RDWR | O_CLOEXEC);
		if (nfd >= 0 || errno != EACCES)
			return 2;
		fl->made++;
	}
	nfd = open(enf_fmt("/proc/self/fd/%d/file", sub), O_RDONLY | O_CLOEXEC);
	fl->new_err = nfd < 0 ? errno : 0;
	/* The next window: the source's next event reports what was held back. */
	if (enf_agent_sync(agent))
		return ENF_SETUP_FAILED;
	nfd = open(link, O_RDWR | O_CLOEXEC);
	fl->last_err = nfd < 0 ? errno : 0;
	return 0;
}

/* Counts the upgrade events of @out, and the suppressed counts they carry; the ancestors ones. */
static void tally(char *out, long *upgrades, long *carried, long *ancestors, long *summarized)
{
	char v[64];

	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (!json_get(line, "type", v, sizeof(v)) && !strcmp(v, "suppressed")) {
			if (!json_get(line, "rule", v, sizeof(v)) && !strcmp(v, "upgrade") &&
			    !json_get(line, "count", v, sizeof(v)))
				*summarized += atol(v);
			continue;
		}
		if (json_get(line, "rule", v, sizeof(v)))
			continue;
		if (!strcmp(v, "ancestors")) {
			(*ancestors)++;
		} else if (!strcmp(v, "upgrade")) {
			(*upgrades)++;
			if (!json_get(line, "suppressed", v, sizeof(v)))
				*carried += atol(v);
		}
	}
}

TEST_F(events, flood_drowns_no_new_kind_and_loses_nothing)
{
	static const char *const args[] = { "--json", "events", "--timeout", "1", NULL };
	struct enf_agent agent = { .pid = -1, .to_child = -1, .from_child = -1 };
	struct flood *fl = enf_shared(sizeof(*fl));
	static char out[1 << 20];
	long upgrades = 0, carried = 0, ancestors = 0, summarized = 0;

	ASSERT_NE(NULL, fl);
	strcpy(fl->tree, self->tree.path);
	fl->new_err = fl->last_err = -1;
	ASSERT_EQ(0, enf_agent_start(&agent, &ENF_AS_NOBODY, flooder, fl));
	ASSERT_TRUE(enf_agent_wait(&agent));
	ASSERT_EQ(0, enf_run_as(&ENF_AS_OWNER, close_victim, (void *)ENF_AT(&self->tree, "victim")));
	enf_agent_resume(&agent);
	ASSERT_TRUE(enf_agent_wait(&agent));
	ASSERT_EQ(FLOOD, fl->made);
	ASSERT_EQ(EACCES, fl->new_err);
	/* Read only now: the ring buffer holds what the flood left in it. */
	ASSERT_EQ(0, nodefdctl(args, out, sizeof(out)));
	tally(out, &upgrades, &carried, &ancestors, &summarized);
	TH_LOG("%d refusals of one kind: %ld events sent, carrying %ld held back, %ld in summary records; the new kind: %ld",
	       FLOOD, upgrades, carried, summarized, ancestors);
	EXPECT_EQ(1, ancestors);
	EXPECT_LE(1, upgrades);
	EXPECT_GT(FLOOD / 10, upgrades);
	/* The flood stopped: no event of its source will carry the rest, a summary did. */
	EXPECT_EQ(FLOOD, upgrades + summarized);
	usleep(1100 * 1000);
	enf_agent_resume(&agent);
	ASSERT_EQ(0, enf_agent_join(&agent));
	ASSERT_EQ(EACCES, fl->last_err);
	ASSERT_EQ(0, nodefdctl(args, out, sizeof(out)));
	summarized = 0;
	tally(out, &upgrades, &carried, &ancestors, &summarized);
	TH_LOG("after the next upgrade: %ld events sent, carrying %ld held back; summarized again: %ld",
	       upgrades, carried, summarized);
	EXPECT_EQ(FLOOD + 1, upgrades + carried);
	EXPECT_EQ(0, summarized);	/* said once */
	munmap(fl, sizeof(*fl));
}

/* An allowed reopen reports nothing. */
TEST_F(events, none_for_allowed_reopen)
{
	const char *file = ENF_AT(&self->tree, "pub/file");
	int fd = open(file, O_RDWR | O_CLOEXEC), fd2;

	ASSERT_LE(0, fd);
	fd2 = open(enf_fmt("/proc/self/fd/%d", fd), O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	close(fd2);
	close(fd);
	no_more_events(_metadata);
}

/*
 * --count N with fewer than N events before the timeout: exit 1, as documented, and under
 * --json no event but the error as a JSON object, as every nodefdctl error is.
 */
TEST_F(events, count_not_reached_exits_1)
{
	static const char *const args[] = { "--json", "events", "--count", "1", "--timeout",
					    "1", NULL };
	char out[8192], v[256];

	EXPECT_EQ(1, nodefdctl(args, out, sizeof(out)));
	EXPECT_NE(0, json_get(out, "rule", v, sizeof(v)))
	{
		TH_LOG("an event where none was made: %s", out);
	}
	if (out[0]) {
		EXPECT_EQ(0, json_get(out, "error", v, sizeof(v)))
		{
			TH_LOG("output is neither empty nor an error object: %s", out);
		}
	}
}

TEST_HARNESS_MAIN
