// SPDX-License-Identifier: GPL-2.0
/* attach_detach.c - nodefd_stress: load/unload cycles under an open(2) storm (issue 7's Oops) */

/*
 * Run as root in the VM:
 *
 *	nodefd_stress [-l|-z] [-n CYCLES] [-o OPENERS] [-p MAX_PAUSE_MS]
 *
 * (defaults: 20 cycles, one opener per online CPU, pauses up to 200 ms)
 *
 * OPENERS processes open and close files in a tight loop, which runs bpf_lsm_file_open (and the
 * trampoline, when attached) on every vCPU, while the main process runs `nodefdctl load` and
 * `nodefdctl unload` CYCLES times with a random pause of up to MAX_PAUSE_MS between them.
 * Attaching and detaching patches the call in bpf_lsm_file_open's fentry nop with
 * text_poke_bp(), whose int3 a racing opener may hit: that is what issue 7 saw. An Oops shows on
 * the console, where vmtest/run catches it (exit 125); this program goes on as long as it can.
 *
 * Each cycle also checks what `nodefdctl unload` promises: before the unload it reads the ids of
 * the pinned links and of their programs; as soon as the unload has returned, none of them may
 * still be in the kernel (get_fd_by_id -> ENOENT), nor any program named nodefd_*. A last test
 * holds a program while unloading: the unload must then fail (exit 1). TAP output: one test per
 * cycle, "not ok" naming what was still there. -l: see cycle_links(); -z: the same with
 * tests/stress/noop.bpf.c's program, which only passes the verdict on, instead of nodefd's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "noop.skel.h"

#define LINKS_DIR "/sys/fs/bpf/nodefd/links"
#define MAX_LINKS 16

struct ids {
	int n;
	__u32 link[MAX_LINKS];
	__u32 prog[MAX_LINKS];
};

/* Opens done by all openers, in a shared page: proof that they really ran throughout. */
static volatile unsigned long *opens;

static void opener(int i)
{
	static const char *const files[] = { "/etc/passwd", "/etc/group", "/proc/self/stat",
					     "/tmp" };
	const char *f = files[i % 4];
	unsigned long n = 0;
	int fd;

	/* Below nodefdctl: the openers fill every idle moment without starving the cycles. */
	if (nice(19) < 0)
		perror("nice");
	for (;;) {
		fd = open(f, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		if (++n % 1024 == 0)
			__atomic_fetch_add(opens, 1024, __ATOMIC_RELAXED);
	}
}

/* Runs nodefdctl with one argument, its output to /dev/null: its exit status, or -1. */
static int nodefdctl(const char *verb, int quiet)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (quiet) {
			fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
		}
		execlp("nodefdctl", "nodefdctl", verb, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The ids of the pinned links and of the programs they hold; no fd kept open. */
static int ids_read(struct ids *ids)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	ids->n = 0;
	d = opendir(LINKS_DIR);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && ids->n < MAX_LINKS) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", LINKS_DIR, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			ids->link[ids->n] = info.id;
			ids->prog[ids->n] = info.prog_id;
			ids->n++;
		}
		close(fd);
	}
	closedir(d);
	return ids->n ? 0 : -ENOENT;
}

/* Appends to what the names of the objects still in the kernel: 0 if none. */
static int leftovers(const struct ids *ids, char *what, size_t size)
{
	__u32 id = 0;
	int left = 0, fd;

	what[0] = '\0';
	for (int i = 0; i < ids->n; i++) {
		fd = bpf_link_get_fd_by_id(ids->link[i]);
		if (fd >= 0 || errno != ENOENT) {
			snprintf(what + strlen(what), size - strlen(what), " link %u (%s)",
				 ids->link[i], fd >= 0 ? "present" : strerror(errno));
			left++;
		}
		if (fd >= 0)
			close(fd);
		fd = bpf_prog_get_fd_by_id(ids->prog[i]);
		if (fd >= 0 || errno != ENOENT) {
			snprintf(what + strlen(what), size - strlen(what), " prog %u (%s)",
				 ids->prog[i], fd >= 0 ? "present" : strerror(errno));
			left++;
		}
		if (fd >= 0)
			close(fd);
	}
	/* Whatever the pins said: no program of nodefd's at all. */
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, "nodefd_", 7)) {
			snprintf(what + strlen(what), size - strlen(what), " prog %u %s", id,
				 info.name);
			left++;
		}
		close(fd);
	}
	return left;
}

