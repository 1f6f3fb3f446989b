// SPDX-License-Identifier: GPL-2.0
/* loader.c - the middle layer: attach, prove with the canary, pin; for load and the daemon */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"
#include "nodefd.skel.h"
#include "kconst.h"

/*
 * The value of the enumerator @name in the running kernel's BTF (vmlinux, then the module
 * @module's), or -1. For kernel enums without a name, which CO-RE cannot relocate.
 */
static long btf_enum_value(const char *name, const char *module)
{
	struct btf *vmlinux = btf__load_vmlinux_btf(), *mod = NULL;
	long long value = -1;

	if (!vmlinux)
		return -1;
	if (kconst_btf_enum(vmlinux, name, &value)) {
		value = -1;
		mod = btf__load_module_btf(module, vmlinux);
		if (mod && kconst_btf_enum(mod, name, &value))
			value = -1;
	}
	btf__free(mod);
	btf__free(vmlinux);
	return (long)value;
}

/*
 * The kernel's #define values (src/kconst.c) for the running kernel: from its BTF where it
 * has them, else by its release. 0, or -errno having said why.
 */
static int kconst_load(const char *verb, struct nodefd_kconst *k)
{
	struct btf *vmlinux;
	unsigned int version;
	int err;

	err = kconst_running_version(&version);
	if (err) {
		p_err("%s: cannot tell the kernel's release from uname(2): %s", verb, errstr(err));
		return err;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		err = -errno;
		p_err("%s: cannot read the kernel's BTF: %s", verb, errstr(err));
		return err;
	}
	kconst_resolve(vmlinux, version, k);
	btf__free(vmlinux);
	return 0;
}

/* Does the running kernel's BTF have the function @name (a kfunc nodefd can call)? */
static bool btf_has_func(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool found;

	if (!vmlinux)
		return false;
	found = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return found;
}

/*
 * Does the kernel call an LSM hook where a magic link jumps (magiclink_jump, which
 * kernel-config/patches/0005 adds)? The BPF LSM's attach point for each hook is a function
 * bpf_lsm_<hook>, in the BTF of every kernel built with it.
 */
static bool jump_hook_present(void)
{
	return btf_has_func("bpf_lsm_" JUMP_HOOK_NAME);
}

/*
 * NODEFD_FORCE_JUMP=guard loads the stock kernels' guard even where the kernel has the hook:
 * to measure one against the other on the same kernel (make bench), or to run the suites
 * with each. 1 when it says so, 0 when it is unset or empty, -EINVAL having said why for any
 * other value.
 */
static int jump_guard_forced(const char *verb)
{
	const char *e = getenv(JUMP_FORCE_ENV);

	if (!e || !*e)
		return 0;
	if (strcmp(e, "guard")) {
		p_err("%s: %s=%s: the only value is \"guard\" (the hook is used wherever the kernel has it)",
		      verb, JUMP_FORCE_ENV, e);
		return -EINVAL;
	}
	return 1;
}

/*
 * The link hook comes in two programs (bpf/compat.bpf.h, CAST()): nodefd_inode_follow_link___cast
 * reads through bpf_rdonly_cast(), which 6.2 and later have, the plain one with probe reads;
 * 6.1's verifier refuses a program that names the kfunc at all. Exactly one of them loads.
 */
