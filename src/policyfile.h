/* SPDX-License-Identifier: GPL-2.0 */
/* policyfile.h - the pure parsers (policy words and files, cgroup paths) and their limits */
#ifndef __NODEFD_POLICYFILE_H
#define __NODEFD_POLICYFILE_H

/*
 * Nothing declared here touches BPF, the filesystem or the output: text
 * in, a struct or an error with its reason out.  The fuzz targets in
 * tests/fuzz/ call these functions on the host, linked with
 * policyfile.c and cgroup.c alone.
 */

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "nodefd.h"

/* Limits on what nodefdctl takes from a command line or a file. */
#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_PATH_MAX 4096		/* bytes of an absolute cgroup path and its NUL */
#define CGROUP_NAME_MAX 255		/* bytes of one component (NAME_MAX) */
#define CGROUP_LOOKUP_DEPTH NODEFD_MAX_CGROUP_LEVELS /* levels the BPF side looks up from a task's cgroup */
#define POLICY_WORD_MAX 32		/* bytes of a mode, rule, key or value word */
#define POLICYFILE_SIZE_MAX (1 << 20)	/* bytes of a policy file */
#define POLICYFILE_LINE_MAX (CGROUP_PATH_MAX + 64) /* bytes of one line, without its newline */
#define POLICY_REASON_MAX 320		/* bytes of an error's reason */

/* One policy of a file or a command line: for the cgroup at @path. */
struct policy_entry {
	char *path;			/* normalised, relative to CGROUP_ROOT; "" is the root */
	struct nodefd_policy policy;
	int line;			/* of its section header; 0 on a command line */
};

/* A parsed policy file: every entry, each cgroup at most once. */
struct policyfile {
	struct policy_entry *entries;
	size_t n;
	size_t cap;
};

struct policy_error {
	int line;			/* 1-based; 0 when the error is about the whole file */
	char reason[POLICY_REASON_MAX];
};

/* Words: "enforce", "audit", "off"; "upgrade", ...; "on", "off". 0 or -EINVAL. */
int policy_mode_parse(const char *s, __u8 *mode);
int policy_rule_parse(const char *s, unsigned int *rule);
const char *policy_mode_name(unsigned int mode);
const char *policy_rule_name(unsigned int rule);

/*
 * The arguments of `policy set CGROUP MODE [RULE=MODE]...` after CGROUP:
 * args[0] is MODE, every other one RULE=MODE or path_read=on|off, each key
 * at most once.  0, or -EINVAL with the reason in @why.
 */
int policy_spec_parse(int argc, char *const *args, struct nodefd_policy *policy, char *why,
		      size_t size);

/*
 * The policy file format (nodefd-policy.conf(5)) from @len bytes of @text,
 * which need not be NUL-terminated.  0 with @pf filled (free it with
 * policyfile_free()), or -EINVAL (-ENOMEM) with @err set and @pf empty.
 */
int policyfile_parse(const char *text, size_t len, struct policyfile *pf,
		     struct policy_error *err);
void policyfile_free(struct policyfile *pf);

/*
 * @s made safe to show in a message: at most @max bytes of it (then "..."),
 * bytes outside printable ASCII, quotes and backslashes as \xNN.  Returns
 * @buf.
 */
const char *policy_quote(const char *s, size_t max, char *buf, size_t size);

/*
 * A cgroup path as a user gives it, /sys/fs/cgroup/A/B or A/B (relative to
 * /sys/fs/cgroup), into its canonical relative form "A/B" ("" for the
 * root): empty and "." components dropped, ".." refused, lengths checked.
 * Looks at the string only (cgroup.c).  0, or -EINVAL with the reason.
 */
int cgroup_path_normalize(const char *in, char *out, size_t size, char *why, size_t wsize);

#endif /* __NODEFD_POLICYFILE_H */
