# SPDX-License-Identifier: GPL-2.0
#
# dist/install.mk: `make install` and `make deb` (included by the top Makefile).
#
# The directories follow the GNU names, so a distribution's packaging can override any of them
# (debian/rules does: bookworm's dh_installsystemd looks for units in /lib/systemd/system).
# DESTDIR stages the whole tree elsewhere. Nothing is built as root: `make` first, then
# `make install` (which builds nodefdctl only if it is missing or stale).

DESTDIR		?=
prefix		?= /usr
exec_prefix	?= $(prefix)
sbindir		?= $(exec_prefix)/sbin
datarootdir	?= $(prefix)/share
mandir		?= $(datarootdir)/man
sysconfdir	?= /etc
unitdir		?= $(prefix)/lib/systemd/system
bashcompdir	?= $(datarootdir)/bash-completion/completions

INSTALL		?= install
INSTALL_PROGRAM	?= $(INSTALL) -m 0755
INSTALL_DATA	?= $(INSTALL) -m 0644

.PHONY: install uninstall deb

# The policy file is root's and writable by root only, as nodefdctl demands of it. It is a
# configuration file: an existing one is never overwritten (a package manager handles that as
# a conffile; a plain `make install` must not lose the admin's edits either).
install: $(BUILD)/bin/nodefdctl
	$(call msg,INSTALL,$(DESTDIR)$(sbindir)/nodefdctl)
	$(Q)$(INSTALL) -d $(DESTDIR)$(sbindir) $(DESTDIR)$(mandir)/man8 $(DESTDIR)$(mandir)/man5 \
		$(DESTDIR)$(unitdir) $(DESTDIR)$(bashcompdir)
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(sysconfdir)/nodefd
	$(Q)$(INSTALL_PROGRAM) $(BUILD)/bin/nodefdctl $(DESTDIR)$(sbindir)/nodefdctl
	$(Q)$(INSTALL_DATA) docs/nodefdctl.8 $(DESTDIR)$(mandir)/man8/nodefdctl.8
	$(Q)$(INSTALL_DATA) docs/nodefd-policy.conf.5 $(DESTDIR)$(mandir)/man5/nodefd-policy.conf.5
	$(Q)$(INSTALL_DATA) docs/nodefd.conf.5 $(DESTDIR)$(mandir)/man5/nodefd.conf.5
	$(Q)sed 's|/usr/sbin/nodefdctl|$(sbindir)/nodefdctl|g' dist/nodefd.service \
		> $(DESTDIR)$(unitdir)/nodefd.service.tmp && \
		chmod 0644 $(DESTDIR)$(unitdir)/nodefd.service.tmp && \
		mv $(DESTDIR)$(unitdir)/nodefd.service.tmp $(DESTDIR)$(unitdir)/nodefd.service
	$(Q)$(INSTALL_DATA) dist/nodefdctl.bash-completion $(DESTDIR)$(bashcompdir)/nodefdctl
	$(Q)if [ -e $(DESTDIR)$(sysconfdir)/nodefd/policy.conf ]; then \
		echo "  KEEP     $(DESTDIR)$(sysconfdir)/nodefd/policy.conf (exists)"; \
	else \
		$(INSTALL_DATA) dist/policy.conf $(DESTDIR)$(sysconfdir)/nodefd/policy.conf; \
	fi
	$(Q)if [ -e $(DESTDIR)$(sysconfdir)/nodefd/nodefd.conf ]; then \
		echo "  KEEP     $(DESTDIR)$(sysconfdir)/nodefd/nodefd.conf (exists)"; \
	else \
		$(INSTALL_DATA) dist/nodefd.conf $(DESTDIR)$(sysconfdir)/nodefd/nodefd.conf; \
	fi

# Removes what install put there, but the policy file and the settings (the admin's) and the pins (nodefd keeps
# enforcing until `nodefdctl unload`).
uninstall:
	$(Q)rm -f $(DESTDIR)$(sbindir)/nodefdctl $(DESTDIR)$(mandir)/man8/nodefdctl.8 \
		$(DESTDIR)$(mandir)/man5/nodefd-policy.conf.5 $(DESTDIR)$(mandir)/man5/nodefd.conf.5 \
		$(DESTDIR)$(unitdir)/nodefd.service \
		$(DESTDIR)$(bashcompdir)/nodefdctl

# The Debian package, from the work tree as it is (uncommitted changes included), built out of
# tree so that nothing but the .deb lands in $(BUILD)/deb: dpkg-buildpackage writes its results
# into the parent of the source directory, so it runs in a copy whose parent is a scratch dir.
# The package build must not see our command line (BUILD=... would reach its `make clean`
# through MAKEFLAGS): it starts from a clean make environment.
DEB_DIR		:= $(BUILD)/deb

deb:
	$(call msg,DEB,$(DEB_DIR))
	$(Q)rm -rf $(DEB_DIR)/src && mkdir -p $(DEB_DIR)/src/nodefd
	$(Q)git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -xf - -C $(DEB_DIR)/src/nodefd
	$(Q)cd $(DEB_DIR)/src/nodefd && \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u BUILD \
		dpkg-buildpackage -us -uc -b $(if $(filter 1,$(V)),,>../build.log 2>&1) || \
		{ echo "deb: dpkg-buildpackage failed; see $(DEB_DIR)/src/build.log" >&2; \
		  tail -n 30 ../build.log >&2; exit 1; }
	$(Q)rm -f $(DEB_DIR)/*.deb && mv $(DEB_DIR)/src/*.deb $(DEB_DIR)/ && \
		mv $(DEB_DIR)/src/*.buildinfo $(DEB_DIR)/src/*.changes $(DEB_DIR)/ 2>/dev/null; \
		ls $(abspath $(DEB_DIR))/nodefd_*.deb
