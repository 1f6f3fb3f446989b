/* SPDX-License-Identifier: GPL-2.0 */
/* glob.h - cgroup path patterns of the policy file (glob.c): checked, matched, ranked */
#ifndef __NODEFD_GLOB_H
#define __NODEFD_GLOB_H

/*
 * A policy section whose path holds '*', '?' or '[' is a pattern
 * (nodefd-policy.conf(5), PATTERNS).  Within a component, '*', '?' and
 * '[...]' are fnmatch(3)'s, with FNM_NOESCAPE: a backslash is an ordinary
 * character, as it is in systemd's unit names (system-foo\x2dbar.slice).
 * A component "**" matches any number of components, none included.
 * Patterns come in normalised (cgroup_path_normalize()); these functions
 * look at strings only.
 */

#include <stdbool.h>
#include <stddef.h>

#define GLOB_DOUBLE_STAR_MAX 2	/* "**" components in one pattern (bounds the matching) */

/* Whether normalised @path holds a glob character. */
bool glob_is_pattern(const char *path);

/*
 * Whether @pattern is well formed: every '[' closed, "**" only as a whole
 * component, at most GLOB_DOUBLE_STAR_MAX of them.  0, or -EINVAL with
 * the reason in @why.
 */
int glob_check(const char *pattern, char *why, size_t size);

/* Whether the normalised cgroup path @path matches @pattern. */
bool glob_match(const char *pattern, const char *path);

/* Whether a cgroup below @dir (not @dir itself) could match @pattern. */
bool glob_below(const char *pattern, const char *dir);

/*
 * How specific @pattern is: the characters it matches literally (outside
 * '*', '?' and '[...]').  Of two patterns matching one cgroup, the one
 * with more wins.
 */
unsigned int glob_literals(const char *pattern);

/*
 * The leading components of @pattern that hold no glob character, into
 * @base ("" for none): the cgroup below which every match lies.
 */
void glob_base(const char *pattern, char *base, size_t size);

#endif /* __NODEFD_GLOB_H */
