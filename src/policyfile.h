/* SPDX-License-Identifier: GPL-2.0 */
/* policyfile.h - the pure parsers (policy words and files, cgroup paths) and their limits */
#ifndef __NODEFD_POLICYFILE_H
#define __NODEFD_POLICYFILE_H

/*
 * Nothing declared here touches BPF, the filesystem or the output: text
 * in, a struct or an error with its reason out.  The fuzz targets in
 * tests/fuzz/ call these functions on the host, linked with
 * policyfile.c and text.c alone.
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "nodefd.h"
#include "text.h"

/* Limits on what nodefdctl takes from a command line or a file. */
#define CGROUP_LOOKUP_DEPTH NODEFD_MAX_CGROUP_LEVELS /* levels the BPF side looks up from a task's cgroup */
#define POLICY_WORD_MAX 32		/* bytes of a mode, rule, key or value word */
#define POLICYFILE_SIZE_MAX (1 << 20)	/* bytes of a policy file */
#define POLICYFILE_LINE_MAX (CGROUP_PATH_MAX + 64) /* bytes of one line, without its newline */

/* One policy of a file or a command line: for the cgroup at @path. */
struct policy_entry {
	char *path;			/* normalised, relative to CGROUP_ROOT; "" is the root */
	bool pattern;			/* @path is a pattern (glob.h) */
	struct nodefd_policy policy;
	int line;			/* of its section header; 0 on a command line */
};

/* A parsed policy file: every entry, each cgroup at most once. */
struct policyfile {
	struct policy_entry *entries;
	size_t n;
	size_t cap;
};

/* Words: "enforce", "audit", "off"; "upgrade", ...; "on", "off". 0 or -EINVAL. */
int policy_mode_parse(const char *s, __u8 *mode);
int policy_rule_parse(const char *s, unsigned int *rule);
const char *policy_mode_name(unsigned int mode);
const char *policy_rule_name(unsigned int rule);

/*
 * The arguments of `policy set CGROUP MODE [RULE=MODE]...` after CGROUP:
 * args[0] is MODE, every other one RULE=MODE, path_read=on|off or
 * strict=on|off, each key
 * at most once.  0, or -EINVAL with the reason in @why.
 */
int policy_spec_parse(int argc, char *const *args, struct nodefd_policy *policy, char *why,
		      size_t size);

/*
 * The policy file format (nodefd-policy.conf(5)) from @len bytes of @text,
 * which need not be NUL-terminated.  0 with @pf filled (free it with
 * policyfile_free()), or -EINVAL (-ENOMEM) with @pf empty, the reason in
 * @why and its line in *@line (1-based; 0 for the whole file).
 */
int policyfile_parse(const char *text, size_t len, struct policyfile *pf, int *line, char *why,
		     size_t size);
void policyfile_free(struct policyfile *pf);

/*
 * The entry that rules the cgroup at normalised path @rel: the section
 * naming it exactly, else of the patterns matching it the one with the
 * most literal characters (glob_literals()), the earlier in the file on a
 * tie.  Its index, or -1 when no section names or matches @rel;
 * *@matching (may be NULL) gets how many sections do.
 */
long policyfile_rule(const struct policyfile *pf, const char *rel, size_t *matching);

#endif /* __NODEFD_POLICYFILE_H */
