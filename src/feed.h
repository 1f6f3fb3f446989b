/* SPDX-License-Identifier: GPL-2.0 */
/* feed.h - the daemon's events, passed on to local readers over a root-only socket (feed.c) */
#ifndef __NODEFD_FEED_H
#define __NODEFD_FEED_H

/*
 * The ring buffer has one reader: each record goes to whoever consumes it
 * first.  While the daemon runs it is that reader, and it passes every
 * event and summary it reads on to the clients of FEED_PATH, a
 * SOCK_SEQPACKET socket only root can connect to (mode 0600, and the
 * peer's uid checked), one record per packet.  `nodefdctl events` is such
 * a client whenever a daemon runs; it applies its filters itself.
 *
 * The daemon never waits for a client: a record a client's socket has no
 * room for is counted for that client, and the count comes to it in a
 * FEED_LOST record before the next one that fits.  A client is told, not
 * left to guess.
 */

#include <stdbool.h>
#include <linux/types.h>

#include "nodefd.h"

#define FEED_PATH RUN_DIR "/events.sock"
#define FEED_CLIENTS_MAX 16

enum feed_type {
	FEED_EVENT = 1,		/* @ev */
	FEED_HELD = 2,		/* @held: a summary of what the rate limit held back */
	FEED_LOST = 3,		/* @lost: records this client had no room for */
	FEED_HELLO = 4,		/* the first: the client is taken, every record from here on */
};

struct feed_record {
	__u32 type;
	__u32 abi;		/* NODEFD_ABI_VERSION of the daemon */
	union {
		struct nodefd_event ev;
		struct {
			struct nodefd_event_source src;
			__u64 count;
			__u64 total;
		} held;
		__u64 lost;
	};
};

struct feed_client {
	int fd;
	__u64 lost;		/* records not sent since the last that was */
};

struct feed {
	int fd;			/* listening; -1 without */
	struct feed_client clients[FEED_CLIENTS_MAX];
	unsigned int n;
};

/* Listen on FEED_PATH: 0, or -errno with the reason in @why (the daemon goes on without). */
int feed_listen(struct feed *f, char *why, size_t size);
/* A client knocks: take it if it is root and there is room. */
void feed_accept(struct feed *f);
/* @rec, @len bytes of it, to every client; never blocks. */
void feed_send(struct feed *f, struct feed_record *rec, size_t len);
void feed_close(struct feed *f);

/*
 * A client: the feed's fd once the daemon took it (its FEED_HELLO came
 * within @timeout_ms), or -errno: -ENOENT, -ECONNREFUSED (no daemon serves
 * one), -ETIMEDOUT, -EPROTO (a daemon of another ABI).
 */
int feed_connect(int timeout_ms);

#endif /* __NODEFD_FEED_H */
