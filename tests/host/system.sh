#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/system.sh: vmtest/system itself, the Debian system test bed. A harness that
# passes a failed command, loses the exit status or runs the command with nodefd in the wrong
# state would make every real-system result meaningless. Boots are slow under TCG (a minute
# or two each), so one boot answers several checks. SYSTEM_KERNELS=... picks the kernels
# (default debian12; not KERNELS, which tests/run reads for its VMs).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodefd-system-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# boot NAME ARG...: vmtest/system ARG..., its output in $tmp/NAME.out, status in $tmp/NAME.rc.
boot()
{
	local name=$1 rc

	shift
	vmtest/system "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	echo "$rc" >"$tmp/$name.rc"
	# The harness's own lines (timings) for the log.
	grep '^vmtest:' "$tmp/$name.err" | sed "s/^/# $name: /"
}

# rc_is NAME WANT / out_has NAME REGEX: what a boot gave.
rc_is()
{
	local rc

	rc=$(cat "$tmp/$1.rc")
	[ "$rc" -eq "$2" ] && return
	echo "exit $rc, want $2"
	tail -n 15 "$tmp/$1.err"
	return 1
}

out_has()
{
	grep -qE -- "$2" "$tmp/$1.out" && return
	echo "no line matching '$2' in:"
	cat "$tmp/$1.out"
	return 1
}

# The package once, for every boot (tests/run makes it before its jobs start: a `make deb`
# here would replace the file under the other boots).
deb=${NODEFD_DEB:-$(make --no-print-directory BUILD="${NODEFD_BUILD:-build}" deb | tail -n 1)}
if [ ! -f "$deb" ]; then
	check "make deb" false
	done_testing
	exit
fi
export NODEFD_DEB=$deb
printf 'the marker in an added file\n' >"$tmp/marker.txt"

for k in ${SYSTEM_KERNELS:-debian12}; do
	# nodefd on: the service is up and enforcing, the command's status and --add files pass.
	boot "$k-on" --kernel="$k" --add="$tmp/marker.txt" -- bash -c '
		echo "state=$VMTEST_SYSTEM_STATE"
		echo "nodefd=$(systemctl is-active nodefd.service)"
		echo "enabled=$(systemctl is-enabled nodefd.service)"
		cat /opt/add/marker.txt
		nodefdctl status && echo "status=ok"
		journalctl -b -u nodefd.service --no-pager -o cat | grep -c "\"type\":\"start\"" |
			sed "s/^/starts=/"
		exit 7'
	check "$k nodefd=on: the command's exit status is the run's" rc_is "$k-on" 7
	check "$k nodefd=on: the boot finished (is-system-running: running)" \
		out_has "$k-on" '^state=running$'
	check "$k nodefd=on: nodefd.service is active" out_has "$k-on" '^nodefd=active$'
	check "$k nodefd=on: nodefd.service was started once" out_has "$k-on" '^starts=1$'
	check "$k nodefd=on: --add files reach /opt/add" out_has "$k-on" '^the marker in an added file$'
	check "$k nodefd=on: nodefdctl status works" out_has "$k-on" '^status=ok$'

	# nodefd off: the same package, the unit masked and never started.
	boot "$k-off" --kernel="$k" --nodefd=off -- bash -c '
		echo "state=$VMTEST_SYSTEM_STATE"
		echo "nodefd=$(systemctl is-active nodefd.service)"
		echo "enabled=$(systemctl is-enabled nodefd.service)"
		command -v nodefdctl
		[ -e /sys/fs/bpf/nodefd ] && echo "pins=yes" || echo "pins=no"'
	check "$k nodefd=off: the run passes" rc_is "$k-off" 0
	check "$k nodefd=off: the boot finished" out_has "$k-off" '^state=running$'
	check "$k nodefd=off: nodefd.service is masked" out_has "$k-off" '^enabled=masked$'
	check "$k nodefd=off: nodefd.service is inactive" out_has "$k-off" '^nodefd=inactive$'
	check "$k nodefd=off: nothing is loaded" out_has "$k-off" '^pins=no$'
	check "$k nodefd=off: the package is installed" out_has "$k-off" '^/usr/sbin/nodefdctl$'
done

# Failures, on the default kernel only: they test the harness, not the system.
check "a false command fails the run" expect_status 1 vmtest/system --nodefd=off -- false
check "a kernel WARNING fails the run" \
	expect_status 125 vmtest/system --nodefd=off -- sh -c 'echo "WARNING: test" > /dev/kmsg'
done_testing
