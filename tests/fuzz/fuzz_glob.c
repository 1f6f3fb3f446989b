// SPDX-License-Identifier: GPL-2.0
/* fuzz_glob.c - libFuzzer target: cgroup path patterns (glob.c), and what they promise */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "glob.h"

/*
 * The input is a pattern, a newline and a cgroup path.  Beyond not
 * crashing: a path without glob characters matches itself; when a checked
 * pattern matches a path, the path lies below the pattern's base, and
 * glob_below() says yes for each of the path's ancestors, so that the walk
 * and the watches, which prune where glob_below() says no, never miss a
 * match; a pattern matches what it ranks at most as many literal
 * characters as the path has.
 */
static void fail(const char *what, const char *pattern, const char *path)
{
	fprintf(stderr, "fuzz_glob: broken promise: %s (pattern '%s', path '%s')\n", what, pattern,
		path);
	abort();
}

/* What the patterns of nodefd-policy.conf(5) mean, checked once before fuzzing. */
static const struct {
	const char *pattern, *path;
	bool match, below;
} known[] = {
	{ "machine.slice/libpod-*.scope", "machine.slice/libpod-9a5a.scope", true, false },
	{ "machine.slice/libpod-*.scope", "machine.slice/libpod-9a5a.scope/container", false, false },
	{ "machine.slice/libpod-*.scope", "machine.slice", false, true },
	{ "machine.slice/libpod-*.scope", "system.slice", false, false },
	{ "system.slice/*.service", "system.slice/cron.service", true, false },
	{ "system.slice/*.service", "system.slice/system-getty.slice", false, false },
	{ "kubepods.slice/**", "kubepods.slice", true, true },
	{ "kubepods.slice/**", "kubepods.slice/a/b/c", true, true },
	{ "kubepods.slice/**", "kubepods.sliceX", false, false },
	{ "**/*.scope", "a.scope", true, true },
	{ "**/*.scope", "user.slice/user-1000.slice/session-1.scope", true, true },
	{ "a/**/b", "a/b", true, true },
	{ "a/**/b", "a/x/y/b", true, true },
	{ "a/**/b", "a/x/y/c", false, true },
	{ "a/?", "a/bb", false, false },
	{ "a/[bc]", "a/c", true, false },
	{ "a/[!bc]", "a/c", false, false },
	{ "system-systemd\\x2dfsck.slice/*", "system-systemd\\x2dfsck.slice/a", true, false },
	{ "a/*", "a/.hidden", true, false },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char why[REASON_MAX];

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (glob_check(known[i].pattern, why, sizeof(why)))
			fail("a pattern of the table rejected", known[i].pattern, why);
		if (glob_match(known[i].pattern, known[i].path) != known[i].match)
			fail(known[i].match ? "no match where one is due" : "a match where none is due",
			     known[i].pattern, known[i].path);
		if (glob_below(known[i].pattern, known[i].path) != known[i].below)
			fail(known[i].below ? "a place for matches said to hold none" :
					      "a place for no match said to hold some",
			     known[i].pattern, known[i].path);
	}
	for (const char *const *bad = (const char *const[]){ "a**", "a/**b", "a/[b", "**/**/**", NULL };
	     *bad; bad++)
		if (!glob_check(*bad, why, sizeof(why)))
			fail("an ill-formed pattern accepted", *bad, "");
	if (glob_literals("machine.slice/libpod-*.scope") <= glob_literals("machine.slice/*.scope"))
		fail("the longer pattern ranked no higher", "machine.slice/libpod-*.scope",
		     "machine.slice/*.scope");
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char pattern[CGROUP_PATH_MAX], path[CGROUP_PATH_MAX], base[CGROUP_PATH_MAX];
	char anc[CGROUP_PATH_MAX], why[REASON_MAX], *in, *nl;
	size_t blen;

	in = strndup((const char *)data, size);
	if (!in)
		return 0;
	nl = strchr(in, '\n');
	if (!nl) {
		free(in);
		return 0;
	}
	*nl = '\0';
	if (cgroup_path_normalize(in, pattern, sizeof(pattern), why, sizeof(why)) ||
	    cgroup_path_normalize(nl + 1, path, sizeof(path), why, sizeof(why))) {
		free(in);
		return 0;
	}
	free(in);
	if (!glob_is_pattern(path) && !glob_match(path, path))
		fail("a plain path does not match itself", path, path);
	if (glob_check(pattern, why, sizeof(why))) {
		if (!why[0])
			fail("rejected without a reason", pattern, path);
		return 0;
	}
	if (!glob_match(pattern, path))
		return 0;
	glob_base(pattern, base, sizeof(base));
	blen = strlen(base);
	if (blen && (strncmp(path, base, blen) || (path[blen] && path[blen] != '/')))
		fail("a match outside the base", pattern, path);
	if (glob_literals(pattern) > strlen(path))
		fail("more literal characters than the path has", pattern, path);
	snprintf(anc, sizeof(anc), "%s", path);
	while (anc[0]) {
		char *slash = strrchr(anc, '/');

		if (slash)
			*slash = '\0';
		else
			anc[0] = '\0';
		if (!glob_below(pattern, anc))
			fail("an ancestor of a match said to hold none", pattern, anc);
	}
	return 0;
}
