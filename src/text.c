// SPDX-License-Identifier: GPL-2.0
/* text.c - the bottom layer: reasons, quoting and the syntax of cgroup paths, all pure */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

void why_set(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!why || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

size_t text_append(char *buf, size_t size, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (n >= size)
		return n;
	va_start(ap, fmt);
	w = vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return w < 0 ? n : n + (size_t)w;
}

const char *text_quote(const char *s, size_t max, char *buf, size_t size)
{
	size_t i, n = 0;

	if (!size)
		return buf;
	for (i = 0; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		int w;

		if (c < ' ' || c >= 0x7f || c == '\'' || c == '"' || c == '\\')
			w = snprintf(buf + n, size - n, "\\x%02x", c);
		else
			w = snprintf(buf + n, size - n, "%c", c);
		if (w < 0 || (size_t)w >= size - n) {
			buf[n] = '\0';
			return buf;
		}
		n += (size_t)w;
	}
	if (s[i] && size - n > 3)
		snprintf(buf + n, size - n, "...");
	else
		buf[n] = '\0';
	return buf;
}

int cgroup_path_normalize(const char *in, char *out, size_t size, char *why, size_t wsize)
{
	const size_t root_len = strlen(CGROUP_ROOT);
	char q[3 * 64 + 8];
	const char *p = in;
	size_t n = 0, len;

	len = strnlen(in, CGROUP_PATH_MAX);
	if (len >= CGROUP_PATH_MAX) {
		why_set(why, wsize, "cgroup path longer than %d bytes", CGROUP_PATH_MAX - 1);
		return -EINVAL;
	}
	if (!len) {
		why_set(why, wsize, "empty cgroup path");
		return -EINVAL;
	}
	if (in[0] == '/') {
		if (strncmp(in, CGROUP_ROOT, root_len) || (in[root_len] && in[root_len] != '/')) {
			why_set(why, wsize,
				"'%s': not under " CGROUP_ROOT " (give /sys/fs/cgroup/PATH or PATH relative to it)",
				text_quote(in, 64, q, sizeof(q)));
			return -EINVAL;
		}
		p = in + root_len;
	}
	while (*p) {
		const char *c, *end;
		size_t clen;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		end = strchrnul(c, '/');
		p = end;
		clen = (size_t)(end - c);	/* end is at or after c */
		if (clen == 1 && c[0] == '.')
			continue;
		if (clen == 2 && c[0] == '.' && c[1] == '.') {
			why_set(why, wsize, "'%s': '..' is not allowed in a cgroup path",
				text_quote(in, 64, q, sizeof(q)));
			return -EINVAL;
		}
		if (clen > CGROUP_NAME_MAX) {
			why_set(why, wsize, "'%s': a component longer than %d bytes",
				text_quote(c, 64, q, sizeof(q)), CGROUP_NAME_MAX);
			return -EINVAL;
		}
		/* Room for the separator, the component, CGROUP_ROOT "/" in front and the NUL. */
		if (n + 1 + clen + root_len + 2 > CGROUP_PATH_MAX || n + 1 + clen >= size) {
			why_set(why, wsize, "cgroup path longer than %d bytes", CGROUP_PATH_MAX - 1);
			return -EINVAL;
		}
		if (n)
			out[n++] = '/';
		memcpy(out + n, c, clen);
		n += clen;
	}
	if (!size)
		return -EINVAL;
	out[n] = '\0';
	return 0;
}
