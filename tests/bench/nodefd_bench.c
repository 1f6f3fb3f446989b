// SPDX-License-Identifier: GPL-2.0
/* nodefd_bench.c - what nodefd costs: detached vs loaded, alternating, in one boot */

/*
 * Run as root in the VM (make bench). Each round measures every workload twice, once with
 * nodefd detached and once loaded and enforcing, in alternating order, as an unprivileged user
 * (uid 65534) so that the ancestor checks take the full mode/group path. Per workload it prints
 * the median ns per operation of each state, the spread (min-max over the rounds) and the
 * ratio of the medians, the ratio's own min-max over the rounds beside it. Then the floor: the
 * same for programs that decide nothing (floor.bpf.c), the cost of the hooks themselves.
 *
 * The clock is the guest's CLOCK_MONOTONIC. Under `make bench` the VM runs with QEMU's -icount
 * (--clock=icount): guest time is then a count of executed instructions, 1 ns each, which is
 * deterministic and close to CPU cost but blind to caches, TLBs and memory latency. Without
 * it (--clock=wall) the ns are an emulator's wall time, noisy under load; only ratios mean
 * anything there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <linux/bpf.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nodefd.h"
#include "floor.skel.h"

#define MAX_ROUNDS 31
#define POLICY_MAP_PIN "/sys/fs/bpf/nodefd/cgroup_policy"
#define COUNTERS_PIN "/sys/fs/bpf/nodefd/counters"
#define CG_ROOT "/sys/fs/cgroup"
#define CG_DEEP 30

/*
 * FAST, SYMLINK: ordinary opens (every open(2) passes file_open, every symlink
 * inode_follow_link). REOPEN: /proc/self/fd/N with the fd's own access, which nodefd allows
 * without a walk. BYNAME: beyond the fd's access (read-only fd, read-write reopen of a 0666
 * file), allowed only because the opener could open the file by name: the ancestor walk. DENIED:
 * the same below a 0700 directory the opener cannot search (it got the fd from root), refused
 * with an event (while detached the kernel allows it). MIDPATH: /proc/self/fd/DIR/file, judged at the link.
 * MKDIR: mkdir+rmdir in /tmp, which pass path_mkdir and path_rmdir (nodefd's hooks for what a
 * walk refused after its jump would do). FORK: fork, _exit and wait, whose freed task passes
 * task_free (nodefd's hook that takes its state out of the counts of watched and refused walks).
 */
enum kind { FAST, SYMLINK, REOPEN, BYNAME, DENIED, MIDPATH, MKDIR, FORK };

struct workload {
	const char *name;
	enum kind kind;
	int depth;		/* directories above the file, "/" included */
	int policies;		/* entries in the policy map (0: empty map) */
	int cg_level;		/* cgroup level of the measuring task (0: root) */
	char path[512];
};

/* tests/bench/plot and the component table below know these indices. */
static struct workload wl[] = {
	{ "open+close, ordinary file (fast path)", FAST, 2, 0, 0, "" },
	{ "open via an ordinary symlink", SYMLINK, 2, 0, 0, "" },
	{ "reopen /proc/self/fd/N same access, d1", REOPEN, 1, 0, 0, "" },
	{ "reopen /proc/self/fd/N same access, d8", REOPEN, 8, 0, 0, "" },
	{ "reopen /proc/self/fd/N same access, d32", REOPEN, 32, 0, 0, "" },
	{ "reopen /proc/self/fd/N same access, d64", REOPEN, 64, 0, 0, "" },
	{ "reopen r->rw, allowed by name, d1", BYNAME, 1, 0, 0, "" },
	{ "reopen r->rw, allowed by name, d8", BYNAME, 8, 0, 0, "" },
	{ "reopen r->rw, allowed by name, d32", BYNAME, 32, 0, 0, "" },
	{ "reopen r->rw, allowed by name, d64", BYNAME, 64, 0, 0, "" },
	{ "refused reopen (0700 above), d8", DENIED, 8, 0, 0, "" },
	{ "/proc/self/fd/DIR/file, d8", MIDPATH, 8, 0, 0, "" },
	{ "reopen d8, 10 policies, cgroup level 1", REOPEN, 8, 10, 1, "" },
	{ "reopen d8, 10 policies, cgroup level 30", REOPEN, 8, 10, CG_DEEP, "" },
	{ "reopen d8, 1000 policies, cgroup level 1", REOPEN, 8, 1000, 1, "" },
	{ "reopen d8, 1000 policies, cgroup level 30", REOPEN, 8, 1000, CG_DEEP, "" },
	{ "reopen d8, 4096 policies, cgroup level 1", REOPEN, 8, NODEFD_MAX_POLICIES, 1, "" },
	{ "reopen d8, 4096 policies, cgroup level 30", REOPEN, 8, NODEFD_MAX_POLICIES, CG_DEEP, "" },
	{ "mkdir+rmdir in /tmp (path hooks)", MKDIR, 2, 0, 0, "" },
	{ "fork+exit+wait (task_free)", FORK, 0, 0, 0, "" },
};
enum { W_FAST, W_SYMLINK, W_REOPEN1, W_REOPEN8, W_REOPEN32, W_REOPEN64, W_BYNAME1, W_BYNAME8,
       W_BYNAME32, W_BYNAME64, W_DENIED, W_MIDPATH, W_POL10_1, W_POL10_30, W_POL1000_1,
       W_POL1000_30, W_POL4096_1, W_POL4096_30, W_MKDIR, W_FORK };
