// SPDX-License-Identifier: GPL-2.0
/* heldback.c - summary records of the events the rate limit held back */

#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "nodefdctl.h"

/*
 * The BPF side counts, per source, every event it held back (event_sources, held; it only
 * grows). The reader that sweeps reports what each source's count gained since the last
 * report, and writes down what it reported in event_reported, which no program reads: a
 * flood that stops is reported even when its source never sends another event, and a reader
 * that starts later reports what no one reported before it. A source's entry made again
 * (the LRU evicted it) starts from nothing: its count is then reported whole.
 */

#define PRUNE_BATCH 256

int heldback_open(struct heldback *h, const char *verb)
{
	h->sources_fd = pin_map_open(verb, "event_sources", BPF_MAP_TYPE_LRU_HASH,
				     sizeof(struct nodefd_event_rate));
	if (h->sources_fd < 0)
		return h->sources_fd;
	h->reported_fd = pin_map_open(verb, "event_reported", BPF_MAP_TYPE_HASH, sizeof(__u64));
	if (h->reported_fd < 0) {
		close(h->sources_fd);
		h->sources_fd = -1;
		return h->reported_fd;
	}
	return 0;
}

void heldback_close(struct heldback *h)
{
	if (h->sources_fd >= 0)
		close(h->sources_fd);
	if (h->reported_fd >= 0)
		close(h->reported_fd);
	h->sources_fd = h->reported_fd = -1;
}

/* Forget what was reported for sources whose entry is gone. */
static void heldback_prune(struct heldback *h)
{
	struct nodefd_event_source key, next, gone[PRUNE_BATCH];
	struct nodefd_event_rate rate;
	void *prev = NULL;
	int n = 0;

	while (n < PRUNE_BATCH && !bpf_map_get_next_key(h->reported_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(h->sources_fd, &key, &rate) && errno == ENOENT)
			gone[n++] = key;
	}
	for (int i = 0; i < n; i++)
		bpf_map_delete_elem(h->reported_fd, &gone[i]);
}

int heldback_sweep(struct heldback *h, heldback_fn fn, void *ctx)
{
	struct nodefd_event_source key, next;
	struct nodefd_event_rate rate;
	void *prev = NULL;
	__u64 reported;
	int err = 0;

	/* A bound: under churn a key evicted while we stand on it restarts the walk. */
	for (int i = 0; i < 2 * NODEFD_EVENT_SOURCES; i++) {
		if (bpf_map_get_next_key(h->sources_fd, prev, &next))
			break;
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(h->sources_fd, &key, &rate))
			continue;	/* evicted meanwhile */
		if (bpf_map_lookup_elem(h->reported_fd, &key, &reported))
			reported = 0;
		if (rate.held == reported)
			continue;
		/* Written down first: what is said once is not said again. */
		if (bpf_map_update_elem(h->reported_fd, &key, &rate.held, BPF_ANY)) {
			err = -errno;
			continue;
		}
		fn(ctx, &key, rate.held > reported ? rate.held - reported : rate.held, rate.held);
	}
	heldback_prune(h);
	return err;
}
