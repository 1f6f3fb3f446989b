// SPDX-License-Identifier: GPL-2.0
/* nodefd_bench.c - what nodefd costs: detached vs loaded, alternating, in one boot */

/*
 * Run as root in the VM (make bench). Each round measures every workload twice, once with
 * nodefd detached and once loaded and enforcing, in alternating order, as an unprivileged user
 * (uid 65534) so that the ancestor checks take the full mode/group path. Per workload it prints
 * the median ns per operation of each state and their ratio. Under TCG the absolute figures are
 * those of an emulator; only the ratios mean anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 7
#define WORKLOADS 4

static const char *const names[WORKLOADS] = {
	"open+close, ordinary file (fast path)",
	"reopen via /proc/self/fd, depth 1",
	"reopen via /proc/self/fd, depth 8",
	"reopen via /proc/self/fd, depth 32",
};
static const int depths[WORKLOADS] = { 0, 1, 8, 32 };
static char paths[WORKLOADS][512];
static long iters = 20000;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A file with DEPTH ancestor directories: "/" and DEPTH - 1 below it. */
static void make_tree(int w)
{
	char *p = paths[w];
	int fd;

	strcpy(p, depths[w] <= 1 ? "" : "/nodefd-bench");
	if (depths[w] > 1)
		mkdir(p, 0755);
	for (int i = 2; i < depths[w]; i++) {
		snprintf(p + strlen(p), sizeof(paths[w]) - strlen(p), "/%d", i);
		mkdir(p, 0755);
	}
	snprintf(p + strlen(p), sizeof(paths[w]) - strlen(p), "/bench-file-%d", depths[w]);
	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) {
		perror(p);
		exit(1);
	}
	close(fd);
}

/* One measurement of workload W, in ns per operation, as the calling (unprivileged) user. */
static double measure(int w)
{
	char link[64];
	double t0;
	int fd, hold = -1;

	if (depths[w]) {
		hold = open(paths[w], O_RDONLY);
		if (hold < 0)
			return -1;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", hold);
	}
	t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		fd = open(depths[w] ? link : paths[w], O_RDONLY);
		if (fd < 0)
			return -1;
		close(fd);
	}
	t0 = (now_ns() - t0) / iters;
	if (hold >= 0)
		close(hold);
	return t0;
}

/* All workloads once, in a child that drops to nobody; results through a pipe. */
static int run_all(double out[WORKLOADS])
{
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		double r[WORKLOADS];

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(1);
		for (int w = 0; w < WORKLOADS; w++)
			r[w] = measure(w);
		_exit(write(p[1], r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], out, sizeof(double) * WORKLOADS) != sizeof(double) * WORKLOADS)
		status = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	for (int w = 0; w < WORKLOADS; w++)
		if (out[w] < 0)
			return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int nodefd(const char *verb)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "nodefdctl %s >/dev/null", verb);
	return system(cmd);
}

int main(int argc, char **argv)
{
	double res[2][ROUNDS][WORKLOADS], col[ROUNDS], med[2][WORKLOADS];

	if (argc > 1)
		iters = atol(argv[1]);
	if (iters <= 0) {
		fprintf(stderr, "usage: nodefd_bench [ITERATIONS]\n");
		return 2;
	}
	for (int w = 0; w < WORKLOADS; w++)
		make_tree(w);
	nodefd("unload 2>/dev/null");

	for (int r = 0; r < ROUNDS; r++) {
		/* Alternate which state goes first, so drift does not favour one. */
		for (int k = 0; k < 2; k++) {
			int loaded = (r + k) % 2;

			if (loaded && nodefd("load")) {
				fprintf(stderr, "nodefd_bench: nodefdctl load failed\n");
				return 1;
			}
			if (run_all(res[loaded][r])) {
				fprintf(stderr, "nodefd_bench: a workload failed (%s)\n",
					loaded ? "loaded" : "detached");
				return 1;
			}
			if (loaded && nodefd("unload")) {
				fprintf(stderr, "nodefd_bench: nodefdctl unload failed\n");
				return 1;
			}
		}
	}

	printf("nodefd_bench: %d rounds x %ld operations, uid 65534, medians in ns/op\n", ROUNDS,
	       iters);
	printf("(under TCG the ns are an emulator's; only the ratios mean anything)\n\n");
	printf("%-40s %12s %12s %8s\n", "workload", "detached", "loaded", "ratio");
	for (int s = 0; s < 2; s++)
		for (int w = 0; w < WORKLOADS; w++) {
			for (int r = 0; r < ROUNDS; r++)
				col[r] = res[s][r][w];
			med[s][w] = median(col, ROUNDS);
		}
	for (int w = 0; w < WORKLOADS; w++)
		printf("%-40s %12.0f %12.0f %7.3fx\n", names[w], med[0][w], med[1][w],
		       med[1][w] / med[0][w]);
	printf("\ntargets: fast path <= 1.03x, depth 8 <= 1.15x, depth 32 <= 1.40x\n");
	return 0;
}