#define NWL ((int)(sizeof(wl) / sizeof(wl[0])))

static int denied_fd = -1;
static bool loaded_now;		/* nodefd is loaded: the refused reopen must be refused */
static long iters = 1000;
static int rounds = 5;
static const char *clock_name = "wall";
static const char *kernel_name = "?";
static bool csv;
static bool do_events = true, dry_run;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int obj_get(const char *path)
{
	union bpf_attr a = { 0 };

	a.pathname = (__u64)(unsigned long)path;
	return sys_bpf(BPF_OBJ_GET, &a);
}

static void die(const char *what)
{
	fprintf(stderr, "nodefd_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A file with DEPTH ancestor directories, "/" the first; mode 0666 for the refused reopen. */
static void make_file(struct workload *w)
{
	char *p = w->path;
	size_t n = sizeof(w->path);
	int fd;

	/* The refused reopen's tree starts with a directory only root can search. */
	strcpy(p, w->depth <= 1 ? "" : w->kind == DENIED ? "/nodefd-bench-0700" : "/nodefd-bench");
	if (w->depth > 1)
		mkdir(p, w->kind == DENIED ? 0700 : 0755);
	for (int i = 2; i < w->depth; i++) {
		snprintf(p + strlen(p), n - strlen(p), "/%d", i);
		mkdir(p, 0755);
	}
	snprintf(p + strlen(p), n - strlen(p), "/bench-file-%d", w->depth);
	fd = open(p, O_CREAT | O_WRONLY, 0666);
	if (fd < 0 || fchmod(fd, 0666))
		die(p);
	close(fd);
}

/* The cgroup /sys/fs/cgroup/nodefd-bench/1/2/... LEVEL deep, made on the way. */
static void cgroup_path(int level, char *buf, size_t n)
{
	strcpy(buf, CG_ROOT);
	for (int i = 1; i <= level; i++) {
		snprintf(buf + strlen(buf), n - strlen(buf), i == 1 ? "/nodefd-bench" : "/%d", i);
		if (mkdir(buf, 0755) && errno != EEXIST)
			die(buf);
	}
}

static void cgroup_enter(int level)
{
	char path[512];
	FILE *f;

	cgroup_path(level, path, sizeof(path) - 16);
	strcat(path, "/cgroup.procs");
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
		die(path);
}

/* mkdir+rmdir of one directory in /tmp, in ns per pair. */
static double measure_mkdir(void)
{
	char dir[64];
	double t0;

	snprintf(dir, sizeof(dir), "/tmp/nodefd-bench-dir.%d", getpid());
	for (long i = 0; i < iters / 10; i++)
		if (mkdir(dir, 0700) || rmdir(dir))
			return -1;
	t0 = now_ns();
	for (long i = 0; i < iters; i++)
		if (mkdir(dir, 0700) || rmdir(dir))
			return -1;
	return (now_ns() - t0) / iters;
}

/* fork, _exit in the child, wait in the parent: ns per child. */
static double measure_fork(void)
{
	long n = iters / 10 > 0 ? iters / 10 : 1;
	double t0 = 0;

	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			t0 = now_ns();
		for (long i = 0; i < n; i++) {
			pid_t pid = fork();
			int status;

			if (pid < 0)
				return -1;
			if (!pid)
				_exit(0);
			if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
				return -1;
		}
	}
	return (now_ns() - t0) / n;
}

/* One measurement of workload W, in ns per operation, as the calling (unprivileged) user. */
static double measure(const struct workload *w)
{
	char link[600];
	int fd, hold = -1, flags = O_RDONLY;
	long refused = 0;
	double t0;

	switch (w->kind) {
	case FAST:
		snprintf(link, sizeof(link), "%s", w->path);
		break;
	case SYMLINK:
		snprintf(link, sizeof(link), "/tmp/nodefd-bench-link");
		break;
	case REOPEN:
	case BYNAME:
		hold = open(w->path, O_RDONLY);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", hold);
		if (w->kind == BYNAME)
			flags = O_RDWR;
		break;
	case DENIED:
		hold = denied_fd;	/* opened as root, before the child became nobody */
		snprintf(link, sizeof(link), "/proc/self/fd/%d", hold);
		flags = O_RDWR;		/* beyond the fd's access: judged by name, refused */
		break;
	case MIDPATH:
		snprintf(link, sizeof(link), "%s", w->path);
		*strrchr(link, '/') = 0;
		hold = open(link, O_RDONLY | O_DIRECTORY);
		snprintf(link, sizeof(link), "/proc/self/fd/%d/%s", hold, strrchr(w->path, '/') + 1);
		break;
	case MKDIR:
		return measure_mkdir();
	case FORK:
		return measure_fork();
	}
	if (w->kind > SYMLINK && hold < 0)
		return -1;
	/* Warm up: the first opens fill the dentry and slab caches. */
	for (long i = 0; i < iters / 10; i++) {
		fd = open(link, flags);
		if (fd >= 0)
			close(fd);
	}
	t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		fd = open(link, flags);
		if (fd < 0) {
			if (w->kind != DENIED || errno != EACCES)
				return -1;
			refused++;
			continue;
		}
		close(fd);
	}
	t0 = (now_ns() - t0) / iters;
	if (hold >= 0 && hold != denied_fd)
		close(hold);
	/* Refused every time while loaded, never while detached: else it measures another thing. */
	if (w->kind == DENIED && refused != (loaded_now ? iters : 0)) {
		fprintf(stderr, "nodefd_bench: refused %ld of %ld reopens\n", refused, iters);
		return -1;
	}
	return t0;
}

