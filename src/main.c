// SPDX-License-Identifier: GPL-2.0
/* main.c - nodefdctl: global options and the verb table */

#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"

bool json_output;
bool pretty_output;
bool debug_output;

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

int print_version(void)
{
	if (json_output) {
		struct json_object *obj = json_object_new_object();

		json_add_str(obj, "version", NODEFDCTL_VERSION);
		json_add_u64(obj, "abi_version", NODEFD_ABI_VERSION);
		json_add_str(obj, "libbpf_version", libbpf_version_string());
		json_print(obj);
		json_object_put(obj);
	} else {
		printf("nodefdctl %s (abi %d, libbpf %s)\n", NODEFDCTL_VERSION, NODEFD_ABI_VERSION,
		       libbpf_version_string());
	}
	return CMD_OK;
}

bool parse_global_opt(int c)
{
	switch (c) {
	case OPT_PRETTY:
		pretty_output = true;
		/* fallthrough */
	case OPT_JSON:
		json_output = true;
		return true;
	case OPT_DEBUG:
		debug_output = true;
		return true;
	default:
		return false;
	}
}

int opt_error(const char *verb, int c, char **argv)
{
	const char *prefix = verb ? verb : "";
	const char *sep = verb ? ": " : "";
	char shortopt[3] = { '-', (char)optopt, '\0' };
	/* A missing argument: the option is the last word; an unknown short one may be in a group. */
	const char *opt = c != ':' && optopt ? shortopt : argv[optind - 1];

	if (c == ':')
		p_err("%s%soption '%s' needs an argument", prefix, sep, opt);
	else
		p_err("%s%sunknown option '%s'; try 'nodefdctl %s%shelp'", prefix, sep, opt, prefix,
		      verb ? " " : "");
	return CMD_USAGE;
}

int verb_no_args(int argc, char **argv, void (*help)(void))
{
	static const struct option opts[] = { GLOBAL_LONG_OPTS, { NULL, 0, NULL, 0 } };
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		if (parse_global_opt(c))
			continue;
		if (c == OPT_HELP) {
			help();
			return CMD_OK;
		}
		if (c == OPT_VERSION)
			return print_version();
		return opt_error(argv[0], c, argv);
	}
	if (optind < argc && !strcmp(argv[optind], "help")) {
		help();
		return CMD_OK;
	}
	if (optind < argc) {
		p_err("%s: unexpected argument '%s'; try 'nodefdctl %s help'", argv[0],
		      argv[optind], argv[0]);
		return CMD_USAGE;
	}
	return -1;
}

int cmd_select(const struct cmd *cmds, int argc, char **argv, const char *where,
	       void (*help)(void))
{
	const char *prefix = where ? where : "";
	const char *sep = where ? " " : "";

	if (argc < 1) {
		p_err("%s%smissing command; try 'nodefdctl %s%shelp'", prefix, where ? ": " : "",
		      prefix, sep);
		return CMD_USAGE;
	}
	if (!strcmp(argv[0], "help")) {
		help();
		return CMD_OK;
	}
	for (; cmds->name; cmds++)
		if (!strcmp(argv[0], cmds->name))
			return cmds->func(argc, argv);
	p_err("unknown command '%s'; try 'nodefdctl %s%shelp'", argv[0], prefix, sep);
	return CMD_USAGE;
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