static void variants_choose(struct nodefd *skel, bool guard_forced)
{
	bool cast = btf_has_func("bpf_rdonly_cast");
	bool hook = !guard_forced && jump_hook_present();
	struct bpf_program *guard_only[] = {
		skel->progs.nodefd_path_mknod, skel->progs.nodefd_path_mkdir,
		skel->progs.nodefd_path_rmdir, skel->progs.nodefd_path_unlink,
		skel->progs.nodefd_path_symlink, skel->progs.nodefd_path_rename,
		skel->progs.nodefd_path_chmod, skel->progs.nodefd_task_free,
	};

	bpf_program__set_autoload(skel->progs.nodefd_inode_follow_link, !cast);
	bpf_program__set_autoload(skel->progs.nodefd_inode_follow_link___cast, cast);
	/* The walk's way of reading a dentry, by the same line (bpf/reach.bpf.h, dentry_up()). */
	skel->rodata->dentry_head_read = cast;
	/*
	 * The jump of a magic link: judged in the kernel's hook there where it has one, which
	 * refuses the jump itself; else by tracing nd_jump_link and refusing afterwards
	 * (bpf/jump.bpf.h). Exactly one of the two loads.
	 */
	bpf_program__set_autoload(skel->progs.nodefd_nd_jump_link, !hook);
	bpf_program__set_autoload(skel->progs.nodefd_nd_jump_link___hook, hook);
	/*
	 * What only the guard needs: the hooks that refuse what a walk refused after its jump
	 * would do, and the end of a task with a watch or a refused walk still counted. With the
	 * hook nothing is watched or refused after the jump: they are not loaded.
	 */
	for (size_t i = 0; i < sizeof(guard_only) / sizeof(guard_only[0]); i++)
		bpf_program__set_autoload(guard_only[i], !hook);
	skel->rodata->jump_hook = hook;
}

/* A variant's link is pinned under its program's name without the ___ suffix. */
static const char *pin_name(const char *prog, char *buf, size_t size)
{
	const char *v = strstr(prog, "___");

	snprintf(buf, size, "%.*s", v ? (int)(v - prog) : (int)strlen(prog), prog);
	return buf;
}

/* Pins every map under its name and every link under its program's name. */
static int load_pin(struct nodefd *skel, const char *staging, char *what, size_t size)
{
	struct bpf_object_skeleton *s = skel->skeleton;
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, skel->obj) {
		/* .rodata and friends: nothing anyone reads back. */
		if (bpf_map__is_internal(map))
			continue;
		err = pin_staging_add(staging, NULL, bpf_map__name(map), bpf_map__fd(map));
		if (err) {
			snprintf(what, size, "map %s", bpf_map__name(map));
			return err;
		}
	}
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_link *link = *s->progs[i].link;
		char name[BPF_OBJ_NAME_LEN * 4];

		if (!link)
			continue;
		pin_name(s->progs[i].name, name, sizeof(name));
		err = pin_staging_add(staging, "links", name, bpf_link__fd(link));
		if (err) {
			snprintf(what, size, "link %.56s", name);
			return err;
		}
	}
	return 0;
}

/*
 * The instructions the verifier walked for the program @fd: the verifier gives up at
 * 1 000 000 (BPF_COMPLEXITY_LIMIT_INSNS), and a test holds nodefd to half of that.
 */
static void verified_insns_add(struct json_object *p, int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    len >= offsetof(struct bpf_prog_info, verified_insns) + sizeof(info.verified_insns))
		json_add_u64(p, "verified_insns", info.verified_insns);
}

static void load_report(struct nodefd *skel)
{
	struct bpf_object_skeleton *s = skel->skeleton;
	struct json_object *obj, *progs;
	int attached = 0;

	for (int i = 0; i < s->prog_cnt; i++)
		attached += *s->progs[i].link != NULL;
	if (!json_output) {
		printf("nodefd: loaded and enforcing: %d programs attached, canary refused, pinned in %s\n",
		       attached, PIN_DIR);
		return;
	}
	obj = json_object_new_object();
	progs = json_object_new_array();
	json_add_bool(obj, "loaded", true);
	json_add_bool(obj, "enabled", true);
	json_add_str(obj, "pin_dir", PIN_DIR);
	json_add_u64(obj, "abi_version", NODEFD_ABI_VERSION);
	json_add_str(obj, "canary", "refused");
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_link *link = *s->progs[i].link;
		struct bpf_link_info info = {};
		char name[BPF_OBJ_NAME_LEN * 4];
		__u32 len = sizeof(info);
		struct json_object *p;

		if (!link)
			continue;	/* the variant not loaded here */
		p = json_object_new_object();
		json_add_str(p, "name", pin_name(s->progs[i].name, name, sizeof(name)));
		json_add_str(p, "program", s->progs[i].name);
		if (!bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len)) {
			json_add_u64(p, "link_id", info.id);
			json_add_u64(p, "prog_id", info.prog_id);
		}
		verified_insns_add(p, bpf_program__fd(*s->progs[i].prog));
		json_object_array_add(progs, p);
	}
	json_object_object_add(obj, "programs", progs);
	json_print(obj);
	json_object_put(obj);
}