/* The workloads FIRST..LAST-1, once each, in a child in cgroup LEVEL as nobody. */
static int run_some(int first, int last, int level, double *out)
{
	int p[2], status = 0;
	ssize_t len = sizeof(double) * (last - first);
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		double r[NWL];

		cgroup_enter(level);
		denied_fd = open(wl[W_DENIED].path, O_RDONLY);
		if (denied_fd < 0 || setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(1);
		for (int w = first; w < last; w++)
			r[w - first] = measure(&wl[w]);
		_exit(write(p[1], r, len) == len ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], out, len) != len)
		status = -1;
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	for (int w = 0; w < last - first; w++)
		if (out[w] < 0)
			return -1;
	return 0;
}

/*
 * A policy map of N entries for cgroups that do not exist, swapped in as nodefdctl does: the
 * lookup then misses on every level from the task's cgroup up to the root, its worst case,
 * and every rule stays enforced.
 */
static int policy_fill(int n)
{
	union bpf_attr a = { 0 };
	struct nodefd_policy pol = { 0 };
	int outer, inner, btf = -1;
	__u32 zero = 0;

	outer = obj_get(POLICY_MAP_PIN);
	if (outer < 0) {
		perror(POLICY_MAP_PIN);
		return -1;
	}
	/*
	 * With the current inner map's BTF, as nodefdctl does: on 6.1 a map made without BTF
	 * does not match the template (its spin_lock_off is -EINVAL, not -ENOENT).
	 */
	{
		struct bpf_map_info info = { 0 };
		__u32 id = 0;
		int cur;

		a.map_fd = outer;
		a.key = (__u64)(unsigned long)&zero;
		a.value = (__u64)(unsigned long)&id;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a)) {
			perror("nodefd_bench: policy map lookup");
			return -1;
		}
		memset(&a, 0, sizeof(a));
		a.map_id = id;
		cur = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (cur < 0) {
			perror("nodefd_bench: policy map by id");
			return -1;
		}
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = cur;
		a.info.info_len = sizeof(info);
		a.info.info = (__u64)(unsigned long)&info;
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a)) {
			perror("nodefd_bench: policy map info");
			return -1;
		}
		close(cur);
		memset(&a, 0, sizeof(a));
		if (info.btf_id) {
			a.btf_id = info.btf_id;
			btf = sys_bpf(BPF_BTF_GET_FD_BY_ID, &a);
			memset(&a, 0, sizeof(a));
			if (btf >= 0) {
				a.btf_fd = btf;
				a.btf_key_type_id = info.btf_key_type_id;
				a.btf_value_type_id = info.btf_value_type_id;
			}
		}
	}
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(__u64);
	a.value_size = sizeof(struct nodefd_policy);
	a.max_entries = NODEFD_MAX_POLICIES;
	a.map_flags = BPF_F_NO_PREALLOC;
	inner = sys_bpf(BPF_MAP_CREATE, &a);
	if (btf >= 0)
		close(btf);
	if (inner < 0) {
		perror("nodefd_bench: policy map create");
		return -1;
	}
	for (int r = 0; r < NODEFD_RULE_NR; r++)
		pol.rule_mode[r] = NODEFD_MODE_ENFORCE;
	for (__u64 i = 0; i < (__u64)n; i++) {
		__u64 id = (1ULL << 40) + i;

		memset(&a, 0, sizeof(a));
		a.map_fd = inner;
		a.key = (__u64)(unsigned long)&id;
		a.value = (__u64)(unsigned long)&pol;
		if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a)) {
			perror("nodefd_bench: policy map update");
			return -1;
		}
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = outer;
	a.key = (__u64)(unsigned long)&zero;
	a.value = (__u64)(unsigned long)&inner;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a)) {
		perror("nodefd_bench: policy map swap");
		return -1;
	}
	close(inner);
	close(outer);
	return 0;
}

