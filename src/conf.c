// SPDX-License-Identifier: GPL-2.0
/* conf.c - the daemon's own settings, apart from the policy: /etc/nodefd/nodefd.conf */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ini.h>

#include "nodefdctl.h"
#include "conf.h"

struct conf_parse {
	struct daemon_conf *c;
	const char *qfile;
	char *why;
	size_t size;
	bool failed;
};

static int conf_handler(void *arg, const char *section, const char *key, const char *value)
{
	struct conf_parse *p = arg;
	char qkey[3 * 32 + 8], qsec[3 * 32 + 8];

	if (!strcmp(section, "metrics") && !strcmp(key, "listen")) {
		if (strlen(value) >= sizeof(p->c->metrics_listen)) {
			snprintf(p->why, p->size, "[metrics] listen: longer than %d bytes",
				 CONF_LISTEN_MAX - 1);
			p->failed = true;
			return 0;
		}
		snprintf(p->c->metrics_listen, sizeof(p->c->metrics_listen), "%s", value);
		return 1;
	}
	/* A misspelt key would be a setting silently not made: refused, as the policy file does. */
	if (strcmp(section, "metrics"))
		snprintf(p->why, p->size, "unknown section [%s] (there is [metrics])",
			 text_quote(section, 32, qsec, sizeof(qsec)));
	else
		snprintf(p->why, p->size, "unknown key '%s' in [metrics] (there is listen)",
			 text_quote(key, 32, qkey, sizeof(qkey)));
	p->failed = true;
	return 0;
}

int daemon_conf_read(const char *file, struct daemon_conf *c, char *why, size_t size)
{
	char qfile[3 * 256 + 8], reason[REASON_MAX];
	struct conf_parse p = { .c = c, .qfile = qfile, .why = reason, .size = sizeof(reason) };
	char *text = NULL, *str;
	size_t len = 0;
	int err, rc;

	memset(c, 0, sizeof(*c));
	text_quote(file, 256, qfile, sizeof(qfile));
	err = root_file_read(file, qfile, &text, &len, why, size);
	if (err)
		return err;
	str = strndup(text, len);
	free(text);
	if (!str) {
		snprintf(why, size, "%s: out of memory", qfile);
		return -ENOMEM;
	}
	if (strlen(str) != len) {
		snprintf(why, size, "%s: holds a NUL byte", qfile);
		free(str);
		return -EINVAL;
	}
	/* inih's switches are globals, set by each parser for its own syntax. */
	ini_allow_multiline = false;
	ini_allow_bom = true;
	ini_allow_inline_comments = false;
	ini_allow_no_value = false;
	ini_stop_on_first_error = true;
	rc = ini_parse_string(str, conf_handler, &p);
	free(str);
	if (rc == 0)
		return 0;
	if (rc > 0 && !p.failed)
		snprintf(reason, sizeof(reason), "not a [section], a KEY = VALUE line or a comment");
	else if (rc < 0)
		snprintf(reason, sizeof(reason), "cannot parse (inih error %d)", rc);
	snprintf(why, size, "%s:%d: %s", qfile, rc > 0 ? rc : 0, reason);
	return -EINVAL;
}
