// SPDX-License-Identifier: GPL-2.0
/* common.c - errors, JSON output, the kernel's LSM list, privilege and the names of the enums */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"

/* How output is written: set by the global options (cli.c), read by everything that prints. */
bool json_output;
bool pretty_output;
bool debug_output;

/*
 * Under systemd, standard output and error may be a stream to the journal,
 * which then reads a leading "<N>" of a line as its syslog priority
 * (sd-daemon(3)).  The stream is the one $JOURNAL_STREAM names by device
 * and inode (systemd.exec(5)); anywhere else no prefix is written.
 */
bool journal_stream(int fd)
{
	static int known[3] = { -1, -1, -1 };
	unsigned long long dev, ino;
	const char *env;
	struct stat st;

	if (fd < 0 || fd > 2)
		return false;
	if (known[fd] < 0) {
		env = getenv("JOURNAL_STREAM");
		known[fd] = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 && !fstat(fd, &st) &&
			    st.st_dev == dev && st.st_ino == ino;
	}
	return known[fd];
}

static void journal_prefix(FILE *f, int prio)
{
	if (journal_stream(fileno(f)))
		fprintf(f, "<%d>", prio);
}

/*
 * The one way errors reach the user: lowercase, naming the object and the
 * reason.  Under --json the error is the output, {"error": "..."} on stdout,
 * so that a script reading stdout always gets a JSON document.
 */
void p_err(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (json_output) {
		struct json_object *obj = json_object_new_object();

		json_add_str(obj, "error", msg);
		json_print_prio(obj, LOG_ERR);
		json_object_put(obj);
	} else {
		fflush(stdout);
		journal_prefix(stderr, LOG_ERR);
		fprintf(stderr, "nodefdctl: %s\n", msg);
	}
}

/* Warnings never go to stdout: they would break --json. */
void p_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	journal_prefix(stderr, LOG_WARNING);
	fprintf(stderr, "nodefdctl: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* strerror() in lowercase; err may be negative. A few may be used in one message. */
const char *errstr(int err)
{
	static char bufs[4][128];
	static unsigned int next;
	char *buf = bufs[next++ % 4];

	snprintf(buf, sizeof(bufs[0]), "%s", strerror(err < 0 ? -err : err));
	/* Only the first letter: "No such file" but never "BPF" or "ELF". */
	if (isupper((unsigned char)buf[0]) && !isupper((unsigned char)buf[1]))
		buf[0] = (char)tolower((unsigned char)buf[0]);
	return buf;
}

/*
 * Every record nodefdctl prints carries "schema": NODEFDCTL_JSON_SCHEMA, the
 * version of the promise nodefdctl(8) makes about its keys.
 */
void json_print(struct json_object *obj)
{
	json_print_prio(obj, LOG_INFO);
}

void json_print_prio(struct json_object *obj, int prio)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;

	if (json_object_is_type(obj, json_type_object) &&
	    !json_object_object_get_ex(obj, "schema", NULL))
		json_add_u64(obj, "schema", NODEFDCTL_JSON_SCHEMA);

	flags |= pretty_output ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN;
	journal_prefix(stdout, prio);
	puts(json_object_to_json_string_ext(obj, flags));
	fflush(stdout);
}

void json_add_str(struct json_object *obj, const char *key, const char *val)
{
	json_object_object_add(obj, key, val ? json_object_new_string(val) : NULL);
}

void json_add_u64(struct json_object *obj, const char *key, __u64 val)
{
	json_object_object_add(obj, key, json_object_new_uint64(val));
}

void json_add_s64(struct json_object *obj, const char *key, __s64 val)
{
	json_object_object_add(obj, key, json_object_new_int64(val));
}

void json_add_bool(struct json_object *obj, const char *key, bool val)
{
	json_object_object_add(obj, key, json_object_new_boolean(val));
}

/* libbpf's warnings (the verifier log among them) always; the rest with --debug. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN && !debug_output)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void libbpf_setup(void)
{
	libbpf_set_print(libbpf_print);
}

/*
 * The programs name processes by their pids in the initial PID namespace: the
 * load's canary, the daemon's own pid in its events and the pids events carry.
 * From a PID namespace of its own (a container without the host's), nodefdctl
 * would see none of them as they are, and the load would fail its proof for
 * no reason it could name.  0, or -ENOTSUP having said why.
 */