static void usage(void)
{
	fprintf(stderr, "usage: nodefd_stress [-l|-z] [-n CYCLES] [-o OPENERS] [-p MAX_PAUSE_MS]\n");
	exit(2);
}

static void pause_random(int max_ms)
{
	usleep((rand() % (max_ms + 1)) * 1000);
}

/* One cycle of `nodefdctl load`, `nodefdctl unload` and the check that all is gone: 0 if ok. */
static int cycle_nodefdctl(int i, int max_pause)
{
	unsigned long before = *opens;
	char what[2048];
	struct ids ids;
	int rc;

	rc = nodefdctl("load", 1);
	if (rc) {
		printf("not ok %d load (exit %d)\n", i, rc);
		return 1;
	}
	if (ids_read(&ids)) {
		printf("not ok %d no link pinned under %s after load\n", i, LINKS_DIR);
		nodefdctl("unload", 1);
		return 1;
	}
	pause_random(max_pause);
	rc = nodefdctl("unload", 1);
	if (rc) {
		printf("not ok %d unload (exit %d)\n", i, rc);
		return 1;
	}
	if (leftovers(&ids, what, sizeof(what))) {
		printf("not ok %d still in the kernel right after unload:%s\n", i, what);
		return 1;
	}
	printf("ok %d load, unload: %d links and their programs gone (%lu opens meanwhile)\n", i,
	       ids.n, *opens - before);
	return 0;
}

/*
 * The other side of the promise: while something else holds one of the programs (an fd of
 * ours), `nodefdctl unload` must not say it is gone: exit status 1 after its wait, and once the
 * fd is closed everything goes. 0 if so.
 */
static int unload_while_held(int i)
{
	char what[2048];
	struct ids ids;
	int fd, rc;

	if (nodefdctl("load", 1) || ids_read(&ids)) {
		printf("not ok %d unload while a program is held: load failed\n", i);
		nodefdctl("unload", 1);
		return 1;
	}
	fd = bpf_prog_get_fd_by_id(ids.prog[0]);
	rc = nodefdctl("unload", 0);
	if (fd >= 0)
		close(fd);
	/* Our close dropped the last reference: the program goes at once, or nearly. */
	for (int k = 0; k < 200 && leftovers(&ids, what, sizeof(what)); k++)
		usleep(10000);
	if (fd < 0 || rc != 1 || leftovers(&ids, what, sizeof(what))) {
		printf("not ok %d unload while a program is held: exit %d (want 1)%s%s\n", i, rc,
		       fd < 0 ? ", could not hold the program" : "", what);
		return 1;
	}
	printf("ok %d unload while a program is held: exit 1, and gone once let go\n", i);
	return 0;
}

/*
 * -l: the programs of one `nodefdctl load`, kept by their fds after the unload, attached and
 * detached again and again without the verifier's 20 s (under TCG) per load in between: the
 * same text_poke_bp() on bpf_lsm_file_open, many more times per boot. Detaching alternates
 * between closing the link (detached before close(2) returns) and unpinning it (detached later,
 * from a work item after an RCU grace period: what `nodefdctl unload` does).
 */
static int progs_take(int *fds)
{
	struct ids ids;
	int n = 0;

	if (nodefdctl("load", 1) || ids_read(&ids)) {
		printf("Bail out! nodefdctl load failed, or pinned no link\n");
		return -1;
	}
	for (int i = 0; i < ids.n; i++) {
		fds[n] = bpf_prog_get_fd_by_id(ids.prog[i]);
		if (fds[n] >= 0)
			n++;
	}
	/*
	 * Not `nodefdctl unload`, which would wait for the programs we now hold to go: the pins
	 * alone, which detaches the links.
	 */
	if (system("rm -r /sys/fs/bpf/nodefd") || n != ids.n) {
		printf("Bail out! cannot remove the pins, or a program was gone early\n");
		return -1;
	}
	return n;
}

