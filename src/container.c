// SPDX-License-Identifier: GPL-2.0
/* container.c - a cgroup path read for the container, pod and unit it names */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "container.h"

/* One component of the path: [s, s + len). */
struct comp {
	const char *s;
	size_t len;
};

static bool has_prefix(struct comp c, const char *prefix)
{
	size_t n = strlen(prefix);

	return c.len >= n && !memcmp(c.s, prefix, n);
}

static bool has_suffix(struct comp c, const char *suffix)
{
	size_t n = strlen(suffix);

	return c.len >= n && !memcmp(c.s + c.len - n, suffix, n);
}

static bool is_equal(struct comp c, const char *word)
{
	return c.len == strlen(word) && !memcmp(c.s, word, c.len);
}

/* An engine's id: 64 lowercase hexadecimal digits. */
static bool is_hex_id(const char *s, size_t len)
{
	if (len != 64)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* [s, s + len) into @buf, with systemd's "\x2d" escapes of unit names undone. */
static void copy_unescaped(char *buf, size_t size, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < size; i++) {
		unsigned int x;

		if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' && sscanf(s + i + 2, "%2x", &x) == 1 &&
		    x > 0x1f && x < 0x7f) {
			buf[n++] = (char)x;
			i += 3;
			continue;
		}
		buf[n++] = s[i];
	}
	buf[n] = '\0';
}

/* "PREFIX" ID "SUFFIX" with a hex id: the id into @c, true. */
static bool engine_scope(struct comp c, const char *prefix, const char *suffix,
			 const char *runtime, struct container_info *info)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	if (!has_prefix(c, prefix) || !has_suffix(c, suffix) || c.len < pl + sl ||
	    !is_hex_id(c.s + pl, c.len - pl - sl))
		return false;
	info->runtime = runtime;
	copy_unescaped(info->id, sizeof(info->id), c.s + pl, c.len - pl - sl);
	return true;
}

/* A name between @prefix and @suffix (a machine's, unescaped): into @c, true. */
static bool named_unit(struct comp c, const char *prefix, const char *suffix,
		       const char *runtime, struct container_info *info)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	if (!has_prefix(c, prefix) || !has_suffix(c, suffix) || c.len <= pl + sl)
		return false;
	info->runtime = runtime;
	copy_unescaped(info->id, sizeof(info->id), c.s + pl, c.len - pl - sl);
	return true;
}

/* A container named by component @c (its parent @parent, or none), into @info. */
static bool container_comp(struct comp c, const struct comp *parent, bool in_kubepods,
			   struct container_info *info)
{
	if (engine_scope(c, "libpod-", ".scope", "podman", info) ||
	    engine_scope(c, "docker-", ".scope", "docker", info) ||
	    engine_scope(c, "cri-containerd-", ".scope", "containerd", info) ||
	    engine_scope(c, "crio-", ".scope", "cri-o", info) ||
	    named_unit(c, "systemd-nspawn@", ".service", "nspawn", info) ||
	    named_unit(c, "machine-", ".scope", "machined", info) ||
	    named_unit(c, "lxc.payload.", "", "lxc", info))
		return true;
	/* cgroupfs drivers: the bare id below docker/, libpod_parent/ or a pod. */
	if (!is_hex_id(c.s, c.len))
		return false;
	if (parent && is_equal(*parent, "docker"))
		info->runtime = "docker";
	else if (parent && is_equal(*parent, "libpod_parent"))
		info->runtime = "podman";
	else if (in_kubepods)
		info->runtime = "cri";
	else
		return false;
	copy_unescaped(info->id, sizeof(info->id), c.s, c.len);
	return true;
}

/* kubepods-QOS-podUID.slice, kubepods-podUID.slice (systemd) or podUID (cgroupfs). */
static bool pod_comp(struct comp c, struct container_info *info)
{
	const char *p = NULL;
	size_t n = 0;

	if (has_prefix(c, "kubepods") && has_suffix(c, ".slice")) {
		for (size_t i = 0; i + 4 <= c.len; i++) {
			if (!memcmp(c.s + i, "-pod", 4)) {
				p = c.s + i + 4;
				n = c.len - (i + 4) - strlen(".slice");
			}
		}
	} else if (has_prefix(c, "pod") && c.len == 3 + 36) {
		p = c.s + 3;
		n = 36;
	}
	if (!p || n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i] == '_' ? '-' : p[i];	/* systemd's slices spell '-' as '_' */

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || ch == '-'))
			return false;
		info->pod_uid[i] = ch;
	}
	info->pod_uid[n] = '\0';
	return true;
}

void container_from_cgroup(const char *path, struct container_info *c)
{
	struct comp prev = { NULL, 0 }, cur;
	bool in_kubepods = false;
	const char *s = path;

	memset(c, 0, sizeof(*c));
	while (*s) {
		struct container_info found = { 0 };

		while (*s == '/')
			s++;
		if (!*s)
			break;
		cur.s = s;
		cur.len = strcspn(s, "/");
		s += cur.len;
		if (has_prefix(cur, "kubepods"))
			in_kubepods = true;
		pod_comp(cur, c);
		if (container_comp(cur, prev.s ? &prev : NULL, in_kubepods, &found)) {
			c->runtime = found.runtime;	/* the innermost wins */
			memcpy(c->id, found.id, sizeof(c->id));
		}
		if ((has_suffix(cur, ".service") || has_suffix(cur, ".scope")) &&
		    cur.len < sizeof(c->unit)) {
			memcpy(c->unit, cur.s, cur.len);	/* as systemctl names it: escaped */
			c->unit[cur.len] = '\0';
		}
		prev = cur;
	}
}
