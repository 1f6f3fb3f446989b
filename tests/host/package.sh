#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/package.sh: what a distribution ships. `make deb` builds the package from the work
# tree, lintian accepts it (no error; its warnings are printed), it carries every file the unit
# and the admin need, and the man pages render without a groff warning (lintian reports those
# only as warnings, but a broken macro loses text).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

build=${BUILD:-build}
deb_dir=$build/deb

check "make deb" make -s BUILD="$build" deb
deb=$(ls "$deb_dir"/nodefd_*_amd64.deb 2>/dev/null | head -n 1)

lintian_ok()
{
	local out rc

	out=$(lintian --fail-on error --display-info "$deb_dir"/nodefd_*.changes 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -v 'running with root privileges'
	return "$rc"
}

# has PATH...: every PATH is in the package's data.
has()
{
	local list p missing=0

	list=$(dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qxF "$p" <<<"$list" || { echo "missing: $p"; missing=1; }
	done
	return "$missing"
}

conffile()
{
	dpkg-deb -I "$deb" conffiles | grep -qxF /etc/nodefd/policy.conf ||
		{ echo "/etc/nodefd/policy.conf is not a conffile"; return 1; }
}

# The purge that ends enforcement (debian/nodefd.postrm) made it into the package.
postrm_purges()
{
	dpkg-deb -I "$deb" postrm | grep -q 'rm -r "$d"' ||
		{ echo "the package's postrm does not remove the pins on purge"; return 1; }
}

man_clean()
{
	local f out bad=0

	for f in docs/*.[1-8]; do
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$f" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "$f:"; echo "$out"; bad=1; }
	done
	return "$bad"
}

if [ -z "$deb" ]; then
	skip "lintian accepts the package" "no package"
	skip "the package's files" "no package"
	skip "the policy file is a conffile" "no package"
	skip "the package's postrm unpins on purge" "no package"
else
	check "lintian accepts the package (no error)" lintian_ok
	check "the package's files" has /usr/sbin/nodefdctl /usr/share/man/man8/nodefdctl.8.gz \
		/usr/share/man/man5/nodefd-policy.conf.5.gz /lib/systemd/system/nodefd.service \
		/usr/share/bash-completion/completions/nodefdctl /etc/nodefd/policy.conf
	check "the policy file is a conffile" conffile
	check "the package's postrm unpins on purge" postrm_purges
fi
check "the man pages render without a groff warning" man_clean
done_testing
