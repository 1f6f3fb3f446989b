# SPDX-License-Identifier: GPL-2.0
#
# Makefile: builds the BPF object, its skeleton, nodefdctl and the in-VM test programs, and
# runs the test suites (make check), the main job (make demo) and the benchmark (make bench).

BUILD		?= build
CC		?= gcc
CLANG		?= clang
BPFTOOL		?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH		:= $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

# The test kernel: vmtest/build-kernel prints its cached build directory (building it the
# first time). Only the in-VM test programs need it (the kselftest harness comes from its
# tree); nodefdctl and the BPF object do not.
KDIR_FILE	:= $(BUILD)/kdir
KDIR		= $(shell cat $(KDIR_FILE))
KSRC		= $(KDIR)/linux

# The kernel types the BPF programs read: bpf/kernel_types.h, kept in the tree, declares just the
# fields nodefd uses, all CO-RE relocatable, so the object is the same whatever kernel the
# build machine runs and loads on every kernel that has those fields. VMLINUX_H=FILE builds
# against another header instead, e.g. one that `bpftool btf dump file ... format c` made
# from a kernel's BTF (tests/host/btf.sh does that for each kernel nodefd is tested on).
VMLINUX_H	?= bpf/kernel_types.h

CFLAGS		?= -O2 -g
CFLAGS		+= -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE
CPPFLAGS	+= -Iinclude -I$(BUILD)
# BPF_EXTRA_CFLAGS: e.g. -fms-extensions for a VMLINUX_H dumped from 7.x's BTF, whose structs
# embed anonymous structs by tag (struct __filename_head;), as the kernel is built with.
BPF_EXTRA_CFLAGS ?=
# -Wextra and -Wconversion as nodefdctl has them; BPF_PROG() hands each program every argument
# of its hook, used or not.
BPF_CFLAGS	:= -g -O2 -Wall -Wextra -Wconversion -Wno-unused-parameter -Werror -target bpf \
		   -D__TARGET_ARCH_$(ARCH) \
		   -Iinclude -I$(BUILD)/vmlinux -I/usr/include/$(shell uname -m)-linux-gnu \
		   $(BPF_EXTRA_CFLAGS)
# Static: the guest has no libc, and one binary then runs on both kernels and the host.
LDFLAGS		+= -static
LDLIBS_BPF	:= -lbpf -lelf -lz

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all tests clean deps kernel check demo bench FORCE

all: $(BUILD)/bin/nodefdctl

deps:
	$(Q)scripts/deps

# Re-run every time (instant on a cache hit); rewrite only on change so that what depends on
# the kernel is rebuilt only when the kernel is.
$(KDIR_FILE): FORCE | $(BUILD)
	$(Q)dir=$$(vmtest/build-kernel) && [ -n "$$dir" ] && \
		{ [ "$$(cat $@ 2>/dev/null)" = "$$dir" ] || echo "$$dir" > $@; }

kernel: $(KDIR_FILE)

$(BUILD) $(BUILD)/bin:
	$(Q)mkdir -p $@

# Copied only when it differs, so a VMLINUX_H that names the same header rebuilds nothing.
$(BUILD)/vmlinux/vmlinux.h: $(VMLINUX_H) FORCE
	$(Q)mkdir -p $(@D)
	$(Q)cmp -s $< $@ || { printf '  %-8s %s\n' GEN "$@ (from $<)"; cp $< $@; }

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux/vmlinux.h include/nodefd.h $(wildcard bpf/*.bpf.h)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $* > $@

NODEFDCTL_SRCS	:= $(wildcard src/*.c)
NODEFDCTL_OBJS	:= $(NODEFDCTL_SRCS:src/%.c=$(BUILD)/src/%.o)
# nodefdctl's own code is held to more warnings than the tests; the generated skeleton in
# $(BUILD) is not its own, so that directory is a system one for it (-isystem wins over -I).
NODEFDCTL_CFLAGS := -Wshadow -Wconversion

$(BUILD)/src/%.o: src/%.c $(wildcard src/*.h) include/nodefd.h $(BUILD)/nodefd.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -isystem $(BUILD) $(CPPFLAGS) $(CFLAGS) $(NODEFDCTL_CFLAGS) -c $< -o $@

$(BUILD)/bin/nodefdctl: $(NODEFDCTL_OBJS) | $(BUILD)/bin
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_BPF)
# nodefdctl's --json output: json-c; its policy file: libinih (INI); static like the rest.
$(BUILD)/bin/nodefdctl: LDLIBS_BPF += -ljson-c -linih
# The daemon's HTTP endpoint (src/http.c): libmicrohttpd, whose static archive needs GnuTLS's
# static dependencies, which Debian does not ship; so only a dynamic build (the package's,
# debian/rules) has it. The static one says, when asked for an endpoint, that it has none.
ifeq ($(filter -static,$(LDFLAGS)),)
CPPFLAGS	+= -DNODEFD_HTTP
$(BUILD)/bin/nodefdctl: LDLIBS_BPF += -lmicrohttpd
endif

# In-VM test programs: each suite's fragment adds its binaries to TEST_BINS. They need the test
# kernel's tree, so only `make tests` (and check, demo, bench) builds them.
TEST_BINS :=
-include $(wildcard tests/*/build.mk)
tests: all $(TEST_BINS)

# Installation and packaging rules, and anything else that ships.
-include $(wildcard dist/*.mk)

# The README's test command: installs what is missing (as root), builds, runs the host tests
# and the in-VM suites on both kernels, and ends with "N passed, N failed, N skipped".
check:
	$(Q)scripts/deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)tests/run

# The README's main job: boots the VM and shows nodefd at work.
demo:
	$(Q)scripts/deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)scripts/demo

# One boot per kernel; BENCH_KERNELS picks them (KERNEL:guard: the guard at a magic link's jump
# forced where the kernel has the hook, NODEFD_FORCE_JUMP). Guest time counts instructions (QEMU -icount)
# unless BENCH_CLOCK=wall; BENCH_ARGS goes to nodefd_bench (-r ROUNDS, -n ITERATIONS). The
# outputs and the plot (reopen-depth-CLOCK.png/.svg) are written to $(BUILD)/bench/.
BENCH_KERNELS	?= onode onode:guard debian12 debian13
BENCH_CLOCK	?= icount
BENCH_ARGS	?=
bench:
	$(Q)scripts/deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)BUILD=$(BUILD) BENCH_CLOCK=$(BENCH_CLOCK) BENCH_ARGS="$(BENCH_ARGS)" \
		tests/bench/run $(BENCH_KERNELS)

clean:
	$(Q)rm -rf $(BUILD)

FORCE:
