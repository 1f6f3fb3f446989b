// SPDX-License-Identifier: GPL-2.0
/* policyfile.c - policy words, `policy set` arguments and the policy file (on libinih), all pure */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ini.h>

#include "policyfile.h"
#include "glob.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const mode_names[NODEFD_MODE_NR] = {
	[NODEFD_MODE_OFF] = "off",
	[NODEFD_MODE_AUDIT] = "audit",
	[NODEFD_MODE_ENFORCE] = "enforce",
};

/*
 * The keys of a policy: the four rules first, so that a rule's key is its
 * enum nodefd_rule, then the base mode and the relaxations.
 */
enum policy_key {
	KEY_MODE = NODEFD_RULE_NR,
	KEY_PATH_READ,
	KEY_STRICT,
	KEY_NR,
};

static const char *const key_names[KEY_NR] = {
	[NODEFD_RULE_UPGRADE] = "upgrade",
	[NODEFD_RULE_APPEND] = "append",
	[NODEFD_RULE_ANCESTORS] = "ancestors",
	[NODEFD_RULE_REACH] = "reach",
	[KEY_MODE] = "mode",
	[KEY_PATH_READ] = "path_read",
	[KEY_STRICT] = "strict",
};

/* The on|off keys and the flag each sets. */
static const __u32 key_flags[KEY_NR] = {
	[KEY_PATH_READ] = NODEFD_POLICY_PATH_READ,
	[KEY_STRICT] = NODEFD_POLICY_STRICT,
};

#define RULES_HELP "upgrade, append, ancestors, reach"
#define MODES_HELP "enforce, audit or off"
#define FLAGS_HELP "path_read=on|off, strict=on|off"

const char *policy_mode_name(unsigned int mode)
{
	return mode < ARRAY_LEN(mode_names) ? mode_names[mode] : "unknown";
}

const char *policy_rule_name(unsigned int rule)
{
	return rule < NODEFD_RULE_NR ? key_names[rule] : "unknown";
}

int policy_mode_parse(const char *s, __u8 *mode)
{
	for (unsigned int m = 0; m < ARRAY_LEN(mode_names); m++) {
		if (!strcmp(s, mode_names[m])) {
			*mode = (__u8)m;	/* m < NODEFD_MODE_NR */
			return 0;
		}
	}
	return -EINVAL;
}

int policy_rule_parse(const char *s, unsigned int *rule)
{
	for (unsigned int r = 0; r < NODEFD_RULE_NR; r++) {
		if (!strcmp(s, key_names[r])) {
			*rule = r;
			return 0;
		}
	}
	return -EINVAL;
}

static int key_parse(const char *s)
{
	for (int k = 0; k < KEY_NR; k++)
		if (!strcmp(s, key_names[k]))
			return k;
	return -1;
}


/*
 * A policy being put together from keys in any order: the base mode, a
 * mode of its own for some rules, the relaxations.
 */
struct policy_builder {
	int mode;			/* -1 until given */
	int rule[NODEFD_RULE_NR];	/* -1: the base mode */
	__u32 flags;
	int line[KEY_NR];		/* where each key was given; 0: not given */
};

static void builder_init(struct policy_builder *b)
{
	memset(b, 0, sizeof(*b));
	b->mode = -1;
	for (int r = 0; r < NODEFD_RULE_NR; r++)
		b->rule[r] = -1;
}

/* Key @key = @value, given on @line (-1 for a command line). */
static int builder_set(struct policy_builder *b, int key, const char *value, int line, char *why,
		       size_t size)
{
	char q[3 * POLICY_WORD_MAX + 8];
	__u8 mode;

	if (b->line[key]) {
		if (b->line[key] > 0)
			why_set(why, size, "'%s' given twice in this section (first at line %d)",
				key_names[key], b->line[key]);
		else
			why_set(why, size, "'%s' given twice", key_names[key]);
		return -EINVAL;
	}
	if (key_flags[key]) {
		if (!strcmp(value, "on")) {
			b->flags |= key_flags[key];
		} else if (strcmp(value, "off")) {
			why_set(why, size, "%s takes on or off, not '%s'", key_names[key],
				text_quote(value, POLICY_WORD_MAX, q, sizeof(q)));
			return -EINVAL;
		}
	} else {
		if (policy_mode_parse(value, &mode)) {
			why_set(why, size, "%s: unknown mode '%s' (" MODES_HELP ")", key_names[key],
				text_quote(value, POLICY_WORD_MAX, q, sizeof(q)));
			return -EINVAL;
		}
		if (key == KEY_MODE)
			b->mode = mode;
		else
			b->rule[key] = mode;
	}
	b->line[key] = line;
	return 0;
}

