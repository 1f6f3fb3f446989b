// SPDX-License-Identifier: GPL-2.0
/* feed.c - the daemon's events for local readers: a SOCK_SEQPACKET socket, root only */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "nodefdctl.h"
#include "feed.h"

static void feed_addr(struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", FEED_PATH);
}

int feed_listen(struct feed *f, char *why, size_t size)
{
	struct sockaddr_un sa;
	mode_t old;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->fd < 0) {
		err = -errno;
		why_set(why, size, "cannot make the events socket: %s", errstr(err));
		return err;
	}
	feed_addr(&sa);
	/* The daemon lock is held: a socket there is a dead daemon's. */
	unlink(FEED_PATH);
	old = umask(0177);	/* 0600 from the start: no moment others could connect */
	err = bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!err && listen(f->fd, FEED_CLIENTS_MAX))
		err = -errno;
	if (err) {
		why_set(why, size, "%s: cannot listen for event readers: %s", FEED_PATH, errstr(err));
		close(f->fd);
		f->fd = -1;
	}
	return err;
}

static void client_drop(struct feed *f, unsigned int i)
{
	close(f->clients[i].fd);
	f->clients[i] = f->clients[--f->n];
}

/* 0 sent, -EAGAIN no room now, another -errno: the client is gone. */
static int client_send(struct feed_client *c, const void *buf, size_t len)
{
	if (send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len)
		return 0;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? -EAGAIN : -errno;
}

/* Clients that hung up while nothing was sent to them: their places back. */
static void feed_prune(struct feed *f)
{
	char c;

	for (unsigned int i = 0; i < f->n;) {
		if (recv(f->clients[i].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
			client_drop(f, i);
		else
			i++;
	}
}

void feed_accept(struct feed *f)
{
	struct feed_record hello = { .type = FEED_HELLO };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	while ((fd = accept4(f->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (f->n == FEED_CLIENTS_MAX)
			feed_prune(f);
		/* Root only: the socket's mode says so, the peer's credentials again. */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != 0 ||
		    f->n == FEED_CLIENTS_MAX) {
			close(fd);
			continue;
		}
		f->clients[f->n].fd = fd;
		f->clients[f->n].lost = 0;
		f->n++;
		hello.abi = NODEFD_ABI_VERSION;
		if (client_send(&f->clients[f->n - 1], &hello, offsetof(struct feed_record, ev)))
			client_drop(f, f->n - 1);
	}
}

void feed_send(struct feed *f, struct feed_record *rec, size_t len)
{
	struct feed_record lost = { .type = FEED_LOST, .abi = NODEFD_ABI_VERSION };
	size_t lost_len = offsetof(struct feed_record, lost) + sizeof(lost.lost);

	rec->abi = NODEFD_ABI_VERSION;
	for (unsigned int i = 0; i < f->n;) {
		struct feed_client *c = &f->clients[i];
		int err = 0;

		if (c->lost) {
			lost.lost = c->lost;
			err = client_send(c, &lost, lost_len);
			if (!err)
				c->lost = 0;
		}
		if (!err)
			err = client_send(c, rec, len);
		if (err == -EAGAIN) {
			c->lost++;
		} else if (err) {
			client_drop(f, i);
			continue;
		}
		i++;
	}
}

void feed_close(struct feed *f)
{
	while (f->n)
		client_drop(f, 0);
	if (f->fd >= 0) {
		close(f->fd);
		unlink(FEED_PATH);
	}
	f->fd = -1;
}

int feed_connect(int timeout_ms)
{
	struct pollfd pfd = { .events = POLLIN };
	struct feed_record hello;
	struct sockaddr_un sa;
	ssize_t n;
	int fd, err;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	feed_addr(&sa);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	pfd.fd = fd;
	err = poll(&pfd, 1, timeout_ms);
	if (err <= 0) {
		close(fd);
		return err ? -errno : -ETIMEDOUT;
	}
	n = recv(fd, &hello, sizeof(hello), 0);
	if (n < (ssize_t)offsetof(struct feed_record, ev) || hello.type != FEED_HELLO ||
	    hello.abi != NODEFD_ABI_VERSION) {
		close(fd);
		return n < 0 ? -errno : n == 0 ? -ECONNREFUSED : -EPROTO;
	}
	return fd;
}