/* The sum over CPUs of counter IDX, or -1. */
static long long counter(__u32 idx)
{
	__u64 v[256] = { 0 };
	union bpf_attr a = { 0 };
	long long sum = 0;
	int fd = obj_get(COUNTERS_PIN);

	if (fd < 0)
		return -1;
	a.map_fd = fd;
	a.key = (__u64)(unsigned long)&idx;
	a.value = (__u64)(unsigned long)v;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a))
		sum = -1;
	close(fd);
	for (int i = 0; sum >= 0 && i < 256; i++)
		sum += v[i];
	return sum;
}

struct prog {
	__u32 id;
	char name[BPF_OBJ_NAME_LEN];
	__u32 xlated, jited, verified;
	__u64 run_ns, run_cnt;
};

/* nodefd's programs (named nodefd_*), at most MAX. */
static int progs(struct prog *p, int max)
{
	union bpf_attr a;
	__u32 id = 0;
	int n = 0;

	for (;;) {
		struct bpf_prog_info info;
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a))
			break;
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = fd;
		a.info.info_len = sizeof(info);
		a.info.info = (__u64)(unsigned long)&info;
		if (!sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) && !strncmp(info.name, "nodefd_", 7) &&
		    n < max) {
			p[n] = (struct prog){ .id = id, .xlated = info.xlated_prog_len / 8,
					      .jited = info.jited_prog_len,
					      .verified = info.verified_insns,
					      .run_ns = info.run_time_ns, .run_cnt = info.run_cnt };
			memcpy(p[n].name, info.name, sizeof(p[n].name));
			n++;
		}
		close(fd);
	}
	return n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts V: median, and V[0], V[N-1] are the min and max. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int nodefd(const char *verb)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "nodefdctl %s >/dev/null", verb);
	return system(cmd);
}

/*
 * After a load or unload: what it left to RCU callbacks and workqueues (freeing programs and
 * trampolines) runs while the CPU is idle, not inside the next workload.
 */
static void rest(void)
{
	usleep(300000);
}

/* All workloads once, in the current state; policy workloads only when LOADED or not. */
static int run_round(double *out, bool loaded)
{
	int w = 0;

	while (w < NWL) {
		int last = w + 1;

		while (last < NWL && wl[last].policies == wl[w].policies &&
		       wl[last].cg_level == wl[w].cg_level)
			last++;
		if (loaded && policy_fill(wl[w].policies)) {
			fprintf(stderr, "nodefd_bench: cannot fill the policy map: %s\n",
				strerror(errno));
			return -1;
		}
		if (run_some(w, last, wl[w].cg_level, out + w))
			return -1;
		w = last;
	}
	return 0;
}

