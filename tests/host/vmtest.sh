#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/vmtest.sh: the VM harness itself. A harness that passes a failed command, misses a
# kernel warning or loses the exit status would make every in-VM result meaningless.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

# out_contains WORD CMD...: CMD succeeds and prints WORD as a whole word.
out_contains()
{
	local word=$1 out

	shift
	out=$("$@") || { echo "failed: $out"; return 1; }
	echo "$out"
	grep -qw -- "$word" <<<"$out"
}

check "debian12 kernel lists bpf in its LSMs" \
	out_contains bpf vmtest/run --kernel=debian12 -- cat /sys/kernel/security/lsm
check "debian13 kernel is 6.12 and lists bpf in its LSMs" \
	out_contains bpf vmtest/run --kernel=debian13 -- sh -c \
	'case $(uname -r) in 6.12.*) cat /sys/kernel/security/lsm ;; *) uname -r; exit 1 ;; esac'

# pin_of KERNEL: the version vmtest/fetch-stock's STOCK_KERNELS table pins KERNEL's
# linux-image-cloud-amd64 to.
pin_of()
{
	sed -n "/^STOCK_KERNELS='\$/,/^'\$/p" vmtest/fetch-stock | awk -v k="$1" '$1 == k { print $3 }'
}
# pinned_is KERNEL PIN: KERNEL boots, its uname -r is the pinned version's upstream part and a
# + or - (pin 7.3.4-1~bpo13+1: 7.3.4+deb13-cloud-amd64), and it lists bpf in its LSMs. Moving a
# pin needs no change here.
pinned_is()
{
	[ -n "$2" ] && [ "$2" != - ] || { echo "no pin for $1 in vmtest/fetch-stock"; return 1; }
	out_contains bpf vmtest/run --kernel="$1" -- sh -c \
		'uname -r; case $(uname -r) in "$1"[+-]*) cat /sys/kernel/security/lsm ;; *) exit 1 ;; esac' \
		sh "${2%-*}"
}
for k in debian13-backports sid; do
	pin=$(pin_of $k)
	check "$k kernel is the pinned ${pin:-(none)} and lists bpf in its LSMs" pinned_is $k "$pin"
done
# The disk tests need a real disk filesystem, and some tests overlayfs and loop devices: on
# Debian's kernels through modules vmtest/run loads (virtio_blk, overlay, loop), on onode
# built in.
for k in onode debian12 debian13 debian13-backports sid; do
	check "$k guest has ext4 with ACLs on /mnt/ext4, overlayfs and loop" \
		out_contains ext4 vmtest/run --kernel=$k -- sh -c \
		'grep " /mnt/ext4 ext4 " /proc/mounts && mkdir l u w m &&
		mount -t overlay o -o lowerdir=l,upperdir=u,workdir=w m && losetup -f'
done
check "onode kernel lists bpf in its LSMs" \
	out_contains bpf vmtest/run --kernel=onode -- cat /sys/kernel/security/lsm
check "a false command fails the run" expect_status 1 vmtest/run -- false
check "the command's exit status is the run's" expect_status 7 vmtest/run -- sh -c 'exit 7'
check "a kernel WARNING fails the run" \
	expect_status 125 vmtest/run -- sh -c 'echo "WARNING: test" > /dev/kmsg'
check "WARNING text on stdout is no kernel warning" \
	expect_status 0 vmtest/run -- echo 'WARNING: just text'
check "arguments keep their spaces and quotes" \
	out_contains "x|a b|c'd|" vmtest/run -- sh -c 'printf "%s|" "$0" "$@"' x 'a b' "c'd"
check "--add files reach /opt/add" \
	out_contains "$(cat /etc/hostname)" vmtest/run --add=/etc/hostname -- cat /opt/add/hostname
# The second build of the same inputs must come from the cache.
check "a second kernel build is a cache hit" \
	bash -c 'vmtest/build-kernel 2>&1 >/dev/null | grep -q "cached"'
done_testing
