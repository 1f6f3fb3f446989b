// SPDX-License-Identifier: GPL-2.0
/* noop.bpf.c - a file_open program that decides nothing: nodefd_stress -z's control */

/*
 * Attached and detached like nodefd's own programs, it patches the same call site in
 * bpf_lsm_file_open; if the int3 Oops comes with it too, nothing nodefd's programs do (their
 * verdicts, their run time) is the cause. It passes the previous verdict on and nothing else.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(noop_file_open, struct file *file, int ret)
{
	return ret;
}