/* -z: the control, noop.bpf.c's program instead of nodefd's; its fd in fds[0]. */
static int noop_take(int *fds, struct noop **skel)
{
	*skel = noop__open_and_load();
	if (!*skel) {
		printf("Bail out! cannot load the no-op program: %s\n", strerror(errno));
		return -1;
	}
	fds[0] = bpf_program__fd((*skel)->progs.noop_file_open);
	return 1;
}

static int cycle_links(int i, const int *fds, int n, int max_pause)
{
	unsigned long before = *opens;
	int links[MAX_LINKS], busy = 0, unpin = i % 2 == 0;
	char pin[64];

	for (int k = 0; k < n; k++) {
		/* An unpinned link of the last cycle may not be detached yet: EBUSY until it is. */
		while ((links[k] = bpf_raw_tracepoint_open(NULL, fds[k])) < 0 && errno == EBUSY &&
		       busy < 10000) {
			busy++;
			usleep(1000);
		}
		if (links[k] < 0) {
			printf("not ok %d attach program %d: %s\n", i, k, strerror(errno));
			while (k--)
				close(links[k]);
			return 1;
		}
	}
	pause_random(max_pause);
	for (int k = 0; k < n; k++) {
		if (unpin) {
			snprintf(pin, sizeof(pin), "/sys/fs/bpf/nodefd_stress_%d", k);
			if (bpf_obj_pin(links[k], pin)) {
				printf("not ok %d pin %s: %s\n", i, pin, strerror(errno));
				unpin = 0;
			}
		}
		close(links[k]);
		if (unpin)
			unlink(pin);
	}
	printf("ok %d attach, detach by %s: %d links (%d ms waiting for the last detach, %lu opens meanwhile)\n",
	       i, unpin ? "unpin" : "close", n, busy, *opens - before);
	return 0;
}

int main(int argc, char **argv)
{
	int cycles = 20, nopeners = -1, max_pause = -1, failed = 0, links = 0, c;
	int fds[MAX_LINKS], n = 0, noop = 0;
	struct noop *skel = NULL;
	pid_t *pids;

	while ((c = getopt(argc, argv, "lzn:o:p:")) != -1) {
		switch (c) {
		case 'l': links = 1; break;
		case 'z': links = noop = 1; break;
		case 'n': cycles = atoi(optarg); break;
		case 'o': nopeners = atoi(optarg); break;
		case 'p': max_pause = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc || cycles < 1)
		usage();
	/* One per CPU: every vCPU keeps entering bpf_lsm_file_open. */
	if (nopeners < 0)
		nopeners = sysconf(_SC_NPROCESSORS_ONLN);
	if (max_pause < 0)
		max_pause = links ? 20 : 200;
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(getpid() ^ time(NULL));
	opens = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc(nopeners + 1, sizeof(*pids));
	if (opens == MAP_FAILED || !pids) {
		perror("nodefd_stress");
		return 1;
	}
	nodefdctl("unload", 1);
	for (int i = 0; i < nopeners; i++) {
		pids[i] = fork();
		if (!pids[i])
			opener(i);
	}

	printf("1..%d\n", cycles + !links);
	if (links)
		n = noop ? noop_take(fds, &skel) : progs_take(fds);
	for (int i = 1; i <= cycles && n >= 0; i++)
		failed += links ? cycle_links(i, fds, n, max_pause) : cycle_nodefdctl(i, max_pause);
	if (n < 0)
		failed = cycles;
	if (!links)
		failed += unload_while_held(cycles + 1);

	for (int i = 0; i < nopeners; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	noop__destroy(skel);
	printf("# %d of %d tests failed; %lu opens in all\n", failed, cycles + !links, *opens);
	return failed ? 1 : 0;
}
