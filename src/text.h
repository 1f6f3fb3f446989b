/* SPDX-License-Identifier: GPL-2.0 */
/* text.h - the bottom layer: pure text helpers (reasons, quoting, cgroup path syntax) */
#ifndef __NODEFD_TEXT_H
#define __NODEFD_TEXT_H

/*
 * Nothing here touches BPF, the filesystem or the output, and nothing here
 * includes another header of src/: every other file may use it.
 *
 * The error convention of nodefdctl: a function returns 0 or -errno.  One
 * that is given a `verb` says why itself, through p_err(), before it
 * returns; one that is given a `why` buffer (every function of the pure
 * and map layers) never prints, and leaves the reason there for its caller
 * to say in its own words.
 */

#include <stddef.h>

#ifndef __printf
#define __printf(a, b) __attribute__((format(printf, a, b)))
#endif

/* Limits on what nodefdctl takes from a command line or a file. */
#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_PATH_MAX 4096		/* bytes of an absolute cgroup path and its NUL */
#define CGROUP_NAME_MAX 255		/* bytes of one component (NAME_MAX) */
#define REASON_MAX 320			/* bytes of an error's reason */

/*
 * snprintf() at offset @n of @buf: returns the offset after what it wrote,
 * or would have (>= @size: cut short, and later calls write nothing).
 */
size_t text_append(char *buf, size_t size, size_t n, const char *fmt, ...) __printf(4, 5);

/* The reason of an error, into @why (which may be NULL). */
void why_set(char *why, size_t size, const char *fmt, ...) __printf(3, 4);

/*
 * @s made safe to show in a message: at most @max bytes of it (then "..."),
 * bytes outside printable ASCII, quotes and backslashes as \xNN.  Returns
 * @buf.
 */
const char *text_quote(const char *s, size_t max, char *buf, size_t size);

/*
 * A cgroup path as a user gives it, /sys/fs/cgroup/A/B or A/B (relative to
 * /sys/fs/cgroup), into its canonical relative form "A/B" ("" for the
 * root): empty and "." components dropped, ".." refused, lengths checked.
 * Looks at the string only.  0, or -EINVAL with the reason in @why.
 */
int cgroup_path_normalize(const char *in, char *out, size_t size, char *why, size_t wsize);

#endif /* __NODEFD_TEXT_H */
