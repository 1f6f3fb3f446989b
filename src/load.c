// SPDX-License-Identifier: GPL-2.0
/* load.c - the load and unload verbs (the loader itself: loader.c) */

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

int do_load(int argc, char **argv)
{
	int ret, err;

	ret = verb_no_args(argc, argv, load_help);
	if (ret >= 0)
		return ret;

	if (require_privilege("load"))
		return CMD_FAIL;
	err = load_run("load", true, NULL);
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
