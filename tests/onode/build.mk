# SPDX-License-Identifier: GPL-2.0
#
# tests/onode/build.mk: the O_NODE test programs, $(BUILD)/bin/onode_test (tests/onode/onode_test.c)
# and $(BUILD)/bin/onode_flags_test (tests/onode/flags_test.c). Both run in the VM, on the test
# kernel (all pass) and on Debian's (all skip: "kernel has no O_NODE").
#
# Included from the top-level Makefile, which defines before the include:
#   BUILD      build directory; the programs go to $(BUILD)/bin/, which has a rule of its own
#   KSRC       the test kernel's source tree, for tools/testing/selftests/kselftest_harness.h,
#              which is included from there and never copied
#   CC CPPFLAGS CFLAGS LDFLAGS   as for every program: CPPFLAGS must find include/onode.h,
#              LDFLAGS must have -static (the guest has no libc)
#   KDIR_FILE  (optional) changes when the kernel does, which rebuilds the programs
#   Q, msg     (optional) the quiet-build helpers
# and gets back TEST_BINS += the two programs.

ONODE_TEST_BINS := $(BUILD)/bin/onode_test $(BUILD)/bin/onode_flags_test
TEST_BINS += $(ONODE_TEST_BINS)

# -isystem: the 6.1 harness is not -Wextra clean (an unused parameter, and ASSERT_*() compare
# signed with unsigned), and its warnings would otherwise fail the -Werror build of the tests.
ONODE_TEST_CPPFLAGS = -isystem $(KSRC)/tools/testing/selftests

$(BUILD)/bin/onode_test: tests/onode/onode_test.c
$(BUILD)/bin/onode_flags_test: tests/onode/flags_test.c

$(ONODE_TEST_BINS): tests/onode/common.h include/onode.h $(KDIR_FILE) | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(ONODE_TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^)

$(BUILD)/bin/onode-run: tests/onode/onode-run | $(BUILD)/bin
	$(Q)install -m 0755 $< $@

TEST_BINS += $(BUILD)/bin/onode-run
