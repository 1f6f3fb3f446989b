/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* nodefd.h - the contract between the BPF programs and nodefdctl */
#ifndef __NODEFD_H
#define __NODEFD_H

/*
 * This header includes nothing: the BPF side brings vmlinux.h, user space
 * brings <linux/types.h>.  Every type is fixed-width so that both sides
 * agree on the layout; a change to any struct here changes
 * NODEFD_ABI_VERSION, which nodefdctl stores beside its pins and checks
 * before it adopts them.
 */

#define NODEFD_ABI_VERSION 9

/* Limits (the cost of each is in docs/design.md). */
#define NODEFD_MAX_DEPTH 4096	/* directories walked from a target up to the root */
#define NODEFD_GROUP_STEPS 17	/* halvings that search NGROUPS_MAX (65536) groups */
#define NODEFD_MAX_ACL 8192	/* POSIX ACL entries: as many as XATTR_SIZE_MAX holds */
#define NODEFD_MAX_CGROUP_LEVELS 4096 /* cgroup levels searched for a policy */
#define NODEFD_PATH_MAX 256	/* bytes of path in an event */
#define NODEFD_NAME_MAX 64	/* bytes of the refusing directory's name */
#define NODEFD_COMM_LEN 16
#define NODEFD_CGROUP_PATH_MAX 256 /* bytes of the opener's cgroup path in an event */
#define NODEFD_MAX_POLICIES 4096 /* cgroups with a policy of their own */
#define NODEFD_EVENT_BURST 8	/* events of one source and kind per window */
#define NODEFD_EVENT_UID_BURST 64 /* events of one uid per window beyond each kind's first */
#define NODEFD_EVENT_WINDOW_NS 1000000000ULL /* the window: a second */
#define NODEFD_EVENT_SOURCES 16384 /* sources and uids whose rates are kept (LRU) */

/**
 * enum nodefd_rule - the checks made on an open or walk through a magic link
 * @NODEFD_RULE_UPGRADE: the open may not ask for read or write access that
 *	the original open file does not have, unless the opener could open
 *	the file by name for it now (ancestors and reach hold); under a strict
 *	policy, not at all.
 * @NODEFD_RULE_APPEND: a file open for appending writes may not be
 *	reopened for writing without O_APPEND (or with O_TRUNC), with the
 *	same exception.
 * @NODEFD_RULE_ANCESTORS: the opener must now have search permission on
 *	every directory from the target up to its own root, for a walk that
 *	goes on through the link or ends on a directory, and for an open that
 *	asks more than the original file gives.
 * @NODEFD_RULE_REACH: the target must lie inside the opener's root and be
 *	linked in, in the same cases.
 * @NODEFD_RULE_NR: number of rules.
 */
enum nodefd_rule {
	NODEFD_RULE_UPGRADE = 0,
	NODEFD_RULE_APPEND = 1,
	NODEFD_RULE_ANCESTORS = 2,
	NODEFD_RULE_REACH = 3,
	NODEFD_RULE_NR = 4,
};

/**
 * enum nodefd_mode - what a rule does when it fails
 * @NODEFD_MODE_OFF: nothing.
 * @NODEFD_MODE_AUDIT: allow, count and report.
 * @NODEFD_MODE_ENFORCE: refuse with EACCES, count and report.
 * @NODEFD_MODE_NR: number of modes.
 */
enum nodefd_mode {
	NODEFD_MODE_OFF = 0,
	NODEFD_MODE_AUDIT = 1,
	NODEFD_MODE_ENFORCE = 2,
	NODEFD_MODE_NR = 3,
};

/**
 * enum nodefd_kind - the proc magic link that was followed
 * @NODEFD_KIND_NONE: none (not a magic link nodefd covers).
 * @NODEFD_KIND_FD: /proc/<pid>/fd/<n> and /proc/<pid>/task/<tid>/fd/<n>.
 * @NODEFD_KIND_EXE: /proc/<pid>/exe.
 * @NODEFD_KIND_CWD: /proc/<pid>/cwd.
 * @NODEFD_KIND_ROOT: /proc/<pid>/root.
 * @NODEFD_KIND_MAP_FILES: /proc/<pid>/map_files/<start>-<end>.
 * @NODEFD_KIND_NR: number of kinds.
 */
