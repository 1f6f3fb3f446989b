/* SPDX-License-Identifier: GPL-2.0 */
/* nodefdctl.h - what the nodefdctl source files share: verbs, output, pins, names */
#ifndef __NODEFDCTL_H
#define __NODEFDCTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>
#include <json-c/json.h>

#include "nodefd.h"
#include "text.h"

#define NODEFDCTL_VERSION "0.1.0"
/*
 * The "schema" of every JSON record printed: keys are only ever added
 * within one schema; a key removed or renamed, or a value of another type
 * or meaning, makes a new one (nodefdctl(8), JSON OUTPUT).
 */
#define NODEFDCTL_JSON_SCHEMA 2

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __printf
#define __printf(a, b) __attribute__((format(printf, a, b)))
#endif

/* Exit statuses, as documented in nodefdctl(8). */
enum {
	CMD_OK = 0,	/* done */
	CMD_FAIL = 1,	/* refused or failed */
	CMD_USAGE = 2,	/* bad command line */
	/* status, beside 0 for loaded and enabled (enforcing), as aa-enabled(1) does: */
	STATUS_DISABLED = 3,	/* loaded but disabled */
	STATUS_NOT_LOADED = 4,	/* not loaded */
	STATUS_NO_PERMISSION = 5, /* cannot tell: no permission to look */
	/* daemon: its policy file rejected at start (trying again will not help) */
	DAEMON_POLICY_REJECTED = 6,
};

/*
 * Where a loaded nodefd lives.  The maps are pinned under their own names,
 * the links under the names of their programs, and the abi_version symlink
 * holds NODEFD_ABI_VERSION as its target (bpffs has no regular files).
 * bpffs refuses names with a dot in them (reserved for its own files).
 */
#define PIN_ROOT "/sys/fs/bpf"
#define PIN_DIR PIN_ROOT "/nodefd"
#define PIN_LINKS_DIR PIN_DIR "/links"
#define PIN_ABI_NAME "abi_version"
/* A symbolic link to the identity of the BPF object the pins were loaded from. */
#define PIN_OBJECT_NAME "object"
#define PIN_STAGING_PREFIX PIN_ROOT "/nodefd-staging-"

#define LSM_LIST_PATH "/sys/kernel/security/lsm"

/*
 * The inode number of the initial PID namespace's /proc/PID/ns/pid, fixed by
 * the kernel since 3.8 (PROC_PID_INIT_INO, include/linux/proc_ns.h).
 */
#define PIDNS_INIT_INO 0xEFFFFFFCU

/* Locks (lock.c). */
#define RUN_DIR "/run/nodefd"
#define LOCK_MAPS_PATH RUN_DIR "/lock"
#define LOCK_DAEMON_PATH RUN_DIR "/daemon.pid"

/* The daemon's policy file when none is named. */
#define POLICY_FILE_DEFAULT "/etc/nodefd/policy.conf"

/* How output is written (common.c), set by the global options (cli.c). */
extern bool json_output;
extern bool pretty_output;
extern bool debug_output;

/* A verb: its name and its handler, which gets argv[0] == the verb. */
struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
};

int cmd_select(const struct cmd *cmds, int argc, char **argv, const char *where,
	       void (*help)(void));

/*
 * getopt_long() entries every verb accepts as well, so that options may
 * follow the verb ("nodefdctl status --json").  Each verb's parser hands
 * the values below to parse_global_opt().
 */
enum {
	OPT_JSON = 'j',
	OPT_PRETTY = 'p',
	OPT_DEBUG = 'd',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
};

#define GLOBAL_SHORT_OPTS "jpdhV"
#define GLOBAL_LONG_OPTS                                       \
	{ "json", no_argument, NULL, OPT_JSON },               \
	{ "pretty", no_argument, NULL, OPT_PRETTY },           \
	{ "debug", no_argument, NULL, OPT_DEBUG },             \
	{ "help", no_argument, NULL, OPT_HELP },               \
	{ "version", no_argument, NULL, OPT_VERSION }

/* Returns true if c was a global option and has been applied. */
bool parse_global_opt(int c);
/* Reports getopt_long()'s '?' or ':' for verb (NULL: the global options); returns CMD_USAGE. */
int opt_error(const char *verb, int c, char **argv);
/*
 * What a verb's getopt_long() loop does with an option of no verb's own:
 * applies a global one (returns -1: go on), -h prints @help, -V the
 * version, anything else is reported for @verb.  Else the exit status.
 */
int verb_opt(int c, const char *verb, char **argv, void (*help)(void));
/*
 * The tail of every verb's option parsing, with the operands at
 * argv[optind..]: "help" as the first prints @help; more than
 * @max_operands of them (-1: any number) is an error.  Returns -1 to go
 * on, else the exit status.
 */