/*
 * The floor: tests/bench/floor.bpf.c's programs, which decide nothing, on file_open and
 * inode_follow_link, against nothing attached, alternating as above, for the ordinary open and
 * symlink: what any BPF LSM program costs there (the trampoline and the call), the part of
 * nodefd's ratio no change to its programs can take away. @det and @ldd: nodefd's medians
 * detached and loaded, for its cost above the floor.
 */
static int bench_floor(const double *det, const double *ldd)
{
	static double res[2][MAX_ROUNDS][W_SYMLINK + 1];
	double col[MAX_ROUNDS], rat[MAX_ROUNDS], med[2];

	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			int on = (r + k) % 2;
			struct floor *skel = NULL;

			if (on) {
				skel = floor__open_and_load();
				if (!skel || floor__attach(skel)) {
					fprintf(stderr, "nodefd_bench: cannot load and attach the floor programs\n");
					floor__destroy(skel);
					return -1;
				}
				rest();
			}
			if (run_some(W_FAST, W_SYMLINK + 1, 0, res[on][r])) {
				fprintf(stderr, "nodefd_bench: a floor workload failed\n");
				floor__destroy(skel);
				return -1;
			}
			floor__destroy(skel);
			rest();
		}
	}
	printf("\nfloor: programs that pass the verdict on and do nothing else, on file_open and "
	       "inode_follow_link (tests/bench/floor.bpf.c)\n");
	printf("%-42s %22s %22s %8s %17s %8s %10s\n", "workload", "detached", "floor", "ratio",
	       "ratio spread", "nodefd", "above");
	for (int w = W_FAST; w <= W_SYMLINK; w++) {
		char d[32], f[32];

		for (int st = 0; st < 2; st++) {
			for (int r = 0; r < rounds; r++)
				col[r] = res[st][r][w];
			med[st] = median(col, rounds);
			snprintf(st ? f : d, 32, "%.0f [%.0f-%.0f]", med[st], col[0], col[rounds - 1]);
		}
		for (int r = 0; r < rounds; r++)
			rat[r] = res[1][r][w] / res[0][r][w];
		median(rat, rounds);
		printf("%-42s %22s %22s %7.3fx [%.3f-%.3f] %7.3fx %+10.0f\n", wl[w].name, d, f,
		       med[1] / med[0], rat[0], rat[rounds - 1], ldd[w] / det[w], ldd[w] - med[1]);
	}
	printf("(nodefd: its loaded/detached ratio above; above: its loaded median minus the "
	       "floor's, ns/op)\n");
	return 0;
}

/* Events made so far: refusals and audits by every rule. */
static long long events_made(void)
{
	long long sum = 0;

	for (__u32 i = NODEFD_CNT_DENIED; i < NODEFD_CNT_AUDITED + NODEFD_RULE_NR; i++)
		sum += counter(i);
	return sum;
}

/* Counts the newlines waiting in FD (non-blocking) for MS ms. */
static long drain(int fd, double ms)
{
	char buf[65536];
	double t0 = now_ns();
	long lines = 0;
	ssize_t n;

	do {
		n = read(fd, buf, sizeof(buf));
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
		if (n <= 0)
			usleep(1000);
	} while (now_ns() - t0 < ms * 1e6);
	return lines;
}

/*
 * Events per second from the kernel to `nodefdctl events --json`: a child as nobody makes
 * refused reopens at an offered rate for one second, in bursts every 10 ms with sleeps
 * between (a busy generator would starve the reader of the VM's one CPU), while we count the
 * reader's lines; the rate doubles until the drop counter moves. Prints the highest rate that
 * dropped nothing and the rate of the first drop.
 */
