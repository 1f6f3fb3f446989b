# SPDX-License-Identifier: GPL-2.0
#
# tests/cli/build.mk: the in-VM tests of nodefdctl's command line. Into $(BUILD)/bin:
#   reopen-probe  the article's reopen, from a cgroup the test picks (tests/cli/reopen-probe.c)
#   cli-lib.sh    tests/lib.sh (TAP: check, skip, done_testing), which cli-run sources
#   cli-run       the guest-side driver: `vmtest/run [--kernel=onode|debian12|debian13] -- cli-run`
#
# Included from the top-level Makefile (BUILD, CC, CPPFLAGS, CFLAGS, LDFLAGS with -static, Q, msg).

$(BUILD)/bin/reopen-probe: tests/cli/reopen-probe.c | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(BUILD)/bin/cli-lib.sh: tests/lib.sh | $(BUILD)/bin
	$(Q)install -m 0644 $< $@

$(BUILD)/bin/cli-run: tests/cli/run.sh | $(BUILD)/bin
	$(Q)install -m 0755 $< $@

TEST_BINS += $(BUILD)/bin/reopen-probe $(BUILD)/bin/cli-lib.sh $(BUILD)/bin/cli-run
