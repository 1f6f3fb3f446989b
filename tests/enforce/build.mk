# SPDX-License-Identifier: GPL-2.0
#
# tests/enforce/build.mk: the in-VM tests of nodefd's enforcement. Into $(BUILD)/bin:
#   enforce_attack_test  the attack matrix (NODEFD_EXPECT=hole or refused)
#   enforce_legit_test   what must keep working, loaded or not
#   enforce_race_test    reopens racing chmod, rename and dup2 (NODEFD_EXPECT=hole or refused)
#   enforce_events_test  what `nodefdctl events --json` reports for a refusal (loaded only)
#   enforce_relink_test  linkat() of an open file, by fd (AT_EMPTY_PATH) or through the link
#   enforce_emptypath_test  O_EMPTYPATH (7.2): the file behind an fd opened again, no walk
#   enforce_disk_test    search permission from ACLs on ext4, cached and read from disk
#   enforce_limits_test  many groups, long ACLs, deep trees: the kernel's answer, exactly
#   enforce_pathops_test truncate, linkat and "/." through the link meet the open's rules
#   enforce_userns_test  capabilities in a user namespace, over what it maps
#   enforce_jump_test    walks through a link whose target the holder swaps (dup2, fchdir)
#   enforce_steer_test   a holder cannot aim nodefd at a walker; whose fd access counts
#   enforce_doors_test   connect, xattrs and watches through an O_PATH fd's link
#   enforce_mounts_test  reach by the opener's mounts: over-mounts, detached mounts
#   enforce_model_test   the permission model against open() by name on random trees, modes,
#                        ACLs, groups and roots, on tmpfs, ext4 and overlayfs
#   enforce-run          the guest-side driver of all four: `vmtest/run -- enforce-run`
#
# Included from the top-level Makefile, which defines BUILD, KSRC (the test kernel's tree, for
# tools/testing/selftests/kselftest_harness.h, included from there and never copied), CC,
# CPPFLAGS (finds include/onode.h), CFLAGS, LDFLAGS (-static: the guest has no libc),
# KDIR_FILE, Q and msg.

ENFORCE_TEST_BINS := $(BUILD)/bin/enforce_attack_test $(BUILD)/bin/enforce_legit_test \
		     $(BUILD)/bin/enforce_race_test $(BUILD)/bin/enforce_events_test \
		     $(BUILD)/bin/enforce_relink_test $(BUILD)/bin/enforce_disk_test \
		     $(BUILD)/bin/enforce_limits_test $(BUILD)/bin/enforce_pathops_test \
		     $(BUILD)/bin/enforce_userns_test $(BUILD)/bin/enforce_model_test \
		     $(BUILD)/bin/enforce_jump_test $(BUILD)/bin/enforce_emptypath_test \
		     $(BUILD)/bin/enforce_steer_test $(BUILD)/bin/enforce_doors_test \
		     $(BUILD)/bin/enforce_mounts_test
TEST_BINS += $(ENFORCE_TEST_BINS) $(BUILD)/bin/enforce-run

# -isystem: the 6.1 harness is not -Wextra clean, and -Werror would fail on its warnings.
ENFORCE_TEST_CPPFLAGS = -isystem $(KSRC)/tools/testing/selftests

$(BUILD)/bin/enforce_attack_test: tests/enforce/attack_test.c
$(BUILD)/bin/enforce_legit_test: tests/enforce/legit_test.c
$(BUILD)/bin/enforce_race_test: tests/enforce/race_test.c
$(BUILD)/bin/enforce_events_test: tests/enforce/events_test.c
$(BUILD)/bin/enforce_relink_test: tests/enforce/relink_test.c
$(BUILD)/bin/enforce_disk_test: tests/enforce/disk_test.c
$(BUILD)/bin/enforce_limits_test: tests/enforce/limits_test.c
$(BUILD)/bin/enforce_pathops_test: tests/enforce/pathops_test.c
$(BUILD)/bin/enforce_userns_test: tests/enforce/userns_test.c
$(BUILD)/bin/enforce_model_test: tests/enforce/model_test.c
$(BUILD)/bin/enforce_jump_test: tests/enforce/jump_test.c
$(BUILD)/bin/enforce_emptypath_test: tests/enforce/emptypath_test.c
$(BUILD)/bin/enforce_steer_test: tests/enforce/steer_test.c
$(BUILD)/bin/enforce_doors_test: tests/enforce/doors_test.c
$(BUILD)/bin/enforce_mounts_test: tests/enforce/mounts_test.c

$(ENFORCE_TEST_BINS): tests/enforce/common.h include/onode.h $(KDIR_FILE) | $(BUILD)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(ENFORCE_TEST_CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ \
		$(filter %.c,$^)

$(BUILD)/bin/enforce-run: tests/enforce/run.sh | $(BUILD)/bin
	$(Q)install -m 0755 $< $@