static void bench_events(void)
{
	double ok_rate = 0, drop_rate = 0, got_rate = 0;
	int p[2];
	pid_t reader;

	if (pipe(p))
		die("pipe");
	reader = fork();
	if (reader == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execlp("nodefdctl", "nodefdctl", "--json", "events", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	drain(p[0], 500);	/* the start line and what earlier workloads left */
	for (long rate = 250; rate <= 1024000; rate *= 2) {
		long long d0 = counter(NODEFD_CNT_EVENTS_DROPPED), e0 = events_made(), d1, e1;
		double t0 = now_ns(), t1, secs;
		long lines = 0;
		pid_t gen = fork();

		if (gen == 0) {
			char link[64];
			int hold, fd;

			hold = open(wl[W_DENIED].path, O_RDONLY);
			if (hold < 0 || setgroups(0, NULL) || setgid(65534) || setuid(65534))
				_exit(1);
			snprintf(link, sizeof(link), "/proc/self/fd/%d", hold);
			for (long i = 0; i < rate; i++) {
				/* Paced: refusal i is not made before i / rate seconds. */
				double due = t0 + i * 1e9 / rate, now = now_ns();

				if (due - now > 1e7)
					usleep((due - now) / 1000);
				fd = open(link, O_RDWR);
				if (fd >= 0)
					close(fd);
			}
			_exit(0);
		}
		while (waitpid(gen, NULL, WNOHANG) == 0)
			lines += drain(p[0], 10);
		t1 = now_ns();
		/* What is still in the ring buffer or the pipe comes out within 200 ms. */
		lines += drain(p[0], 200);
		d1 = counter(NODEFD_CNT_EVENTS_DROPPED);
		e1 = events_made();
		secs = (t1 - t0) / 1e9;
		printf("  offered %7ld refusals/s: %lld events in %.2f s, %ld lines read, %lld dropped\n",
		       rate, e1 - e0, secs, lines, d1 - d0);
		if (d1 != d0) {
			drop_rate = (e1 - e0) / secs;
			break;
		}
		ok_rate = (e1 - e0) / secs;
		got_rate = lines / secs;
		if (secs > 2)	/* the generator can no longer keep to the rate */
			break;
	}
	kill(reader, SIGTERM);
	waitpid(reader, NULL, 0);
	close(p[0]);
	printf("events: %.0f/s made and %.0f/s read by nodefdctl events --json with no drop",
	       ok_rate, got_rate);
	if (drop_rate)
		printf("; first drop at %.0f/s made\n", drop_rate);
	else
		printf("; no drop up to what the generator can make\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: nodefd_bench [-n ITERATIONS] [-r ROUNDS] [--clock=icount|wall]\n"
		   "                    [--kernel=NAME] [--csv] [--no-events] [--dry-run]\n"
		   "Runs in the VM as root (make bench): detached vs loaded, alternating.\n"
		   "--csv adds, per workload, a line \"csv KERNEL CLOCK WORKLOAD DEPTH POLICIES\n"
		   "CGROUP_LEVEL DETACHED LOADED RATIO RATIO_MIN RATIO_MAX\" for plotting.\n");
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "clock", required_argument, NULL, 'c' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "csv", no_argument, NULL, 'o' },
		{ "no-events", no_argument, NULL, 'E' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *opt = NULL;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "n:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			opt = "--iterations";
			errno = 0;
			iters = strtol(optarg, &end, 10);
			if (errno || *end || iters <= 0 || iters > 100000000)
				goto bad;
			break;
		case 'r':
			opt = "--rounds";
			errno = 0;
			rounds = strtol(optarg, &end, 10);
			if (errno || *end || rounds < 1 || rounds > MAX_ROUNDS)
				goto bad;
			break;
		case 'c':
			opt = "--clock";
			if (strcmp(optarg, "icount") && strcmp(optarg, "wall"))
				goto bad;
			clock_name = optarg;
			break;
		case 'k':
			kernel_name = optarg;
			break;
		case 'o':
			csv = true;
			break;
		case 'E':
			do_events = false;
			break;
		case 'D':
			dry_run = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc)
		goto usage;
	return 0;
bad:
	fprintf(stderr, "nodefd_bench: %s: bad value '%s'\n", opt, optarg);
usage:
	usage(stderr);
	return -1;
}

int main(int argc, char **argv)
{
	static double res[2][MAX_ROUNDS][NWL];
	double col[MAX_ROUNDS], rat[MAX_ROUNDS], med[2][NWL], load_ns[MAX_ROUNDS];
	double mn[2][NWL], mx[2][NWL];
	struct prog pg[16];
	double fo[NWL] = { 0 }, fl[NWL] = { 0 }, t8 = 0;
	int npg = 0, nload = 0;

	if (parse_args(argc, argv))
		return 2;
	if (dry_run) {
		printf("nodefd_bench: %d rounds x %ld operations, clock %s, kernel %s, %d workloads%s\n",
		       rounds, iters, clock_name, kernel_name, NWL, do_events ? ", events" : "");
		return 0;
	}
	for (int w = 0; w < NWL; w++)
		make_file(&wl[w]);
	if (symlink(wl[0].path, "/tmp/nodefd-bench-link") && errno != EEXIST)
		die("symlink");
	cgroup_path(CG_DEEP, (char[512]){ 0 }, 512);
	nodefd("unload 2>/dev/null");

	/*
	 * A round before the rounds, not counted: on Debian 13's kernel the first detached
	 * round after boot came out up to twice as slow as every later one (caches filling),
	 * which put a ratio of 0.5 in the printed spread.
	 */
	if (run_round(res[0][0], false)) {
		fprintf(stderr, "nodefd_bench: a workload failed (warm-up)\n");
		return 1;
	}
	rest();

	for (int r = 0; r < rounds; r++) {
		/* Alternate which state goes first, so drift does not favour one. */
		for (int k = 0; k < 2; k++) {
			int loaded = (r + k) % 2;

			if (loaded) {
				double t0 = now_ns();

				if (nodefd("load")) {
					fprintf(stderr, "nodefd_bench: nodefdctl load failed\n");
					return 1;
				}
				load_ns[nload++] = now_ns() - t0;
				rest();
				if (!npg) {
					npg = progs(pg, 16);
					/* Which mechanism judges a magic link's jump here. */
					fflush(stdout);
					if (system("nodefdctl status | grep '^jump:'"))
						printf("jump: not said by nodefdctl status\n");
				}
			}
			loaded_now = loaded;
			if (run_round(res[loaded][r], loaded)) {
				fprintf(stderr, "nodefd_bench: a workload failed (%s)\n",
					loaded ? "loaded" : "detached");
				return 1;
			}
			if (loaded && nodefd("unload")) {
				fprintf(stderr, "nodefd_bench: nodefdctl unload failed\n");
				return 1;
			}
			rest();
		}
	}

	printf("nodefd_bench on %s: %d rounds x %ld operations, uid 65534, clock: %s\n",
	       kernel_name, rounds, iters, clock_name);
	if (!strcmp(clock_name, "icount"))
		printf("(clock icount: guest ns = executed instructions (QEMU -icount shift=0): "
		       "deterministic, blind to caches and memory latency)\n");
	else
		printf("(clock wall: an emulator's wall time under TCG, noisy: only the ratios mean "
		       "anything)\n");
	printf("ns/op: median [min-max] over the rounds; ratio: loaded/detached medians "
	       "[min-max of the per-round ratios]\n\n");
	printf("%-42s %22s %22s %8s %17s\n", "workload", "detached", "loaded", "ratio",
	       "ratio spread");
	for (int w = 0; w < NWL; w++) {
		char d[32], l[32];

		for (int s = 0; s < 2; s++) {
			for (int r = 0; r < rounds; r++)
				col[r] = res[s][r][w];
			med[s][w] = median(col, rounds);
			mn[s][w] = col[0];
			mx[s][w] = col[rounds - 1];
		}
		for (int r = 0; r < rounds; r++)
			rat[r] = res[1][r][w] / res[0][r][w];
		median(rat, rounds);
		snprintf(d, sizeof(d), "%.0f [%.0f-%.0f]", med[0][w], mn[0][w], mx[0][w]);
		snprintf(l, sizeof(l), "%.0f [%.0f-%.0f]", med[1][w], mn[1][w], mx[1][w]);
		printf("%-42s %22s %22s %7.3fx [%.3f-%.3f]\n", wl[w].name, d, l,
		       med[1][w] / med[0][w], rat[0], rat[rounds - 1]);
		if (csv)
			printf("csv %s %s %d %d %d %d %.1f %.1f %.4f %.4f %.4f\n", kernel_name,
				clock_name, w, wl[w].depth, wl[w].policies, wl[w].cg_level,
				med[0][w], med[1][w], med[1][w] / med[0][w], rat[0],
				rat[rounds - 1]);
	}
	printf("(100000 policies: not measurable, the policy map holds NODEFD_MAX_POLICIES = %d)\n",
	       NODEFD_MAX_POLICIES);
	printf("\ntargets: fast path <= 1.03x, depth 8 <= 1.15x, depth 32 <= 1.40x\n\n");

	{
		double m = median(load_ns, nload);

		printf("nodefdctl load: %.2f s [%.2f-%.2f] (%s), median [min-max] of %d\n",
		       m / 1e9, load_ns[0] / 1e9, load_ns[nload - 1] / 1e9, clock_name, nload);
	}
	printf("%-28s %6s %10s %10s %14s\n", "program", "id", "xlated", "jited", "verified_insns");
	for (int i = 0; i < npg; i++)
		printf("%-28s %6u %10u %10u %14u\n", pg[i].name, pg[i].id, pg[i].xlated,
		       pg[i].jited, pg[i].verified);

	if (bench_floor(med[0], med[1]))
		return 1;

	/*
	 * Profile: the BPF programs' own share of each workload, from bpf_prog_info run_time_ns
	 * and run_cnt with kernel.bpf_stats_enabled=1 (which adds two clock reads per run, so it
	 * is not on while the ratios above are measured).
	 */
	if (nodefd("load"))
		return 1;
	rest();
	npg = progs(pg, 16);
	loaded_now = true;
	{
		FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "w");

		if (!f || fputs("1\n", f) < 0 || fclose(f))
			die("kernel.bpf_stats_enabled");
	}
	printf("\nprofile (loaded, kernel.bpf_stats_enabled=1): ns of BPF program per operation\n");
	printf("%-42s %10s", "workload", "op ns");
	for (int i = 0; i < npg; i++)
		printf(" %18.18s", pg[i].name + 7);
	printf("\n");
	for (int w = 0; w < NWL; w++) {
		struct prog a[16], b[16];
		int na, nb;
		double t;

		if (policy_fill(wl[w].policies))
			return 1;
		na = progs(a, 16);
		if (run_some(w, w + 1, wl[w].cg_level, &t))
			return 1;
		if (w == W_REOPEN8)
			t8 = t;
		nb = progs(b, 16);
		printf("%-42s %10.0f", wl[w].name, t);
		for (int i = 0; i < na && i < nb; i++) {
			/* measure() makes iters / 10 warm-up opens first. */
			double ops = iters + iters / 10;
			double ns = (b[i].run_ns - a[i].run_ns) / ops;

			printf(" %8.0f ns %4.2f/op", ns, (b[i].run_cnt - a[i].run_cnt) / ops);
			if (!strcmp(b[i].name, "nodefd_file_ope"))
				fo[w] = ns;
			else if (!strcmp(b[i].name, "nodefd_inode_fo"))
				fl[w] = ns;
		}
		printf("\n");
	}
	{
		double per_dir = (fo[W_BYNAME64] - fo[W_BYNAME1]) / 63;
		double per_level = (fo[W_POL10_30] - fo[W_POL10_1]) / 29;
		const char *f = "  %-60s %8.0f\n";

		printf("\ncost by component (%s ns of BPF program, from the profile above)\n",
		       clock_name);
		printf(f, "file_open, fast path (an ordinary open)", fo[W_FAST]);
		printf(f, "inode_follow_link, an ordinary symlink", fl[W_SYMLINK]);
		printf(f, "inode_follow_link, /proc/self + the covered fd link", fl[W_REOPEN1]);
		printf(f, "file_open, reopen within the fd's access", fo[W_REOPEN8]);
		printf(f, "file_open, reopen by name, fixed part (depth 0)", fo[W_BYNAME1] - per_dir);
		printf(f, "file_open, reopen by name, per directory (depth 1 to 64)", per_dir);
		printf(f, "policy lookup, per cgroup level (level 1 to 30)", per_level);
		printf(f, "policy map of 4096 entries instead of 10, level 30",
		       fo[W_POL4096_30] - fo[W_POL10_30]);
		printf(f, "refusal and its event (refused minus by-name reopen, d8)",
		       fo[W_DENIED] - fo[W_BYNAME8]);
		printf(f, "inode_follow_link, mid-path link judged (d8)", fl[W_MIDPATH]);
		printf(f, "same-access reopen d8: loaded - detached - BPF (trampolines)",
		       t8 - med[0][W_REOPEN8] - fo[W_REOPEN8] - fl[W_REOPEN8]);
	}
	if (do_events) {
		/* A fresh ring buffer: the profile's refusals filled this one. */
		printf("\n");
		if (nodefd("unload") || nodefd("load"))
			return 1;
		rest();
		bench_events();
	}
	nodefd("unload");
	return 0;
}
