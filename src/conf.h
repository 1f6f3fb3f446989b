/* SPDX-License-Identifier: GPL-2.0 */
/* conf.h - the daemon's own settings: /etc/nodefd/nodefd.conf (conf.c, nodefd.conf(5)) */
#ifndef __NODEFD_CONF_H
#define __NODEFD_CONF_H

#include <stdbool.h>
#include <stddef.h>

#define CONF_FILE_DEFAULT "/etc/nodefd/nodefd.conf"
#define CONF_LISTEN_MAX 128	/* bytes of an address and port */

struct daemon_conf {
	/* [metrics] listen: "ADDRESS:PORT" or "[IPV6]:PORT"; "" for no endpoint (the default) */
	char metrics_listen[CONF_LISTEN_MAX];
};

/*
 * Reads @file into @c (defaults first): 0; -ENOENT when it does not exist (@c then holds the
 * defaults; only an error if the file was named); else -errno with "FILE:LINE: reason" in @why.
 */
int daemon_conf_read(const char *file, struct daemon_conf *c, char *why, size_t size);

#endif /* __NODEFD_CONF_H */
