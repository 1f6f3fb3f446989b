// SPDX-License-Identifier: GPL-2.0
/* switch.c - the enable and disable verbs: every check on or off at once, nothing detached */

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "nodefdctl.h"

/*
 * Both programs read settings.enabled on every hook call, so a change
 * applies to the next open on any CPU.  The programs stay attached and the
 * policies, counters and unread events stay as they are: disable is a
 * switch, not an unload.
 */

static void enable_help(void)
{
	printf("Usage: nodefdctl [-j|-p] enable\n"
	       "\n"
	       "Turns every nodefd check back on, from the next open, without a reload.\n");
}

static void disable_help(void)
{
	printf("Usage: nodefdctl [-j|-p] disable\n"
	       "\n"
	       "Turns every nodefd check off at once, from the next open: nothing is refused,\n"
	       "audited or counted until 'nodefdctl enable'. The programs stay attached and\n"
	       "the policies stay as they are.\n");
}

static int switch_set(int argc, char **argv, void (*help)(void), bool on)
{
	const char *verb = on ? "enable" : "disable";
	struct nodefd_config cfg;
	bool was;
	int ret, fd, lock, err;

	ret = verb_no_args(argc, argv, help);
	if (ret >= 0)
		return ret;
	if (require_privilege(verb) || pin_require(verb))
		return CMD_FAIL;
	fd = pin_map_open(verb, "settings", BPF_MAP_TYPE_ARRAY, sizeof(cfg));
	if (fd < 0)
		return CMD_FAIL;
	lock = lock_maps(verb);
	if (lock < 0) {
		close(fd);
		return CMD_FAIL;
	}
	err = settings_read(fd, &cfg);
	if (err) {
		p_err("%s: cannot read %s/settings: %s; nothing changed", verb, PIN_DIR,
		      errstr(err));
		goto out;
	}
	was = cfg.enabled;
	if (was != on) {
		cfg.enabled = on;
		err = settings_write(fd, &cfg);
		if (err) {
			p_err("%s: cannot write %s/settings: %s; nothing changed", verb, PIN_DIR,
			      errstr(err));
			goto out;
		}
	}
	if (json_output) {
		struct json_object *obj = json_object_new_object();

		json_add_bool(obj, "enabled", on);
		json_add_bool(obj, "changed", was != on);
		json_print(obj);
		json_object_put(obj);
	} else if (was == on) {
		printf("nodefd: already %s\n", on ? "enabled" : "disabled");
	} else {
		printf("nodefd: %s\n", on ? "enabled: every check on again, from the next open" :
					    "disabled: no check until 'nodefdctl enable'");
	}
out:
	lock_release(lock);
	close(fd);
	return err ? CMD_FAIL : CMD_OK;
}

int do_enable(int argc, char **argv)
{
	return switch_set(argc, argv, enable_help, true);
}

int do_disable(int argc, char **argv)
{
	return switch_set(argc, argv, disable_help, false);
}