/*
 * The identity of the BPF object built into this nodefdctl: a hash of its bytes (FNV-1a,
 * 64 bits). Not a defence (only root writes pins), a name: a package that brings another
 * object replaces the programs, a restart with the same one adopts them.
 */
void load_object_id(char *buf, size_t size)
{
	const unsigned char *p;
	__u64 h = 0xcbf29ce484222325ULL;
	size_t n;

	p = nodefd__elf_bytes(&n);
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	snprintf(buf, size, "fnv1a64-%016llx", (unsigned long long)h);
}

/* Whether the pins are of this nodefdctl's ABI and object (false when they cannot be read). */
bool load_pins_current(void)
{
	char mine[LOAD_OBJECT_ID_MAX], theirs[LOAD_OBJECT_ID_MAX];
	int abi;

	if (pin_abi_read(&abi) || abi != NODEFD_ABI_VERSION)
		return false;
	if (pin_object_read(theirs, sizeof(theirs)))
		return false;
	load_object_id(mine, sizeof(mine));
	return !strcmp(mine, theirs);
}

/* Unpins the old tree an exchange left at @dir and waits for its programs to leave. */
static void load_old_remove(const char *verb, const char *dir, struct load_replace *rep)
{
	struct pin_links links;
	int err;

	if (pin_links_read(dir, &links))
		links.n = 0;
	err = pin_tree_remove(dir);
	if (err) {
		p_warn("%s: the new programs are in place, but the old pins in %s cannot be removed: %s; both judge until they are",
		       verb, dir, errstr(err));
		return;
	}
	err = pin_links_wait_gone(&links, UNLOAD_WAIT_MS, &rep->wait_ms);
	if (err)
		p_warn("%s: the old programs were unpinned, but %d s later the kernel still has some: %s",
		       verb, UNLOAD_WAIT_MS / 1000, errstr(err));
	else
		rep->gone = links.n;
}

/*
 * The canary of a replacement, once the old programs are gone: judged whatever the switch
 * says for everyone else, its reopen must be refused, and the caller then looks for its event
 * among everyone's. Failing, the new programs stay (the old are gone): said, for the caller
 * to fail on.
 */
static int load_canary_after(const char *verb, struct nodefd *skel, struct nodefd_config *cfg)
{
	char why[256];
	int err, err2;

	cfg->canary_tgid = (__u32)getpid();
	err = settings_write(bpf_map__fd(skel->maps.settings), cfg);
	if (err) {
		p_err("%s: cannot write the settings map: %s", verb, errstr(err));
		return err;
	}
	/* Its event is the daemon's to read: the ring buffer holds everyone's by now. */
	err = canary_run(bpf_map__fd(skel->maps.events), false, why, sizeof(why));
	cfg->canary_tgid = 0;
	err2 = settings_write(bpf_map__fd(skel->maps.settings), cfg);
	if (err)
		p_err("%s: %s: the new programs replaced the old but do not run; 'nodefdctl unload' and load again",
		      verb, why);
	else if (err2)
		p_err("%s: cannot write the settings map: %s", verb, errstr(err2));
	return err ?: err2;
}

/*
 * Loads, proves and pins, with messages prefixed by @verb.  0; -EEXIST,
 * said by nobody, when nodefd is already loaded (or got loaded meanwhile);
 * else -errno, having said why.  The caller has checked privilege.  With
 * @rep, in place of the pins there (struct load_replace); -ENOENT, said by
 * nobody, when there are none.
 */
