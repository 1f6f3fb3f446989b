# SPDX-License-Identifier: GPL-2.0
#
# tests/kconst/build.mk: $(BUILD)/host/kconst_dump, the values src/kconst.c gives a kernel of
# a release, for tests/host/kconst.sh. A host program: not part of `all` or `tests`.

$(BUILD)/host/kconst_dump: tests/kconst/kconst_dump.c src/kconst.c src/kconst.h include/nodefd.h
	$(call msg,HOST-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc -o $@ \
		tests/kconst/kconst_dump.c src/kconst.c -lbpf
