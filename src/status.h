/* SPDX-License-Identifier: GPL-2.0 */
/* status.h - what status and metrics read of a loaded nodefd (status.c), and the daemon's
 * record of its policy file (metrics.c) */
#ifndef __NODEFD_STATUS_H
#define __NODEFD_STATUS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "nodefd.h"
#include "nodefdctl.h"	/* RUN_DIR */

#define MAX_LINKS 16

struct status_prog {
	char name[NAME_MAX + 1];	/* the pin's name: the program's full name */
	char prog_name[BPF_OBJ_NAME_LEN];	/* the kernel's, cut at 15 characters */
	__u32 link_id;
	__u32 prog_id;
	__u32 attach_type;	/* a tracing link's (enum bpf_attach_type), else 0 */
	int err;
};

/* How a magic link's jump is judged (bpf/jump.bpf.h), from how nodefd_nd_jump_link is attached. */
enum jump_mechanism {
	JUMP_UNKNOWN,	/* not loaded, or the link unreadable */
	JUMP_HOOK,	/* the kernel's LSM hook at the jump: refused there */
	JUMP_GUARD,	/* fentry on nd_jump_link: refused after the jump */
};

#define MAX_PINS 32

struct status_pin {
	char name[NAME_MAX + 1];
	__u32 map_id;		/* 0: not a map (or unreadable) */
};

struct status {
	char lsm[512];
	int lsm_err;
	bool loaded;
	int abi;
	bool enabled;
	__u64 dropped_reported;
	__u64 counters[NODEFD_CNT_NR];
	__u32 policies;
	__u32 policy_map_id;
	pid_t daemon_pid;
	struct status_prog progs[MAX_LINKS];
	int nprogs;
	enum jump_mechanism jump;
	struct status_pin pins[MAX_PINS];
	int npins;
};

/* Fills @s for @verb: 0, or -errno having said why. */
int status_gather(struct status *s, const char *verb);

/*
 * What the running daemon did with its policy file, kept in POLICY_STATE_PATH
 * for `nodefdctl metrics` (the daemon's own endpoint has it in memory).
 * Times are CLOCK_REALTIME seconds, 0 for never.
 */
#define POLICY_STATE_PATH RUN_DIR "/policy.state"

struct policy_state {
	pid_t pid;		/* the daemon it is about */
	__u64 generation;	/* policy maps swapped in since the daemon started */
	__u64 loads_ok;		/* reads of the file applied (the start's, SIGHUP's) */
	__u64 loads_failed;	/* reads of the file rejected */
	__u64 refreshes;	/* applied again as cgroups came or went */
	bool last_ok;		/* the last read of the file was applied */
	__s64 last_load_s;	/* when the file was last read */
	__s64 last_ok_s;	/* when it was last applied */
};

int policy_state_write(const struct policy_state *ps);
int policy_state_read(struct policy_state *ps);

/* The metrics in Prometheus' text format; @ps NULL when no daemon's record is known. */
void metrics_write(FILE *f, const struct status *s, const struct policy_state *ps);

#endif /* __NODEFD_STATUS_H */