int load_run(const char *verb, bool report, struct load_replace *rep)
{
	char object[LOAD_OBJECT_ID_MAX];
	char lsm[512], staging[PATH_MAX], why[256], what[64];
	struct nodefd_config cfg = {};
	sigset_t block, old;
	struct nodefd *skel;
	struct stat st, root_st;
	struct statx root_stx;
	int err, guard_forced;

	err = lsm_list_read(lsm, sizeof(lsm));
	if (err) {
		p_err("%s: bpf is not in the kernel's LSM list (cannot read %s: %s): the programs would attach and never run",
		      verb, LSM_LIST_PATH, errstr(err));
		return err;
	}
	if (!lsm_list_has(lsm, "bpf")) {
		p_err("%s: bpf is not in the kernel's LSM list (%s): the programs would attach and never run; boot with lsm=%s,bpf",
		      verb, lsm, lsm);
		return -ENOTSUP;
	}
	err = pidns_host_check(verb);
	if (err)
		return err;
	guard_forced = jump_guard_forced(verb);
	if (guard_forced < 0)
		return guard_forced;
	err = pin_root_check();
	if (err) {
		p_err("%s: %s: %s", verb, PIN_ROOT,
		      err == -ENOTSUP ? "not a bpf filesystem (mount -t bpf bpf " PIN_ROOT ")" :
					errstr(err));
		return err;
	}
	err = pin_state();
	if (err > 0 && !rep)
		return -EEXIST;
	if (!err && rep)
		return -ENOENT;	/* nothing to replace: the caller looked */
	if (err < 0) {
		p_err("%s: %s: %s", verb, PIN_DIR, errstr(err));
		return err;
	}
	if (stat("/proc/1/ns/mnt", &st)) {
		err = -errno;
		p_err("%s: /proc/1/ns/mnt: %s", verb, errstr(err));
		return err;
	}
	/* What the reach rule calls unconfined: PID 1's root directory (docs/design.md). */
	if (stat("/proc/1/root/", &root_st)) {
		err = -errno;
		p_err("%s: /proc/1/root: %s", verb, errstr(err));
		return err;
	}
	/* And the mount it is on: a bind mount of it is another root. */
	if (statx(AT_FDCWD, "/proc/1/root/", 0, STATX_MNT_ID, &root_stx) ||
	    !(root_stx.stx_mask & STATX_MNT_ID)) {
		err = errno ? -errno : -ENOTSUP;
		p_err("%s: the mount id of /proc/1/root: %s", verb, errstr(err));
		return err;
	}

	skel = nodefd__open();
	if (!skel) {
		err = -errno;
		p_err("%s: cannot open the BPF object: %s", verb, errstr(err));
		return err;
	}
	variants_choose(skel, guard_forced);
	err = kconst_load(verb, (struct nodefd_kconst *)&skel->rodata->kconst);
	if (err)
		goto out_destroy_skel;
	/*
	 * EXT4_STATE_XATTR moved from 2 to 1 when EXT4_STATE_JDATA went (between 6.1 and 6.12),
	 * in an enum with no name: read it from the kernel's BTF. Not found: no ext4 shortcut.
	 */
	skel->rodata->ext4_state_xattr = (int)btf_enum_value("EXT4_STATE_XATTR", "ext4");
	/* Whether Yama's ptrace_scope decides who could take another process's fds. */
	skel->rodata->yama_active = lsm_list_has(lsm, "yama");
	err = nodefd__load(skel);
	if (err) {
		p_err("%s: the kernel refused the BPF object: %s (libbpf's messages above say why)",
		      verb, errstr(err));
		goto out_destroy_skel;
	}

	/*
	 * Off for everyone but the canary until the canary has been refused:
	 * nobody else is judged by programs not yet shown to run.
	 */
	cfg.enabled = 0;
	/* A namespace's inode number is the kernel's 32-bit ns_common.inum. */
	cfg.init_mnt_ns = (__u32)st.st_ino;
	cfg.init_root_dev = major(root_st.st_dev) << 20 | minor(root_st.st_dev);
	cfg.init_root_ino = root_st.st_ino;
	cfg.init_root_mnt_id = (__u32)root_stx.stx_mnt_id;
	cfg.canary_tgid = (__u32)getpid();
	err = settings_write(bpf_map__fd(skel->maps.settings), &cfg);
	if (err) {
		p_err("%s: cannot write the settings map: %s", verb, errstr(err));
		goto out_destroy_skel;
	}
	err = nodefd__attach(skel);
	if (err) {
		p_err("%s: cannot attach the programs: %s", verb, errstr(err));
		goto out_destroy_skel;
	}
	/*
	 * Beside other pins, the canary waits until they are gone: their programs, attached
	 * first, refuse its reopen before ours run (the first BPF LSM program to refuse ends
	 * the hook's chain), so ours could not show that they run.
	 */
	if (!rep) {
		err = canary_run(bpf_map__fd(skel->maps.events), true, why, sizeof(why));
		if (err) {
			p_err("%s: %s: the programs attached but do not run; detached them", verb,
			      why);
			goto out_destroy_skel;
		}
	}
	/* In place of other pins: the policy before anyone is judged, and their switch. */
	if (rep && rep->prepare) {
		err = rep->prepare(rep->ctx, bpf_map__fd(skel->maps.cgroup_policy));
		if (err)
			goto out_destroy_skel;
	}
	cfg.enabled = rep ? rep->enabled : 1;
	cfg.canary_tgid = 0;
	err = settings_write(bpf_map__fd(skel->maps.settings), &cfg);
	if (err) {
		p_err("%s: cannot write the settings map: %s", verb, errstr(err));
		goto out_destroy_skel;
	}

	/* A signal between the first pin and the rename would leave a staging directory behind. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);
	err = pin_staging_create(staging, sizeof(staging));
	if (err) {
		p_err("%s: cannot create %s: %s", verb, staging, errstr(err));
		goto out_unblock;
	}
	err = load_pin(skel, staging, what, sizeof(what));
	if (err) {
		p_err("%s: cannot pin %s in %s: %s", verb, what, staging, errstr(err));
		goto out_remove_staging;
	}
	load_object_id(object, sizeof(object));
	err = rep ? pin_staging_exchange(staging, object) : pin_staging_publish(staging, object);
	if (err == -EEXIST)
		goto out_remove_staging;
	if (err) {
		p_err("%s: cannot %s %s %s %s: %s", verb, rep ? "exchange" : "move", staging,
		      rep ? "with" : "to", PIN_DIR, errstr(err));
		goto out_remove_staging;
	}
	/* Exchanged: the old tree is at the staging path now; in place, the new ones judge. */
	if (rep) {
		load_old_remove(verb, staging, rep);
		err = load_canary_after(verb, skel, &cfg);
		if (err) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			nodefd__destroy(skel);
			return err;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);

	if (report)
		load_report(skel);
	/* The pinned links keep the programs attached; closing ours detaches nothing. */
	nodefd__destroy(skel);
	return 0;

out_remove_staging:
	if (pin_tree_remove(staging))
		p_warn("%s: cannot remove it; the next load will", staging);
out_unblock:
	sigprocmask(SIG_SETMASK, &old, NULL);
out_destroy_skel:
	nodefd__destroy(skel);
	return err;
}

/* Every program's link is pinned: 0, or -ENOENT having said which is missing. */
int load_links_check(const char *verb)
{
	struct bpf_object_skeleton *s;
	struct nodefd *skel;
	char path[PATH_MAX];
	int err = 0;

	skel = nodefd__open();
	if (!skel) {
		err = -errno;
		p_err("%s: cannot open the BPF object: %s", verb, errstr(err));
		return err;
	}
	/* Either jump program: both pin their link under the same name. */
	variants_choose(skel, false);
	s = skel->skeleton;
	for (int i = 0; i < s->prog_cnt && !err; i++) {
		char name[BPF_OBJ_NAME_LEN * 4];

		if (!bpf_program__autoload(*s->progs[i].prog))
			continue;
		snprintf(path, sizeof(path), "%s/%s", PIN_LINKS_DIR,
			 pin_name(s->progs[i].name, name, sizeof(name)));
		if (access(path, F_OK)) {
			err = -errno;
			p_err("%s: %s: %s: nodefd is not (fully) attached; 'nodefdctl unload' and load again",
			      verb, path, errstr(err));
		}
	}
	nodefd__destroy(skel);
	return err;
}