int verb_tail(int argc, char **argv, const char *verb, void (*help)(void), int max_operands);
/* For a verb without options or operands of its own: the two above. */
int verb_no_args(int argc, char **argv, void (*help)(void));
int print_version(void);

/* Output and errors (common.c). */
void p_err(const char *fmt, ...) __printf(1, 2);
void p_warn(const char *fmt, ...) __printf(1, 2);
/* Whether fd 1 or 2 is the journal's stream (lines then carry their priority as "<N>"). */
bool journal_stream(int fd);
const char *errstr(int err);
void json_print(struct json_object *obj);
/* json_print(), a line of syslog priority @prio (LOG_*) for the journal. */
void json_print_prio(struct json_object *obj, int prio);
void json_add_str(struct json_object *obj, const char *key, const char *val);
void json_add_u64(struct json_object *obj, const char *key, __u64 val);
void json_add_s64(struct json_object *obj, const char *key, __s64 val);
void json_add_bool(struct json_object *obj, const char *key, bool val);
void libbpf_setup(void);

/* The kernel's LSM list and privilege (common.c). */
int lsm_list_read(char *buf, size_t size);
bool lsm_list_has(const char *list, const char *name);
int pidns_host_check(const char *verb);

/*
 * The LSM hook at a magic link's jump, where the kernel has it (the test kernel's
 * kernel-config/patches/0005); nodefd's program for it replaces the fentry guard (loader.c).
 */
#define JUMP_HOOK_NAME "magiclink_jump"
#define JUMP_FORCE_ENV "NODEFD_FORCE_JUMP"
int require_privilege(const char *verb);

/*
 * Names of the enums of nodefd.h (common.c); "unknown" when out of range.
 * Rules and modes (an event's action among them) are named by the policy's
 * words: policy_rule_name() and policy_mode_name() (policyfile.c).
 */
const char *kind_name(unsigned int kind);
const char *reason_name(unsigned int reason);
const char *hook_name(unsigned int hook);

/*
 * The links pinned under a pin directory, by id, and their programs: what an
 * unload waits to see gone from the kernel (pin.c).
 */
#define PIN_LINKS_MAX 16
#define UNLOAD_WAIT_MS 10000
struct pin_links {
	int n;
	__u32 link_id[PIN_LINKS_MAX];
	__u32 prog_id[PIN_LINKS_MAX];
	char name[PIN_LINKS_MAX][32];	/* the pin's name: the program's */
};

/* Pins (pin.c). */
int pin_links_read(const char *dir, struct pin_links *links);
int pin_links_wait_gone(struct pin_links *links, int timeout_ms, int *waited_ms);
int pin_state(void);
int pin_root_check(void);
int pin_abi_read(int *abi);
int pin_map_open(const char *verb, const char *name, __u32 type, __u32 value_size);
int pin_staging_create(char *dir, size_t size);
int pin_staging_add(const char *dir, const char *sub, const char *name, int fd);
int pin_staging_publish(const char *dir, const char *object);
int pin_staging_exchange(const char *dir, const char *object);
int pin_object_read(char *buf, size_t size);
int pin_enabled_read(bool *enabled);
int pin_tree_remove(const char *dir);
int counters_read(int map_fd, __u64 *sums);
int pin_require(const char *verb);
__u32 pin_map_id(const char *name);
__u32 map_id_of_fd(int fd);
int settings_read(int fd, struct nodefd_config *cfg);
int settings_write(int fd, const struct nodefd_config *cfg);

/* Loading (loader.c). */

/*
 * Loading in place of pins that are not this nodefdctl's (another ABI, another object): the
 * new programs attach beside the old, get their policy (@prepare, on the new policy map's
 * outer fd; 0 or -errno having said why) and the old switch's state while still staged,
 * then take the old pins' place in one rename; only then are the old unpinned. Both judge
 * in between: there is no moment with neither, nor with the new ones unready.
 */
struct load_replace {
	int (*prepare)(void *ctx, int outer_fd);
	void *ctx;
	bool enabled;		/* the old pins' switch, carried over */
	int wait_ms;		/* out: how long the old programs took to leave */
	int gone;		/* out: old programs seen gone */
};

#define LOAD_OBJECT_ID_MAX 32
int load_run(const char *verb, bool report, struct load_replace *rep);
void load_object_id(char *buf, size_t size);
bool load_pins_current(void);
int load_links_check(const char *verb);

/* Locks (lock.c): an fd to close (lock_release) or -errno, having said why. */
int lock_maps(const char *verb);
int lock_daemon(const char *verb);
void lock_release(int fd);
/* The pid of the running daemon, -1 if one runs but its pid is unknown, 0 if none. */
pid_t lock_daemon_pid(void);