enum nodefd_kind {
	NODEFD_KIND_NONE = 0,
	NODEFD_KIND_FD = 1,
	NODEFD_KIND_EXE = 2,
	NODEFD_KIND_CWD = 3,
	NODEFD_KIND_ROOT = 4,
	NODEFD_KIND_MAP_FILES = 5,
	NODEFD_KIND_NR = 6,
};

/**
 * enum nodefd_reason - why a rule failed, beyond the rule itself
 * @NODEFD_REASON_RULE: the rule's own test failed.
 * @NODEFD_REASON_DEPTH: the ancestor walk hit NODEFD_MAX_DEPTH (fail closed).
 * @NODEFD_REASON_UNKNOWN_ACL: a directory's ACL was not cached or too long
 *	to judge (fail closed).
 * @NODEFD_REASON_RACE: the holder's fd changed between the link and the
 *	open (fail closed).
 * @NODEFD_REASON_NO_ORIGIN: the original open file could not be found
 *	(fail closed).
 * @NODEFD_REASON_UNLINKED: the target is no longer linked into any
 *	directory.
 * @NODEFD_REASON_NOMEM: no room to carry state from the link to the open
 *	(fail closed).
 * @NODEFD_REASON_STRICT: the access is beyond the original file's and the
 *	cgroup's policy is strict (NODEFD_POLICY_STRICT).
 * @NODEFD_REASON_OUTSIDE_ROOT: the target lies outside the opener's root.
 * @NODEFD_REASON_FS_PERMISSION: a directory's filesystem decides search
 *	permission itself (NFS, FUSE without default_permissions), which
 *	cannot be known from BPF (fail closed).
 * @NODEFD_REASON_IDMAPPED: a directory on an idmapped mount, whose id
 *	mapping nodefd does not apply (fail closed).
 * @NODEFD_REASON_HIDDEN: a mount of the opener's namespace covers the
 *	target or a directory above it: a lookup by name goes into that
 *	mount and never reaches the target.
 * @NODEFD_REASON_NR: number of reasons.
 *
 * For the upgrade and append rules, which refuse only what the opener
 * could not have by name either, the reason says why not by name: rule
 * (@ancestor names the directory that refuses search), unknown_acl,
 * fs_permission, idmapped, depth, unlinked, outside_root or hidden; or
 * strict.
 */
enum nodefd_reason {
	NODEFD_REASON_RULE = 0,
	NODEFD_REASON_DEPTH = 1,
	NODEFD_REASON_UNKNOWN_ACL = 2,
	NODEFD_REASON_RACE = 3,
	NODEFD_REASON_NO_ORIGIN = 4,
	NODEFD_REASON_UNLINKED = 5,
	NODEFD_REASON_NOMEM = 6,
	NODEFD_REASON_STRICT = 7,
	NODEFD_REASON_OUTSIDE_ROOT = 8,
	NODEFD_REASON_FS_PERMISSION = 9,
	NODEFD_REASON_IDMAPPED = 10,
	NODEFD_REASON_HIDDEN = 11,
	NODEFD_REASON_NR = 12,
};

/* Counters kept per rule and reason: room for every reason (a power of two). */
#define NODEFD_REASON_SLOTS 16


/**
 * enum nodefd_hook - where the decision was made
 * @NODEFD_HOOK_FOLLOW: when the link was followed (walks that go on
 *	through the link, and opens that do not reach file_open).
 * @NODEFD_HOOK_OPEN: when the file was opened through the link.
 * @NODEFD_HOOK_LINK: when an open file was given a new name, with
 *	linkat(fd, "", ..., AT_EMPTY_PATH) (no magic link, the same effect) or
 *	through the link.
 * @NODEFD_HOOK_TRUNCATE: when truncate(2) acted on the link's target.
 * @NODEFD_HOOK_EMPTYPATH: when the file behind an fd was opened again by
 *	the empty path, with no walk (O_EMPTYPATH since 7.2,
 *	execveat(AT_EMPTY_PATH)): no magic link, the same effect.
 * @NODEFD_HOOK_NR: number of hooks.
 */
