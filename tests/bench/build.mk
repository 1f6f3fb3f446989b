# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/build.mk: nodefd_bench, run in the VM by `make bench`, with the floor programs
# (tests/bench/floor.bpf.c) in a skeleton of their own.

$(BUILD)/bench-obj/floor.bpf.o: tests/bench/floor.bpf.c $(BUILD)/vmlinux/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench-obj/floor.skel.h: $(BUILD)/bench-obj/floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor > $@

$(BUILD)/bin/nodefd_bench: tests/bench/nodefd_bench.c $(BUILD)/bench-obj/floor.skel.h | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -I$(BUILD)/bench-obj $(CFLAGS) $(LDFLAGS) -o $@ $< -lbpf -lelf -lz

TEST_BINS += $(BUILD)/bin/nodefd_bench
