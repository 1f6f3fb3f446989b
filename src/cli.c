// SPDX-License-Identifier: GPL-2.0
/* cli.c - the command line's common parts: global options, option errors, verb tables */

#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "nodefdctl.h"

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
	char q[3 * 64 + 8];

	opt = text_quote(opt, 64, q, sizeof(q));
	if (c == ':')
		p_err("%s%soption '%s' needs an argument", prefix, sep, opt);
	else
		p_err("%s%sunknown option '%s'; try 'nodefdctl %s%shelp'", prefix, sep, opt, prefix,
		      verb ? " " : "");
	return CMD_USAGE;
}

int verb_opt(int c, const char *verb, char **argv, void (*help)(void))
{
	if (parse_global_opt(c))
		return -1;
	switch (c) {
	case OPT_HELP:
		help();
		return CMD_OK;
	case OPT_VERSION:
		return print_version();
	default:
		return opt_error(verb, c, argv);
	}
}

int verb_tail(int argc, char **argv, const char *verb, void (*help)(void), int max_operands)
{
	char q[3 * 64 + 8];

	if (optind < argc && !strcmp(argv[optind], "help")) {
		help();
		return CMD_OK;
	}
	if (max_operands >= 0 && argc - optind > max_operands) {
		p_err("%s: unexpected argument '%s'; try 'nodefdctl %s help'", verb,
		      text_quote(argv[optind + max_operands], 64, q, sizeof(q)), verb);
		return CMD_USAGE;
	}
	return -1;
}

int verb_no_args(int argc, char **argv, void (*help)(void))
{
	static const struct option opts[] = { GLOBAL_LONG_OPTS, { NULL, 0, NULL, 0 } };
	int c, ret;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":" GLOBAL_SHORT_OPTS, opts, NULL)) >= 0) {
		ret = verb_opt(c, argv[0], argv, help);
		if (ret >= 0)
			return ret;
	}
	return verb_tail(argc, argv, argv[0], help, 0);
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