int pidns_host_check(const char *verb)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st)) {
		int err = -errno;

		p_err("%s: /proc/self/ns/pid: %s", verb, errstr(err));
		return err;
	}
	if (st.st_ino == PIDNS_INIT_INO)
		return 0;
	p_err("%s: runs in a PID namespace of its own (pid:[%llu], the host's is pid:[%u]): the programs name processes by the host's pids; run it in the host's PID namespace (hostPID: true, podman/docker --pid=host)",
	      verb, (unsigned long long)st.st_ino, PIDNS_INIT_INO);
	return -ENOTSUP;
}

/* The active LSMs, comma-separated, as securityfs lists them: 0 or -errno. */
int lsm_list_read(char *buf, size_t size)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(LSM_LIST_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		err = -errno;
	close(fd);
	if (err)
		return err;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

bool lsm_list_has(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	while (*p) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == len && !strncmp(p, name, len))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/*
 * Loading needs bpf_capable() and perfmon_capable() for an LSM program,
 * CAP_SYSLOG for the addresses in /proc/kallsyms that the __ksym externs
 * resolve from, and write access to bpffs (0700 root): in short, root
 * with CAP_SYS_ADMIN.  Checked up front so that the refusal says so
 * rather than some later EPERM.
 */
int require_privilege(const char *verb)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (geteuid() != 0) {
		p_err("%s: permission denied: needs root (effective uid 0 with CAP_SYS_ADMIN)",
		      verb);
		return -EPERM;
	}
	if (syscall(SYS_capget, &hdr, data)) {
		int err = -errno;

		p_err("%s: cannot read own capabilities: %s", verb, errstr(err));
		return err;
	}
	if (!(data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) ||
	    !(data[CAP_TO_INDEX(CAP_SYSLOG)].effective & CAP_TO_MASK(CAP_SYSLOG))) {
		p_err("%s: permission denied: needs CAP_SYS_ADMIN and CAP_SYSLOG in the effective set",
		      verb);
		return -EPERM;
	}
	return 0;
}

static const char *const kind_names[NODEFD_KIND_NR] = {
	[NODEFD_KIND_NONE] = "none",
	[NODEFD_KIND_FD] = "fd",
	[NODEFD_KIND_EXE] = "exe",
	[NODEFD_KIND_CWD] = "cwd",
	[NODEFD_KIND_ROOT] = "root",
	[NODEFD_KIND_MAP_FILES] = "map_files",
};

static const char *const reason_names[NODEFD_REASON_NR] = {
	[NODEFD_REASON_RULE] = "rule",
	[NODEFD_REASON_DEPTH] = "depth",
	[NODEFD_REASON_UNKNOWN_ACL] = "unknown_acl",
	[NODEFD_REASON_RACE] = "race",
	[NODEFD_REASON_NO_ORIGIN] = "no_origin",
	[NODEFD_REASON_UNLINKED] = "unlinked",
	[NODEFD_REASON_NOMEM] = "nomem",
	[NODEFD_REASON_STRICT] = "strict",
	[NODEFD_REASON_OUTSIDE_ROOT] = "outside_root",
	[NODEFD_REASON_FS_PERMISSION] = "fs_permission",
	[NODEFD_REASON_IDMAPPED] = "idmapped",
	[NODEFD_REASON_HIDDEN] = "hidden",
};

static const char *const hook_names[NODEFD_HOOK_NR] = {
	[NODEFD_HOOK_FOLLOW] = "follow",
	[NODEFD_HOOK_OPEN] = "open",
	[NODEFD_HOOK_LINK] = "link",
	[NODEFD_HOOK_TRUNCATE] = "truncate",
	[NODEFD_HOOK_EMPTYPATH] = "emptypath",
};

#define NAME_OF(table, v) ((v) < ARRAY_SIZE(table) ? (table)[v] : "unknown")

const char *kind_name(unsigned int kind)
{
	return NAME_OF(kind_names, kind);
}

const char *reason_name(unsigned int reason)
{
	return NAME_OF(reason_names, reason);
}

const char *hook_name(unsigned int hook)
{
	return NAME_OF(hook_names, hook);
}
