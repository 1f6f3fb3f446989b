# SPDX-License-Identifier: GPL-2.0
#
# tests/fuzz/build.mk: libFuzzer targets for nodefdctl's pure parsers, built for the host with
# clang's -fsanitize=fuzzer plus AddressSanitizer and UndefinedBehaviorSanitizer:
#   $(BUILD)/fuzz/fuzz_policyfile  policyfile_parse(): the policy file, any bytes
#   $(BUILD)/fuzz/fuzz_args        cgroup_path_normalize() and policy_spec_parse(): `policy set`
#   $(BUILD)/fuzz/fuzz_glob        glob.c: a pattern, a newline, a path (the walk's pruning is sound)
#   $(BUILD)/fuzz/fuzz_container   container.c: a cgroup path, for the container, pod and unit it names
# Each links src/policyfile.c, src/glob.c, src/container.c and src/text.c only (no BPF, no json-c) and Debian's libinih.
# Not part of `all` (the guest needs none of it): tests/host/fuzz.sh builds them with
# `make fuzz` and runs each for a fixed time on the seeds in tests/fuzz/corpus/.

FUZZ_CC		?= clang
FUZZ_CFLAGS	:= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		   -Wall -Wextra -Wshadow -Wconversion -Werror -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc
FUZZ_BINS	:= $(BUILD)/fuzz/fuzz_policyfile $(BUILD)/fuzz/fuzz_args $(BUILD)/fuzz/fuzz_glob \
		   $(BUILD)/fuzz/fuzz_container
FUZZ_SRCS	:= src/policyfile.c src/glob.c src/container.c src/text.c

.PHONY: fuzz
fuzz: $(FUZZ_BINS)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_SRCS) src/policyfile.h src/glob.h src/container.h src/text.h include/nodefd.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRCS) -l:libinih.a
