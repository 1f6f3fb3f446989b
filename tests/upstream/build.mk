# SPDX-License-Identifier: GPL-2.0
#
# tests/upstream/build.mk: stages the kernel's own openat2 and Landlock selftests, built from
# the onode kernel's tree by vmtest/build-selftests, into the guest at /opt/selftests, and the
# guest-side driver upstream-run into $(BUILD)/bin. Included by the top-level Makefile.

UPSTREAM_STAMP := $(BUILD)/guest/opt/selftests/.stamp

$(UPSTREAM_STAMP): $(KDIR_FILE) vmtest/build-selftests
	$(call msg,STAGE,upstream selftests)
	$(Q)dir=$$(vmtest/build-selftests) && [ -n "$$dir" ] && \
		rm -rf $(@D) && mkdir -p $(@D) && cp -r "$$dir"/. $(@D)/ && touch $@

$(BUILD)/bin/upstream-run: tests/upstream/upstream-run | $(BUILD)/bin
	$(Q)install -m 0755 $< $@

TEST_BINS += $(UPSTREAM_STAMP) $(BUILD)/bin/upstream-run