enum nodefd_hook {
	NODEFD_HOOK_FOLLOW = 0,
	NODEFD_HOOK_OPEN = 1,
	NODEFD_HOOK_LINK = 2,
	NODEFD_HOOK_TRUNCATE = 3,
	NODEFD_HOOK_EMPTYPATH = 4,
	NODEFD_HOOK_NR = 5,
};

/* nodefd_policy.flags: relaxations and tightenings of the rules. */
#define NODEFD_POLICY_PATH_READ (1U << 0) /* an O_PATH/O_NODE origin may be reopened read-only */
/*
 * The fd's access is a ceiling: a reopen through the link never gains access the original
 * file did not have, even where the opener could open the file by name for it.
 */
#define NODEFD_POLICY_STRICT (1U << 1)

/**
 * struct nodefd_policy - what nodefd does for the tasks of one cgroup
 * @rule_mode: an enum nodefd_mode for each enum nodefd_rule.
 * @flags: NODEFD_POLICY_* relaxations.
 */
struct nodefd_policy {
	__u8 rule_mode[NODEFD_RULE_NR];
	__u32 flags;
};

/**
 * struct nodefd_config - global switches, entry 0 of the settings map
 * @enabled: 0 turns every check off at once, without detaching.
 * @init_mnt_ns: inode number of the initial mount namespace (of PID 1).
 * @init_root_dev: st_dev of PID 1's root directory, in the kernel's encoding
 *	(MKDEV: major << 20 | minor).
 * @init_root_ino: st_ino of PID 1's root directory. A task in the initial
 *	mount namespace whose root is that directory is not confined by the
 *	reach rule: it sees the whole tree (after an initramfs, PID 1's root is
 *	not the namespace's root mount, so that cannot be the test).
 * @init_root_mnt_id: the mount id of PID 1's root directory's mount: a bind
 *	mount of the same directory is another mount, which may show less.
 * @canary_tgid: a process for which every rule is enforced whatever the
 *	policy says, so that nodefdctl can prove the programs run; 0 for none.
 * @dropped_reported: the total of NODEFD_CNT_EVENTS_DROPPED that a
 *	nodefdctl daemon last reported, so that the next one reports only
 *	the events lost since; the BPF programs never read it.
 *
 * Policies live in the cgroup_policy hash map, keyed by cgroup id; a task
 * takes the entry of its nearest cgroup that has one, and with none at
 * all every rule is enforced.
 */
struct nodefd_config {
	__u32 enabled;
	__u32 init_mnt_ns;
	__u32 canary_tgid;
	__u32 init_root_dev;
	__u64 dropped_reported;
	__u64 init_root_ino;
	__u32 init_root_mnt_id;
	__u32 pad;
};

/**
 * struct nodefd_kconst - kernel values that are #defines, which CO-RE cannot
 *	relocate: the running kernel's, written by nodefdctl into the object's
 *	read-only data before load (src/kconst.c says where each comes from).
 * @acl_not_cached: ACL_NOT_CACHED, an inode's i_acl before it is read.
 * @acl_dont_cache: ACL_DONT_CACHE, i_acl of an inode whose ACL is never
 *	cached (overlayfs).
 * @mnt_ns_internal: MNT_NS_INTERNAL, mnt_ns of the kernel's internal mounts.
 * @lookup_parent: LOOKUP_PARENT, a walk still before its last component.
 * @lookup_open: LOOKUP_OPEN, the last component of an open.
 * @lookup_empty: LOOKUP_EMPTY, a walk that accepts an empty path.
 * @nd_jumped: ND_JUMPED, nameidata.state after a jump (magic link, "..").
 * @fmode_read: FMODE_READ.
 * @fmode_write: FMODE_WRITE.
 * @fmode_exec: FMODE_EXEC.
 * @fmode_path: FMODE_PATH.
 * @sb_posixacl: SB_POSIXACL, a superblock whose inodes may have ACLs.
 * @dcache_mounted: DCACHE_MOUNTED, d_flags of a directory something is
 *	mounted on (in any mount namespace).
 * @ts_compat: TS_COMPAT, thread_info.status during a 32-bit system call.
 * @pf_io_worker: PF_IO_WORKER, task_struct.flags of an io_uring worker.
 */
