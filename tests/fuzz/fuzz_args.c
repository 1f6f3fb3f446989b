// SPDX-License-Identifier: GPL-2.0
/* fuzz_args.c - libFuzzer target: the CGROUP and MODE [RULE=MODE]... arguments of `policy set` */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyfile.h"

#define MAX_ARGS 16

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_args: broken promise: %s\n", what);
	abort();
}

/*
 * The input is an argument vector, NUL-separated: the first word goes to
 * cgroup_path_normalize(), the rest to policy_spec_parse(), as `policy set`
 * hands them.  A normalised path normalises to itself, has no "." or ".."
 * component and fits the limits; a parsed policy holds only known modes.
 */
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char out[CGROUP_PATH_MAX], again[CGROUP_PATH_MAX], why[REASON_MAX];
	char *buf, *args[MAX_ARGS], *p;
	struct nodefd_policy pol;
	int argc = 0;

	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (p = buf; argc < MAX_ARGS && p <= buf + size; p += strlen(p) + 1)
		args[argc++] = p;

	if (!cgroup_path_normalize(args[0], out, sizeof(out), why, sizeof(why))) {
		size_t len = strlen(out);

		if (strlen(out) + strlen(CGROUP_ROOT) + 1 >= CGROUP_PATH_MAX)
			fail("normalised path too long");
		if (out[0] == '/' || (out[0] && out[strlen(out) - 1] == '/') || strstr(out, "//"))
			fail("normalised path has a stray '/'");
		if (!strcmp(out, ".") || !strcmp(out, "..") || !strncmp(out, "./", 2) ||
		    !strncmp(out, "../", 3) || strstr(out, "/./") || strstr(out, "/../") ||
		    (len >= 2 && !strcmp(out + len - 2, "/.")) ||
		    (len >= 3 && !strcmp(out + len - 3, "/..")))
			fail("normalised path has a dot component");
		if (out[0]) {
			if (cgroup_path_normalize(out, again, sizeof(again), why, sizeof(why)) ||
			    strcmp(out, again))
				fail("normalising twice differs");
		}
	} else if (!why[0]) {
		fail("path refused without a reason");
	}

	if (!policy_spec_parse(argc - 1, args + 1, &pol, why, sizeof(why))) {
		if (pol.flags & ~(NODEFD_POLICY_PATH_READ | NODEFD_POLICY_STRICT))
			fail("unknown flag");
		for (int r = 0; r < NODEFD_RULE_NR; r++)
			if (pol.rule_mode[r] >= NODEFD_MODE_NR)
				fail("unknown mode");
	} else if (!why[0]) {
		fail("arguments refused without a reason");
	}
	free(buf);
	return 0;
}