static int builder_finish(const struct policy_builder *b, struct nodefd_policy *p, char *why,
			  size_t size)
{
	if (b->mode < 0) {
		why_set(why, size, "no 'mode' (" MODES_HELP ")");
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	for (int r = 0; r < NODEFD_RULE_NR; r++)
		p->rule_mode[r] = (__u8)(b->rule[r] >= 0 ? b->rule[r] : b->mode);
	p->flags = b->flags;
	return 0;
}

int policy_spec_parse(int argc, char *const *args, struct nodefd_policy *policy, char *why,
		      size_t size)
{
	char q[3 * POLICY_WORD_MAX + 8], name[POLICY_WORD_MAX + 1];
	struct policy_builder b;

	builder_init(&b);
	if (argc < 1) {
		why_set(why, size, "missing MODE (" MODES_HELP ")");
		return -EINVAL;
	}
	if (policy_mode_parse(args[0], &(__u8){ 0 })) {
		why_set(why, size, "unknown mode '%s' (" MODES_HELP ")",
			text_quote(args[0], POLICY_WORD_MAX, q, sizeof(q)));
		return -EINVAL;
	}
	if (builder_set(&b, KEY_MODE, args[0], -1, why, size))
		return -EINVAL;
	for (int i = 1; i < argc; i++) {
		const char *eq = strchr(args[i], '=');
		size_t len = eq ? (size_t)(eq - args[i]) : 0;
		int key;

		if (!eq) {
			why_set(why, size,
				"'%s': not RULE=MODE (rules " RULES_HELP "; or " FLAGS_HELP ")",
				text_quote(args[i], POLICY_WORD_MAX, q, sizeof(q)));
			return -EINVAL;
		}
		key = -1;
		if (len < sizeof(name)) {
			memcpy(name, args[i], len);
			name[len] = '\0';
			key = key_parse(name);
		}
		if (key < 0 || key == KEY_MODE) {
			/* Quote the name only: cut it where the '=' was. */
			snprintf(name, sizeof(name), "%.*s", (int)(len < POLICY_WORD_MAX ? len : POLICY_WORD_MAX), args[i]);
			why_set(why, size,
				"unknown rule '%s%s' (" RULES_HELP "; or " FLAGS_HELP ")",
				text_quote(name, POLICY_WORD_MAX, q, sizeof(q)),
				len > POLICY_WORD_MAX ? "..." : "");
			return -EINVAL;
		}
		if (builder_set(&b, key, eq + 1, -1, why, size))
			return -EINVAL;
	}
	return builder_finish(&b, policy, why, size);
}

/*
 * The policy file
 * ---------------
 * libinih does the INI syntax; what it does not give us is done around it.
 * It reads through pf_reader(), which hands it one whole line at a time,
 * so that the reader's line count is inih's and every error can name its
 * line.  inih calls the handler for keys only, never for a section header,
 * and keeps only the first 49 bytes of a section's name: a long cgroup path
 * would be cut silently.  So the reader also notes each section header line
 * as inih will see it (after a UTF-8 BOM on line 1 and leading spaces, a
 * '[' up to the first ']': inline comments are off) and keeps its whole
 * name; the handler builds its entries from that, and checks that inih's
 * copy agrees.
 */
struct pf_parse {
	const char *text;
	size_t len;
	size_t pos;
	int lineno;		/* lines handed to inih */

	/* The last section header read. */
	int sec_line;		/* 0: none yet */
	bool sec_used;		/* a key came after it */
	size_t sec_len;
	char sec[POLICYFILE_LINE_MAX + 1];
	int hint_line;		/* a reason for inih's error on this line, in hint */
	const char *hint;

	/* The entry under construction, from the section header on cur_line. */
	int cur_line;		/* 0: none */
	char *cur_path;
	struct policy_builder b;

	struct policyfile *pf;
	int *err_line;
	char *why;
	size_t why_size;
	bool failed;
};

static void pf_fail(struct pf_parse *st, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pf_fail(struct pf_parse *st, int line, const char *fmt, ...)
{
	va_list ap;

	if (st->failed)
		return;
	st->failed = true;
	*st->err_line = line;
	va_start(ap, fmt);
	vsnprintf(st->why, st->why_size, fmt, ap);
	va_end(ap);
}

/* A section header line, as inih will see it; else nothing. */
static void pf_see_line(struct pf_parse *st, const char *line)
{
	const char *s = line, *end, *p;

	if (st->lineno == 1 && (unsigned char)s[0] == 0xef && (unsigned char)s[1] == 0xbb &&
	    (unsigned char)s[2] == 0xbf)
		s += 3;
	while (*s && isspace((unsigned char)*s))
		s++;
	if (*s != '[')
		return;
	end = strrchr(s + 1, ']');	/* the last: a pattern's "[...]" is inside */
	if (!end) {
		st->hint_line = st->lineno;
		st->hint = "section header without ']'";
		return;
	}
	for (p = end + 1; *p; p++) {
		if (!isspace((unsigned char)*p)) {
			pf_fail(st, st->lineno, "text after the section header's ']'");
			return;
		}
	}
	if (st->sec_line && !st->sec_used) {
		pf_fail(st, st->sec_line, "section without keys (it needs at least 'mode')");
		return;
	}
	st->sec_line = st->lineno;
	st->sec_used = false;
	st->sec_len = (size_t)(end - (s + 1));
	memcpy(st->sec, s + 1, st->sec_len);
	st->sec[st->sec_len] = '\0';
}

/* fgets() for inih over the text, one line per call. */
static char *pf_reader(char *str, int num, void *stream)
{
	struct pf_parse *st = stream;
	const char *p, *nl;
	size_t n;

	if (st->failed || st->pos >= st->len)
		return NULL;
	p = st->text + st->pos;
	nl = memchr(p, '\n', st->len - st->pos);
	n = nl ? (size_t)(nl - p) + 1 : st->len - st->pos;
	if (num < 1 || n >= (size_t)num) {
		pf_fail(st, st->lineno + 1, "line longer than %d bytes", POLICYFILE_LINE_MAX);
		return NULL;
	}
	memcpy(str, p, n);
	str[n] = '\0';
	st->pos += n;
	st->lineno++;
	pf_see_line(st, str);
	return st->failed ? NULL : str;
}

/* `default` or `cgroup "PATH"`, into a normalised path ("" for the root). */
static int pf_section_path(struct pf_parse *st, char *path, size_t size)
{
	char why[REASON_MAX - 64], q[3 * 64 + 8];
	const char *s = st->sec, *e = st->sec + st->sec_len, *open, *close;
	char *inner;
	int err;

	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (e - s == 7 && !memcmp(s, "default", 7)) {
		path[0] = '\0';
		return 0;
	}
	if (e - s > 6 && !memcmp(s, "cgroup", 6) && isspace((unsigned char)s[6])) {
		open = s + 6;
		while (open < e && isspace((unsigned char)*open))
			open++;
		close = e - 1;
		if (open < close && *open == '"' && *close == '"' &&
		    !memchr(open + 1, '"', (size_t)(close - open - 1))) {
			inner = strndup(open + 1, (size_t)(close - open - 1));
			if (!inner) {
				pf_fail(st, st->sec_line, "out of memory");
				return -ENOMEM;
			}
			err = cgroup_path_normalize(inner, path, size, why, sizeof(why));
			free(inner);
			if (!err && glob_is_pattern(path))
				err = glob_check(path, why, sizeof(why));
			if (err)
				pf_fail(st, st->sec_line, "%s", why);
			return err;
		}
	}
	pf_fail(st, st->sec_line, "unknown section '[%s]' (sections: [default], [cgroup \"PATH\"])",
		text_quote(st->sec, 64, q, sizeof(q)));
	return -EINVAL;
}

static int pf_entry_begin(struct pf_parse *st)
{
	char path[CGROUP_PATH_MAX];

	if (st->pf->n >= NODEFD_MAX_POLICIES) {
		pf_fail(st, st->sec_line, "more than %d sections (cgroups with a policy)",
			NODEFD_MAX_POLICIES);
		return -E2BIG;
	}
	if (pf_section_path(st, path, sizeof(path)))
		return -EINVAL;
	st->cur_path = strdup(path);
	if (!st->cur_path) {
		pf_fail(st, st->sec_line, "out of memory");
		return -ENOMEM;
	}
	st->cur_line = st->sec_line;
	builder_init(&st->b);
	return 0;
}

static int pf_entry_end(struct pf_parse *st)
{
	struct policyfile *pf = st->pf;
	struct policy_entry *e;
	char why[REASON_MAX - 64];

	if (!st->cur_line)
		return 0;
	if (pf->n == pf->cap) {
		size_t cap = pf->cap ? 2 * pf->cap : 16;

		e = realloc(pf->entries, cap * sizeof(*e));
		if (!e) {
			pf_fail(st, st->cur_line, "out of memory");
			return -ENOMEM;
		}
		pf->entries = e;
		pf->cap = cap;
	}
	e = &pf->entries[pf->n];
	if (st->b.mode < 0) {
		pf_fail(st, st->cur_line, "section without 'mode' (" MODES_HELP ")");
		return -EINVAL;
	}
	if (builder_finish(&st->b, &e->policy, why, sizeof(why))) {
		pf_fail(st, st->cur_line, "%s", why);
		return -EINVAL;
	}
	e->path = st->cur_path;
	e->pattern = glob_is_pattern(e->path);
	e->line = st->cur_line;
	st->cur_path = NULL;
	st->cur_line = 0;
	pf->n++;
	return 0;
}

static int pf_handler(void *user, const char *section, const char *name, const char *value)
{
	struct pf_parse *st = user;
	char why[REASON_MAX - 64], q[3 * POLICY_WORD_MAX + 8];
	size_t slen = strlen(section);
	int key;

	if (st->failed)
		return 0;
	if (!st->sec_line) {
		pf_fail(st, st->lineno,
			"'%s' outside a section (start with [default] or [cgroup \"PATH\"])",
			text_quote(name, POLICY_WORD_MAX, q, sizeof(q)));
		return 0;
	}
	if (slen > st->sec_len || memcmp(section, st->sec, slen)) {
		pf_fail(st, st->lineno, "cannot follow inih's idea of the section here");
		return 0;
	}
	if (st->cur_line != st->sec_line && (pf_entry_end(st) || pf_entry_begin(st)))
		return 0;
	st->sec_used = true;
	key = key_parse(name);
	if (key < 0) {
		pf_fail(st, st->lineno,
			"unknown key '%s' (mode, " RULES_HELP ", path_read, strict)",
			text_quote(name, POLICY_WORD_MAX, q, sizeof(q)));
		return 0;
	}
	if (builder_set(&st->b, key, value, st->lineno, why, sizeof(why))) {
		pf_fail(st, st->lineno, "%s", why);
		return 0;
	}
	return 1;
}

/* Lines too long or with a NUL byte, before inih sees any. */
static int pf_check_text(struct pf_parse *st)
{
	const char *p = st->text, *end = st->text + st->len;
	int line = 1;

	if (st->len > POLICYFILE_SIZE_MAX) {
		pf_fail(st, 0, "larger than %d bytes", POLICYFILE_SIZE_MAX);
		return -EINVAL;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		if (memchr(p, '\0', (size_t)(eol - p))) {
			pf_fail(st, line, "NUL byte (not a text file?)");
			return -EINVAL;
		}
		if (eol - p > POLICYFILE_LINE_MAX) {
			pf_fail(st, line, "line longer than %d bytes", POLICYFILE_LINE_MAX);
			return -EINVAL;
		}
		p = eol + 1;
		line++;
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct policy_entry *x = *(const struct policy_entry *const *)a;
	const struct policy_entry *y = *(const struct policy_entry *const *)b;
	int c = strcmp(x->path, y->path);

	return c ? c : x->line - y->line;
}

/* Each cgroup at most once: the later section is the error. */
static int pf_check_unique(struct pf_parse *st)
{
	struct policyfile *pf = st->pf;
	const struct policy_entry **sorted;
	char q[3 * 64 + 8];

	if (pf->n < 2)
		return 0;
	sorted = malloc(pf->n * sizeof(*sorted));
	if (!sorted) {
		pf_fail(st, 0, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < pf->n; i++)
		sorted[i] = &pf->entries[i];
	qsort(sorted, pf->n, sizeof(*sorted), entry_cmp);
	for (size_t i = 1; i < pf->n; i++) {
		if (strcmp(sorted[i - 1]->path, sorted[i]->path))
			continue;
		if (sorted[i]->path[0])
			pf_fail(st, sorted[i]->line, "cgroup '%s' already has a section at line %d",
				text_quote(sorted[i]->path, 64, q, sizeof(q)),
				sorted[i - 1]->line);
		else
			pf_fail(st, sorted[i]->line,
				"the root cgroup ([default]) already has a section at line %d",
				sorted[i - 1]->line);
		break;
	}
	free(sorted);
	return st->failed ? -EINVAL : 0;
}

void policyfile_free(struct policyfile *pf)
{
	for (size_t i = 0; i < pf->n; i++)
		free(pf->entries[i].path);
	free(pf->entries);
	memset(pf, 0, sizeof(*pf));
}

int policyfile_parse(const char *text, size_t len, struct policyfile *pf, int *line, char *why,
		     size_t size)
{
	struct pf_parse *st;
	int rc, ret = 0;

	memset(pf, 0, sizeof(*pf));
	*line = 0;
	why_set(why, size, "%s", "");
	st = calloc(1, sizeof(*st));
	if (!st) {
		why_set(why, size, "out of memory");
		return -ENOMEM;
	}
	st->text = text;
	st->len = len;
	st->pf = pf;
	st->err_line = line;
	st->why = why;
	st->why_size = size;
	if (pf_check_text(st))
		goto out;

	/* inih's switches are globals: set every time, as this file's syntax needs them. */
	ini_allow_multiline = false;	/* an indented line is a line of its own */
	ini_allow_bom = true;
	ini_allow_inline_comments = false; /* ';' and '#' may be in a cgroup's name */
	ini_allow_no_value = false;
	ini_stop_on_first_error = true;
	ini_use_stack = false;
	ini_allow_realloc = false;
	ini_initial_alloc = POLICYFILE_LINE_MAX + 3; /* a whole line, its "\r\n" and the NUL */
	ini_max_line = POLICYFILE_LINE_MAX + 3;

	rc = ini_parse_stream(pf_reader, st, pf_handler, st);
	if (rc == -2)
		pf_fail(st, 0, "out of memory");
	else if (rc > 0 && !st->failed)
		pf_fail(st, rc, "%s",
			st->hint_line == rc ? st->hint :
					      "not a [section], a KEY = VALUE line or a comment");
	else if (rc < 0 && !st->failed)
		pf_fail(st, 0, "cannot parse (inih error %d)", rc);
	if (st->failed)
		goto out;
	if (st->sec_line && !st->sec_used) {
		pf_fail(st, st->sec_line, "section without keys (it needs at least 'mode')");
		goto out;
	}
	if (pf_entry_end(st) || pf_check_unique(st))
		goto out;
out:
	if (st->failed) {
		ret = strstr(why, "out of memory") ? -ENOMEM : -EINVAL;
		free(st->cur_path);
		policyfile_free(pf);
	}
	free(st);
	return ret;
}

long policyfile_rule(const struct policyfile *pf, const char *rel, size_t *matching)
{
	unsigned int best_literals = 0;
	long best = -1;
	size_t n = 0;

	for (size_t i = 0; i < pf->n; i++) {
		const struct policy_entry *e = &pf->entries[i];
		unsigned int lit;

		if (!e->pattern) {
			if (strcmp(e->path, rel))
				continue;
			n++;
			best = (long)i;
			best_literals = ~0u;	/* a section naming the cgroup beats every pattern */
			continue;
		}
		if (!glob_match(e->path, rel))
			continue;
		n++;
		lit = glob_literals(e->path);
		if (best < 0 || lit > best_literals) {
			best = (long)i;
			best_literals = lit;
		}
	}
	if (matching)
		*matching = n;
	return best;
}