struct nodefd_kconst {
	__u64 acl_not_cached;
	__u64 acl_dont_cache;
	__u64 mnt_ns_internal;
	__u32 lookup_parent;
	__u32 lookup_open;
	__u32 lookup_empty;
	__u32 nd_jumped;
	__u32 fmode_read;
	__u32 fmode_write;
	__u32 fmode_exec;
	__u32 fmode_path;
	__u32 sb_posixacl;
	__u32 ts_compat;
	__u32 pf_io_worker;
	__u32 dcache_mounted;
};

/* struct nodefd_event's access bits: those of f_mode on 6.1 to 7.3. */
#define NODEFD_EV_MODE_READ 0x1
#define NODEFD_EV_MODE_WRITE 0x2
#define NODEFD_EV_MODE_EXEC 0x20
#define NODEFD_EV_MODE_PATH 0x4000

/* struct nodefd_event's flags. */
#define NODEFD_EV_CGROUP_CUT 0x1 /* @cgroup lacks its top (too deep) or its end (too long) */

/**
 * struct nodefd_event - one refused or audited open or walk
 * @ts_ns: CLOCK_MONOTONIC time of the decision.
 * @cgroup_id: cgroup v2 id of the opener.
 * @pid: opener's process id (tgid).
 * @tid: opener's thread id.
 * @uid: opener's real uid.
 * @holder_pid: the process whose fd, exe, cwd, root or map was followed.
 * @holder_fd: the fd number for NODEFD_KIND_FD, else -1.
 * @orig_flags: f_flags of the original open file (0 if it has none).
 * @orig_mode: access of the original open file, NODEFD_EV_MODE_* bits
 *	(the kernel's f_mode bits, which are its own, translated).
 * @req_flags: f_flags the new open asks for (0 for a walk).
 * @req_mode: access the new open asks for, NODEFD_EV_MODE_* (0 for a walk).
 * @rule: the enum nodefd_rule that failed.
 * @action: NODEFD_MODE_AUDIT (allowed) or NODEFD_MODE_ENFORCE (refused).
 * @kind: the enum nodefd_kind followed.
 * @reason: an enum nodefd_reason.
 * @hook: an enum nodefd_hook.
 * @flags: NODEFD_EV_* bits.
 * @pad: zero.
 * @comm: opener's command name.
 * @path: the target's path as seen from the global root, NUL-terminated
 *	(a trailing part may be cut off).
 * @ancestor: name of the directory that refused search permission (rule
 *	ancestors); empty otherwise.
 * @cgroup: the opener's cgroup v2 path below the hierarchy's root
 *	("/machine.slice/libpod-ID.scope/container"; "" for the root), read
 *	at the event: it names the cgroup (and the container or unit in it)
 *	even once the cgroup is gone. NODEFD_EV_CGROUP_CUT when incomplete.
 * @suppressed: events of the same source (uid, cgroup) and kind (rule, reason,
 *	action, hook) held back by the rate limit since this source's last
 *	event sent.
 */
struct nodefd_event {
	__u64 ts_ns;
	__u64 cgroup_id;
	__u32 pid;
	__u32 tid;
	__u32 uid;
	__u32 holder_pid;
	__s32 holder_fd;
	__u32 orig_flags;
	__u32 orig_mode;
	__u32 req_flags;
	__u32 req_mode;
	__u8 rule;
	__u8 action;
	__u8 kind;
	__u8 reason;
	__u8 hook;
	__u8 flags;
	__u8 pad[2];
	char comm[NODEFD_COMM_LEN];
	char path[NODEFD_PATH_MAX];
	char ancestor[NODEFD_NAME_MAX];
	char cgroup[NODEFD_CGROUP_PATH_MAX];
	__u32 suppressed;
};

/**
 * struct nodefd_event_source - who and what an event is about, for its rate
 *	(the key of the event_sources map)
 * @cgroup_id: the opener's cgroup.
 * @uid: the opener's real uid.
 * @what: rule | reason << 8 | action << 16 | hook << 24.
 */
