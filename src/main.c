// SPDX-License-Identifier: GPL-2.0
/* main.c - nodefdctl: the top, the verb table (option helpers: cli.c) */

#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"

static void usage(void)
{
	printf("Usage: nodefdctl [OPTIONS] COMMAND [ARGS]\n"
	       "       nodefdctl help\n"
	       "       nodefdctl COMMAND help\n"
	       "\n"
	       "Commands:\n"
	       "  load      load the BPF LSM programs, prove that they run, pin them\n"
	       "  unload    unpin (and so detach) everything nodefd pinned\n"
	       "  daemon    load or adopt, apply the policy file, stream events\n"
	       "  enable    turn every check on, from the next open\n"
	       "  disable   turn every check off, from the next open (nothing detached)\n"
	       "  policy    set, unset, show, check or load per-cgroup policies\n"
	       "  status    show whether nodefd is loaded and what it counted\n"
	       "  events    print refused and audited opens as they happen\n"
	       "  metrics   the state and counters for Prometheus (text format)\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json     JSON output\n"
	       "  -p, --pretty   indented JSON output (implies --json)\n"
	       "  -d, --debug    show libbpf's debug messages\n"
	       "  -h, --help     this help\n"
	       "  -V, --version  show the version\n"
	       "\n"
	       "Exit status: 0 done, 1 refused or failed, 2 bad command line.\n"
	       "See nodefdctl(8).\n");
}

static const struct cmd cmds[] = {
	{ "load", do_load },
	{ "unload", do_unload },
	{ "daemon", do_daemon },
	{ "enable", do_enable },
	{ "disable", do_disable },
	{ "policy", do_policy },
	{ "status", do_status },
	{ "events", do_events },
	{ "metrics", do_metrics },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = { GLOBAL_LONG_OPTS, { NULL, 0, NULL, 0 } };
	bool help = false, version = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		if (parse_global_opt(c))
			continue;
		switch (c) {
		case OPT_HELP:
			help = true;
			break;
		case OPT_VERSION:
			version = true;
			break;
		default:
			return opt_error(NULL, c, argv);
		}
	}
	if (help) {
		usage();
		return CMD_OK;
	}
	if (version)
		return print_version();

	libbpf_setup();
	return cmd_select(cmds, argc - optind, argv + optind, NULL, usage);
}
