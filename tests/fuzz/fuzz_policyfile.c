// SPDX-License-Identifier: GPL-2.0
/* fuzz_policyfile.c - libFuzzer target: policyfile_parse() on any bytes, and what it promises */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyfile.h"

/*
 * Beyond not crashing, leaking or reading out of bounds: a parse either
 * fails with a line inside the text and a reason, or gives entries that are
 * in canonical form (normalising them again changes nothing), name each
 * cgroup once, stay within NODEFD_MAX_POLICIES and hold only known modes
 * and flags.
 */
static void fail(const char *what)
{
	fprintf(stderr, "fuzz_policyfile: broken promise: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char again[CGROUP_PATH_MAX], why[REASON_MAX], reason[REASON_MAX];
	struct policyfile pf;
	size_t lines = 1;
	int line;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (policyfile_parse((const char *)data, size, &pf, &line, reason, sizeof(reason))) {
		if (pf.n || pf.entries)
			fail("entries left after an error");
		if (!reason[0] || strnlen(reason, sizeof(reason)) == sizeof(reason))
			fail("error without a terminated reason");
		if (line < 0 || (size_t)line > lines)
			fail("error line outside the text");
		return 0;
	}
	if (pf.n > NODEFD_MAX_POLICIES)
		fail("more entries than NODEFD_MAX_POLICIES");
	for (size_t i = 0; i < pf.n; i++) {
		const struct policy_entry *e = &pf.entries[i];

		if (e->line < 1 || (size_t)e->line > lines)
			fail("entry line outside the text");
		if (e->policy.flags & ~(NODEFD_POLICY_PATH_READ | NODEFD_POLICY_STRICT))
			fail("unknown flag");
		for (int r = 0; r < NODEFD_RULE_NR; r++)
			if (e->policy.rule_mode[r] >= NODEFD_MODE_NR)
				fail("unknown mode");
		if (e->path[0]) {
			if (cgroup_path_normalize(e->path, again, sizeof(again), why, sizeof(why)))
				fail("entry path does not normalise");
			if (strcmp(again, e->path))
				fail("entry path not in canonical form");
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pf.entries[j].path, e->path))
				fail("a cgroup named twice");
	}
	policyfile_free(&pf);
	return 0;
}
