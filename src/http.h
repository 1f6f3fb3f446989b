/* SPDX-License-Identifier: GPL-2.0 */
/* http.h - the daemon's optional HTTP endpoint, on libmicrohttpd (http.c) */
#ifndef __NODEFD_HTTP_H
#define __NODEFD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * A page: writes the body of GET @path to @out and returns its HTTP status
 * (404 for a path it does not serve).  Runs in the daemon's own thread, from
 * http_run(): the endpoint never runs beside the daemon's work.
 */
typedef unsigned int (*http_page_fn)(void *ctx, const char *path, FILE *out,
				     const char **content_type);

struct http;

/* Whether this nodefdctl was built with the endpoint (libmicrohttpd). */
extern const bool http_built_in;

/*
 * Listens on @listen ("ADDRESS:PORT", "[IPV6]:PORT"; numeric). NULL with the reason in
 * @why; -EAFNOSUPPORT-like failures to bind are said the same way.
 */
struct http *http_start(const char *listen, http_page_fn page, void *ctx, char *why,
			size_t size);
/* An fd that is readable whenever http_run() has work (for epoll). */
int http_fd(const struct http *h);
/* Serves what is ready, never waiting; also ends connections that timed out. */
void http_run(struct http *h);
void http_stop(struct http *h);

/* The address @listen names: 0, or -EINVAL with the reason in @why (pure; fuzzed). */
struct sockaddr_storage;
int http_parse_listen(const char *listen, struct sockaddr_storage *ss, char *why, size_t size);

#endif /* __NODEFD_HTTP_H */
