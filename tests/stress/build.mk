# SPDX-License-Identifier: GPL-2.0
#
# tests/stress/build.mk: nodefd_stress, load/unload cycles under an open(2) storm, run in the VM
# (tests/stress/oops-count drives it over kernels and emulator settings;
# docs/notes/2026-12-03-int3-oops-6.12.md). Needs libbpf (static) and nothing from the test kernel.

# The control of -z: a program that only passes the verdict on, in a skeleton of its own.
$(BUILD)/stress/noop.bpf.o: tests/stress/noop.bpf.c $(BUILD)/vmlinux/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/stress/noop.skel.h: $(BUILD)/stress/noop.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name noop > $@

$(BUILD)/bin/nodefd_stress: tests/stress/attach_detach.c $(BUILD)/stress/noop.skel.h | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -I$(BUILD)/stress $(CFLAGS) $(LDFLAGS) -o $@ $< -lbpf -lelf -lz

TEST_BINS += $(BUILD)/bin/nodefd_stress
