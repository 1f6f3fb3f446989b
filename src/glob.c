// SPDX-License-Identifier: GPL-2.0
/* glob.c - cgroup path patterns: fnmatch(3) per component, "**" across them */

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "glob.h"

/*
 * Paths and patterns are walked a component at a time, in place: @p and
 * @s point at the start of a component, or at the NUL when none is left
 * (normalised paths have no empty component and no trailing slash).
 */

static const char *comp_end(const char *c)
{
	return strchrnul(c, '/');
}

static const char *comp_next(const char *end)
{
	return *end ? end + 1 : end;
}

static bool comp_is_double_star(const char *c, const char *end)
{
	return end - c == 2 && c[0] == '*' && c[1] == '*';
}

/* One pattern component against one name, by fnmatch(3). */
static bool comp_match(const char *p, const char *pe, const char *s, const char *se)
{
	char pat[CGROUP_NAME_MAX + 1], name[CGROUP_NAME_MAX + 1];
	size_t plen = (size_t)(pe - p), slen = (size_t)(se - s);

	if (plen > CGROUP_NAME_MAX || slen > CGROUP_NAME_MAX)
		return false;
	memcpy(pat, p, plen);
	pat[plen] = '\0';
	memcpy(name, s, slen);
	name[slen] = '\0';
	return fnmatch(pat, name, FNM_NOESCAPE) == 0;
}

bool glob_is_pattern(const char *path)
{
	return strpbrk(path, "*?[") != NULL;
}

/* The end of the bracket expression opening at @c ('['), within @end; NULL if unclosed. */
static const char *bracket_end(const char *c, const char *end)
{
	const char *q = c + 1;

	if (q < end && (*q == '!' || *q == '^'))
		q++;
	if (q < end && *q == ']')	/* a ']' first is one of the set */
		q++;
	while (q < end && *q != ']')
		q++;
	return q < end ? q : NULL;
}

int glob_check(const char *pattern, char *why, size_t size)
{
	char q[3 * 64 + 8];
	int double_stars = 0;

	for (const char *c = pattern; *c;) {
		const char *end = comp_end(c);

		if (comp_is_double_star(c, end)) {
			if (++double_stars > GLOB_DOUBLE_STAR_MAX) {
				why_set(why, size, "'%s': more than %d '**' components",
					text_quote(pattern, 64, q, sizeof(q)), GLOB_DOUBLE_STAR_MAX);
				return -EINVAL;
			}
			c = comp_next(end);
			continue;
		}
		for (const char *x = c; x < end; x++) {
			if (x[0] == '*' && x + 1 < end && x[1] == '*') {
				why_set(why, size,
					"'%s': '**' must be a component of its own (\"a/**/b\"); '*' matches within one",
					text_quote(pattern, 64, q, sizeof(q)));
				return -EINVAL;
			}
			if (x[0] == '[') {
				x = bracket_end(x, end);
				if (!x) {
					why_set(why, size,
						"'%s': a '[' without its ']' (for a literal '[' write '[[]')",
						text_quote(pattern, 64, q, sizeof(q)));
					return -EINVAL;
				}
			}
		}
		c = comp_next(end);
	}
	return 0;
}

static bool match_from(const char *p, const char *s)
{
	const char *pe, *se;

	if (!*p)
		return !*s;
	pe = comp_end(p);
	if (comp_is_double_star(p, pe)) {
		const char *rest = comp_next(pe);

		/* "**" takes none, one, two ... of the components left. */
		for (;;) {
			if (match_from(rest, s))
				return true;
			if (!*s)
				return false;
			s = comp_next(comp_end(s));
		}
	}
	if (!*s)
		return false;
	se = comp_end(s);
	return comp_match(p, pe, s, se) && match_from(comp_next(pe), comp_next(se));
}

bool glob_match(const char *pattern, const char *path)
{
	return match_from(pattern, path);
}

static bool below_from(const char *p, const char *s)
{
	const char *pe, *se;

	if (!*s)
		return *p != '\0';	/* what is left of the pattern names a descendant */
	if (!*p)
		return false;
	pe = comp_end(p);
	if (comp_is_double_star(p, pe))
		return true;
	se = comp_end(s);
	return comp_match(p, pe, s, se) && below_from(comp_next(pe), comp_next(se));
}

bool glob_below(const char *pattern, const char *dir)
{
	return below_from(pattern, dir);
}

unsigned int glob_literals(const char *pattern)
{
	unsigned int n = 0;

	for (const char *c = pattern; *c; c++) {
		if (*c == '[') {
			const char *end = bracket_end(c, comp_end(c));

			if (end) {
				c = end;
				continue;
			}
		}
		n += *c != '*' && *c != '?' && *c != '/';
	}
	return n;
}

void glob_base(const char *pattern, char *base, size_t size)
{
	const char *c = pattern, *stop = pattern;

	while (*c) {
		const char *end = comp_end(c);

		if (memchr(c, '*', (size_t)(end - c)) || memchr(c, '?', (size_t)(end - c)) ||
		    memchr(c, '[', (size_t)(end - c)))
			break;
		stop = end;
		c = comp_next(end);
	}
	snprintf(base, size, "%.*s", (int)(stop - pattern), pattern);
}