/*
 * Policies as the maps hold them (policymap.c): the hash map in entry 0 of
 * cgroup_policy, read into a list, changed, and swapped in whole.
 */
struct policy_item {
	__u64 id;
	struct nodefd_policy policy;
};

struct policy_list {
	struct policy_item *items;
	size_t n;
	size_t cap;
	__u32 map_id;		/* the map it was read from, or swapped in as */
};

int policy_list_read(int outer_fd, struct policy_list *l);
int policy_list_put(struct policy_list *l, __u64 id, const struct nodefd_policy *p);
int policy_list_del(struct policy_list *l, __u64 id);
/* Whether @a and @b hold the same policies for the same ids (sorts both). */
bool policy_list_same(struct policy_list *a, struct policy_list *b);
/* @id's entry of a list as policy_list_read() sorts it, or NULL. */
const struct nodefd_policy *policy_list_find(const struct policy_list *l, __u64 id);
void policy_list_free(struct policy_list *l);
int policy_swap(int outer_fd, struct policy_list *l);
int policy_outer_open(const char *verb);
/* Policy files: -errno with "FILE:LINE: reason" in @why. */
struct policyfile;
int policy_file_parse(const char *file, struct policyfile *pf, char *why, size_t size);
/*
 * A configuration file's bytes (@len of them, no NUL added; at most 1 MiB): a regular
 * file of root's that only root can write. @qfile is its name as messages quote it.
 */
int root_file_read(const char *file, const char *qfile, char **text, size_t *len, char *why,
		   size_t size);
/* ids[i] for entry i, 0 for a cgroup that does not exist (counted in *pending, not in @l). */
int policy_file_resolve(const char *file, const struct policyfile *pf, __u64 *ids,
			size_t *pending, struct policy_list *l, char *why, size_t size);
void policy_json_add(struct json_object *obj, const struct nodefd_policy *p);
void policy_format(const struct nodefd_policy *p, char *buf, size_t size);

/* The canary (canary.c). */
int canary_run(int events_fd, bool read_event, char *why, size_t size);

/* Verbs. */
int do_load(int argc, char **argv);
int do_unload(int argc, char **argv);
int do_status(int argc, char **argv);
int do_events(int argc, char **argv);
int do_policy(int argc, char **argv);
int do_metrics(int argc, char **argv);
int do_enable(int argc, char **argv);
int do_disable(int argc, char **argv);
int do_daemon(int argc, char **argv);

/* Events (event.c), for the events verb and the daemon. */
#define EVENT_TEXT_MAX 8192	/* bytes of an event's text form: escaped paths grow 4 times */
struct event_fmt {
	__s64 mono_to_real;	/* add to a CLOCK_MONOTONIC time to get the wall clock */
};

void event_fmt_init(struct event_fmt *f);
/*
 * The opener's cgroup, absolute: as recorded at the event (and remembered
 * for the summaries of its source), else found by id; NULL if neither.
 */
const char *event_cgroup_path(const struct nodefd_event *ev, char *buf, size_t size);
struct json_object *event_json(const struct event_fmt *f, const struct nodefd_event *ev);
/* The one-line text form, without a newline. */
void event_text(const struct event_fmt *f, const struct nodefd_event *ev, char *buf, size_t size);
void format_time(char *buf, size_t size, __s64 real_ns);
__s64 now_ns(clockid_t clk);

/*
 * Summary records of what the rate limit held back (heldback.c): each sweep reports, per
 * source, the events held back since the last report, by whichever reader swept.
 */
struct heldback {
	int sources_fd;		/* event_sources */
	int reported_fd;	/* event_reported */
};

typedef void (*heldback_fn)(void *ctx, const struct nodefd_event_source *src, __u64 count,
			    __u64 total);
/* Opens the pinned maps, saying why not under @verb: 0 or -errno. */
int heldback_open(struct heldback *h, const char *verb);
/* Calls @fn once for each source with events held back not reported yet: 0 or -errno. */
int heldback_sweep(struct heldback *h, heldback_fn fn, void *ctx);
void heldback_close(struct heldback *h);
/* A summary record: "type" "suppressed", the source, count and count_total. */
struct json_object *heldback_json(const struct nodefd_event_source *src, __u64 count,
				  __u64 total);
void heldback_text(const struct nodefd_event_source *src, __u64 count, __u64 total, char *buf,
		   size_t size);
/* The source as a struct nodefd_event whose other fields are 0, for filters. */
void heldback_event(const struct nodefd_event_source *src, struct nodefd_event *ev);

#endif /* __NODEFDCTL_H */
