# SPDX-License-Identifier: GPL-2.0
#
# tests/stress/build.mk: nodefd_stress, load/unload cycles under an open(2) storm, run in the VM
# (tests/stress/oops-count drives it over kernels and emulator settings; docs/design.md, "The
# 6.12 int3 Oops"). Needs libbpf (static) and nothing from the test kernel.

$(BUILD)/bin/nodefd_stress: tests/stress/attach_detach.c | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< -lbpf -lelf -lz

TEST_BINS += $(BUILD)/bin/nodefd_stress
