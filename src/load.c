// SPDX-License-Identifier: GPL-2.0
/* load.c - the load and unload verbs: attach, prove, pin; unpin */

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"
#include "nodefd.skel.h"

static void load_help(void)
{
	printf("Usage: nodefdctl [-j|-p] load\n"
	       "\n"
	       "Loads and attaches the nodefd BPF LSM programs, proves with a canary reopen\n"
	       "that they run, then pins maps and links under " PIN_DIR " so that\n"
	       "enforcement stays on after nodefdctl exits. Refuses when bpf is not an\n"
	       "active LSM, when nodefd is already loaded, or when the canary is not refused.\n");
}

static void unload_help(void)
{
	printf("Usage: nodefdctl [-j|-p] unload\n"
	       "\n"
	       "Unpins the links (which detaches the programs), then the maps, and removes\n"
	       PIN_DIR ". Returns once the kernel has let go of every link and program\n"
	       "it unpinned; exit status 1 if some are still there after %d s.\n",
	       UNLOAD_WAIT_MS / 1000);
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

		if (!link)
			continue;
		err = pin_staging_add(staging, "links", s->progs[i].name, bpf_link__fd(link));
		if (err) {
			snprintf(what, size, "link %s", s->progs[i].name);
			return err;
		}
	}
	return 0;
}

static void load_report(struct nodefd *skel)
{
	struct bpf_object_skeleton *s = skel->skeleton;
	struct json_object *obj, *progs;

	if (!json_output) {
		printf("nodefd: loaded and enforcing: %d programs attached, canary refused, pinned in %s\n",
		       s->prog_cnt, PIN_DIR);
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
		struct json_object *p = json_object_new_object();
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);

		json_add_str(p, "name", s->progs[i].name);
		if (link && !bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len)) {
			json_add_u64(p, "link_id", info.id);
			json_add_u64(p, "prog_id", info.prog_id);
		}
		json_object_array_add(progs, p);
	}
	json_object_object_add(obj, "programs", progs);
	json_print(obj);
	json_object_put(obj);
}

/*
 * Loads, proves and pins, with messages prefixed by @verb.  0; -EEXIST,
 * said by nobody, when nodefd is already loaded (or got loaded meanwhile);
 * else -errno, having said why.  The caller has checked privilege.
 */
int load_run(const char *verb, bool report)
{
	char lsm[512], staging[PATH_MAX], why[256], what[64];
	struct nodefd_config cfg = {};
	sigset_t block, old;
	struct nodefd *skel;
	struct stat st, root_st;
	int err;

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
	err = pin_root_check();
	if (err) {
		p_err("%s: %s: %s", verb, PIN_ROOT,
		      err == -ENOTSUP ? "not a bpf filesystem (mount -t bpf bpf " PIN_ROOT ")" :
					errstr(err));
		return err;
	}
	err = pin_state();
	if (err > 0)
		return -EEXIST;
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

	skel = nodefd__open();
	if (!skel) {
		err = -errno;
		p_err("%s: cannot open the BPF object: %s", verb, errstr(err));
		return err;
	}
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
	err = canary_run(bpf_map__fd(skel->maps.events), why, sizeof(why));
	if (err) {
		p_err("%s: %s: the programs attached but do not run; detached them", verb, why);
		goto out_destroy_skel;
	}
	cfg.enabled = 1;
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
	err = pin_staging_publish(staging);
	if (err == -EEXIST)
		goto out_remove_staging;
	if (err) {
		p_err("%s: cannot move %s to %s: %s", verb, staging, PIN_DIR, errstr(err));
		goto out_remove_staging;
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

int do_load(int argc, char **argv)
{
	int ret, err;

	ret = verb_no_args(argc, argv, load_help);
	if (ret >= 0)
		return ret;

	if (require_privilege("load"))
		return CMD_FAIL;
	err = load_run("load", true);
	if (err == -EEXIST)
		p_err("load: already loaded (%s exists); 'nodefdctl unload' first", PIN_DIR);
	return err ? CMD_FAIL : CMD_OK;
}

/* Says which links and programs the kernel still had when unload stopped waiting. */
static void unload_left(const struct pin_links *links, int err)
{
	char what[512] = "";
	size_t off = 0;

	for (int i = 0; i < links->n; i++) {
		if (links->prog_id[i])
			off = text_append(what, sizeof(what), off, "%sprogram %u (%s)",
					  off ? ", " : "", links->prog_id[i], links->name[i]);
		if (links->link_id[i])
			off = text_append(what, sizeof(what), off, "%slink %u (%s)",
					  off ? ", " : "", links->link_id[i], links->name[i]);
		if (off >= sizeof(what))
			break;
	}
	if (err == -ETIMEDOUT)
		p_err("unload: %s removed, but after %d s the kernel still has %s: something else holds them (a process with an fd to them, or a pin elsewhere); they may still run",
		      PIN_DIR, UNLOAD_WAIT_MS / 1000, what);
	else
		p_err("unload: %s removed, but cannot tell whether %s are gone: %s", PIN_DIR,
		      what, errstr(err));
}

int do_unload(int argc, char **argv)
{
	struct pin_links links;
	int ret, err, waited;

	ret = verb_no_args(argc, argv, unload_help);
	if (ret >= 0)
		return ret;

	if (require_privilege("unload"))
		return CMD_FAIL;
	err = pin_state();
	if (err < 0) {
		p_err("unload: %s: %s", PIN_DIR, errstr(err));
		return CMD_FAIL;
	}
	if (!err) {
		p_err("unload: not loaded (no %s)", PIN_DIR);
		return CMD_FAIL;
	}
	/* Which links and programs to see gone; unreadable links are not waited for. */
	if (pin_links_read(PIN_DIR, &links))
		links.n = 0;
	err = pin_tree_remove(PIN_DIR);
	if (err) {
		p_err("unload: cannot remove %s: %s; see 'nodefdctl status' for what is left",
		      PIN_DIR, errstr(err));
		return CMD_FAIL;
	}
	err = pin_links_wait_gone(&links, UNLOAD_WAIT_MS, &waited);
	if (err) {
		unload_left(&links, err);
		return CMD_FAIL;
	}
	if (json_output) {
		struct json_object *obj = json_object_new_object();

		json_add_bool(obj, "loaded", false);
		json_add_u64(obj, "programs_gone", (__u64)links.n);
		json_add_u64(obj, "wait_ms", (__u64)waited);
		json_print(obj);
		json_object_put(obj);
	} else {
		printf("nodefd: unloaded: links unpinned, %d programs detached and gone from the kernel (after %d ms), maps unpinned\n",
		       links.n, waited);
	}
	return CMD_OK;
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
	s = skel->skeleton;
	for (int i = 0; i < s->prog_cnt && !err; i++) {
		snprintf(path, sizeof(path), "%s/%s", PIN_LINKS_DIR, s->progs[i].name);
		if (access(path, F_OK)) {
			err = -errno;
			p_err("%s: %s: %s: nodefd is not (fully) attached; 'nodefdctl unload' and load again",
			      verb, path, errstr(err));
		}
	}
	nodefd__destroy(skel);
	return err;
}
