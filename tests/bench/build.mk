# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/build.mk: nodefd_bench, run in the VM by `make bench`.

$(BUILD)/bin/nodefd_bench: tests/bench/nodefd_bench.c | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

TEST_BINS += $(BUILD)/bin/nodefd_bench