struct nodefd_event_source {
	__u64 cgroup_id;
	__u32 uid;
	__u32 what;
};

/**
 * struct nodefd_event_rate - a source's (or a uid's) events in the current
 *	window (the value of the event_sources and event_uids maps)
 * @window: the window counted: ts_ns / NODEFD_EVENT_WINDOW_NS.
 * @sent: events sent in it.
 * @suppressed: events held back that no event sent has reported yet.
 * @held: every event of the source held back since its entry was made;
 *	never goes down. nodefdctl's summary records report what it gained
 *	(the event_reported map keeps what they reported).
 */
struct nodefd_event_rate {
	__u64 window;
	__u32 sent;
	__u32 suppressed;
	__u64 held;
};

/**
 * enum nodefd_counter - indexes into the per-CPU counters array
 * @NODEFD_CNT_CHECKED: opens and walks through a covered magic link that
 *	were checked.
 * @NODEFD_CNT_DENIED: first of NODEFD_RULE_NR counters of refusals by rule.
 * @NODEFD_CNT_AUDITED: first of NODEFD_RULE_NR counters of audits by rule.
 * @NODEFD_CNT_DEPTH_LIMIT: ancestor walks that hit NODEFD_MAX_DEPTH.
 * @NODEFD_CNT_RACE: fd changes between link and open.
 * @NODEFD_CNT_EVENTS_DROPPED: events lost because the ring buffer was full.
 * @NODEFD_CNT_EVENTS_SUPPRESSED: events held back by the rate limit (each
 *	reported by a summary record of nodefdctl, and by the count of its
 *	source's next event sent).
 * @NODEFD_CNT_NOMEM: task state that could not be stored.
 * @NODEFD_CNT_BY_NAME: accesses beyond the original file's that were allowed
 *	because the opener could have them by name.
 * @NODEFD_CNT_DENIED_BY: first of NODEFD_RULE_NR * NODEFD_REASON_SLOTS
 *	counters of refusals by rule and reason (rule * NODEFD_REASON_SLOTS +
 *	reason); summed over the reasons, a rule's NODEFD_CNT_DENIED.
 * @NODEFD_CNT_AUDITED_BY: the same for audits.
 * @NODEFD_CNT_JUMP_WATCHED: walks through another process's fd, cwd or root
 *	link, by a walker that could not take it, whose jump the guard watched
 *	(a kernel without a hook at the jump; with one, nothing is watched).
 * @NODEFD_CNT_NR: number of counters.
 */
enum nodefd_counter {
	NODEFD_CNT_CHECKED = 0,
	NODEFD_CNT_DENIED = 1,
	NODEFD_CNT_AUDITED = NODEFD_CNT_DENIED + NODEFD_RULE_NR,
	NODEFD_CNT_DEPTH_LIMIT = NODEFD_CNT_AUDITED + NODEFD_RULE_NR,
	NODEFD_CNT_RACE = NODEFD_CNT_DEPTH_LIMIT + 1,
	NODEFD_CNT_EVENTS_DROPPED = NODEFD_CNT_RACE + 1,
	NODEFD_CNT_NOMEM = NODEFD_CNT_EVENTS_DROPPED + 1,
	NODEFD_CNT_BY_NAME = NODEFD_CNT_NOMEM + 1,
	NODEFD_CNT_EVENTS_SUPPRESSED = NODEFD_CNT_BY_NAME + 1,
	NODEFD_CNT_DENIED_BY = NODEFD_CNT_EVENTS_SUPPRESSED + 1,
	NODEFD_CNT_AUDITED_BY = NODEFD_CNT_DENIED_BY + NODEFD_RULE_NR * NODEFD_REASON_SLOTS,
	NODEFD_CNT_JUMP_WATCHED = NODEFD_CNT_AUDITED_BY + NODEFD_RULE_NR * NODEFD_REASON_SLOTS,
	NODEFD_CNT_NR = NODEFD_CNT_JUMP_WATCHED + 1,
};

#endif /* __NODEFD_H */
