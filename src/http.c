// SPDX-License-Identifier: GPL-2.0
/*
 * http.c - the daemon's optional HTTP endpoint (metrics, health), on libmicrohttpd
 *
 * libmicrohttpd runs in the daemon's own thread, in its "external epoll" mode: its
 * epoll fd sits in the daemon's epoll set and MHD_run() serves what is ready without
 * waiting, so a page is made from the daemon's state with no lock and no second thread,
 * and a slow or stalled client costs a connection slot, never the daemon's time.
 *
 * The static build (the test VMs' initramfs has no libc) cannot link libmicrohttpd,
 * whose static archive needs GnuTLS's: it is built without the endpoint (NODEFD_HTTP
 * unset) and says so when one is asked for. The packaged build has it.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nodefdctl.h"
#include "http.h"

int http_parse_listen(const char *listen, struct sockaddr_storage *ss, char *why, size_t size)
{
	char host[INET6_ADDRSTRLEN + 1], q[3 * 64 + 8];
	const char *colon, *p;
	unsigned long port = 0;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');

		if (!end || end[1] != ':')
			goto bad;
		hl = (size_t)(end - listen - 1);
		if (hl >= sizeof(host))
			goto bad;
		memcpy(host, listen + 1, hl);
		host[hl] = '\0';
		colon = end + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			goto bad;
		hl = (size_t)(colon - listen);
		if (hl >= sizeof(host) || memchr(listen, ':', hl))
			goto bad;
		memcpy(host, listen, hl);
		host[hl] = '\0';
	}
	p = colon + 1;
	if (!*p || strlen(p) > 5)
		goto bad;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			goto bad;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (port < 1 || port > 65535)
		goto bad;
	if (listen[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			goto bad;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((unsigned short)port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			goto bad;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((unsigned short)port);
	}
	return 0;
bad:
	snprintf(why, size,
		 "'%s': not ADDRESS:PORT (a numeric IPv4 address, or an IPv6 one in brackets, and a port 1-65535: 127.0.0.1:9847, [::1]:9847, 0.0.0.0:9847)",
		 text_quote(listen, 64, q, sizeof(q)));
	return -EINVAL;
}

#ifdef NODEFD_HTTP

#include <microhttpd.h>

const bool http_built_in = true;

struct http {
	struct MHD_Daemon *mhd;
	http_page_fn page;
	void *ctx;
};

static enum MHD_Result http_reply(struct MHD_Connection *conn, unsigned int status,
				  char *body, size_t len, const char *type)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url,
				   const char *method, const char *version,
				   const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	const char *type = "text/plain; charset=utf-8";
	struct http *h = cls;
	unsigned int status;
	size_t len = 0;
	char *body = NULL;
	FILE *out;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		body = strdup("only GET and HEAD\n");
		return body ? http_reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, body, strlen(body), type) :
			      MHD_NO;
	}
	if (*upload_data_size)
		return MHD_NO;	/* a GET with a body: not ours to accept */
	out = open_memstream(&body, &len);
	if (!out)
		return MHD_NO;
	status = h->page(h->ctx, url, out, &type);
	if (fclose(out)) {
		free(body);
		return MHD_NO;
	}
	return http_reply(conn, status, body, len, type);
}

struct http *http_start(const char *listen, http_page_fn page, void *ctx, char *why, size_t size)
{
	struct sockaddr_storage ss;
	unsigned int flags = MHD_USE_EPOLL;
	struct http *h;
	int err;

	err = http_parse_listen(listen, &ss, why, size);
	if (err)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	h->page = page;
	h->ctx = ctx;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/*
	 * Bounded: a handful of scrapers and probes, never a crowd. A connection that sends
	 * nothing for 10 s is closed; its port is ours again at once after a restart.
	 */
	errno = 0;
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, http_access, h,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)16,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)8,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				  MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
				  MHD_OPTION_END);
	if (!h->mhd) {
		err = errno;
		snprintf(why, size, "cannot listen on %s: %s", listen,
			 err ? errstr(-err) : "libmicrohttpd refused to start");
		free(h);
		return NULL;
	}
	return h;
}

int http_fd(const struct http *h)
{
	const union MHD_DaemonInfo *info;

	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	return info ? info->epoll_fd : -1;
}

void http_run(struct http *h)
{
	MHD_run(h->mhd);
}

void http_stop(struct http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->mhd);
	free(h);
}

#else /* !NODEFD_HTTP */

const bool http_built_in = false;

struct http *http_start(const char *listen, http_page_fn page, void *ctx, char *why, size_t size)
{
	struct sockaddr_storage ss;

	(void)page;
	(void)ctx;
	if (http_parse_listen(listen, &ss, why, size))
		return NULL;
	snprintf(why, size,
		 "this nodefdctl was built without the HTTP endpoint (a static build cannot link libmicrohttpd): use the packaged nodefdctl, or 'nodefdctl metrics'");
	return NULL;
}

int http_fd(const struct http *h)
{
	(void)h;
	return -1;
}

void http_run(struct http *h)
{
	(void)h;
}

void http_stop(struct http *h)
{
	(void)h;
}

#endif /* NODEFD_HTTP */
