# SPDX-License-Identifier: GPL-2.0
#
# tests/demo/build.mk: the guest side of `make demo` (nodefd-demo, onode-demo) into $(BUILD)/bin.

$(BUILD)/bin/onode-demo: tests/demo/onode-demo.c include/onode.h | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(BUILD)/bin/nodefd-demo: tests/demo/nodefd-demo | $(BUILD)/bin
	$(Q)install -m 0755 $< $@

TEST_BINS += $(BUILD)/bin/onode-demo $(BUILD)/bin/nodefd-demo
