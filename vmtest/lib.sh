# SPDX-License-Identifier: GPL-2.0
#
# vmtest/lib.sh: helpers shared by the vmtest scripts (sourced, never run).

set -euo pipefail
umask 022
export LC_ALL=C

VMTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
VMTEST_REPO=$(dirname "$VMTEST_DIR")
# Exit status of vmtest_die; vmtest/run raises it to 125 so that a broken harness is never
# mistaken for the status of the command under test.
VMTEST_DIE_STATUS=1
VMTEST_VERBOSE=${NODEFD_VERBOSE:-0}

vmtest_msg()
{
	printf 'vmtest: %s\n' "$*" >&2
}

# vmtest_die WHAT WHY...
vmtest_die()
{
	local what=$1

	shift
	printf 'vmtest: error: %s: %s\n' "$what" "$*" >&2
	exit "$VMTEST_DIE_STATUS"
}

# vmtest_step_begin NAME / vmtest_step_end: "vmtest: NAME..." then "vmtest: NAME done (Ns)".
vmtest_step_begin()
{
	VMTEST_STEP=$1
	VMTEST_STEP_START=$SECONDS
	vmtest_msg "$VMTEST_STEP..."
}

vmtest_step_end()
{
	vmtest_msg "$VMTEST_STEP done ($((SECONDS - VMTEST_STEP_START))s)"
}

vmtest_sha256()
{
	sha256sum | cut -c1-64
}

vmtest_is_root()
{
	[ "$(id -u)" -eq 0 ]
}

# The cache always lives outside the work tree: a kernel tree inside the repo would be picked up
# by git, grep and editors, and would not survive `git clean`.
vmtest_cache_dir()
{
	local dir

	if vmtest_is_root; then
		dir=${NODEFD_CACHE:-/var/cache/nodefd}
	else
		dir=${NODEFD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodefd}
	fi
	mkdir -p "$dir" || vmtest_die "cache $dir" "cannot create it"
	dir=$(cd "$dir" && pwd -P)
	case "$dir/" in
	"$VMTEST_REPO"/*)
		vmtest_die "cache $dir" "is inside the work tree $VMTEST_REPO; set NODEFD_CACHE elsewhere"
		;;
	esac
	printf '%s\n' "$dir"
}

# vmtest_apt_install PKG...: install PKG (as root) with apt-get, refreshing the lists and trying
# again if that fails: a fresh machine may have no or stale lists. apt-get waits up to 10
# minutes for dpkg's lock instead of failing: tests/run boots several VMs at once, and each
# may install what it lacks, as may unattended-upgrades on a new machine. Fails naming them.
vmtest_apt_install()
{
	local apt=(apt-get -y --no-install-recommends -o DPkg::Lock::Timeout=600)

	if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install "$@" >/dev/null 2>&1; then
		"${apt[@]}" update >/dev/null || vmtest_die "apt-get update" "failed"
		DEBIAN_FRONTEND=noninteractive "${apt[@]}" install "$@" >&2 ||
			vmtest_die "apt-get install $*" "failed"
	fi
}

# vmtest_lock FILE: hold an exclusive lock on FILE until the script exits (fd 9).
vmtest_lock()
{
	exec 9>"$1"
	if ! flock -n 9; then
		vmtest_msg "waiting for lock $1..."
		flock 9
	fi
}

# vmtest_prune DIR KEEP: in DIR, keep the KEEP most recently finished entries (by their stamp)
# and remove the others, including unfinished ones left by an interrupted run.
# The caller holds the lock that guards DIR.
vmtest_prune()
{
	local dir=$1 keep=$2 entry n=0

	while read -r entry; do
		n=$((n + 1))
		[ "$n" -le "$keep" ] && continue
		vmtest_msg "pruning $dir/$entry"
		rm -rf -- "${dir:?}/$entry"
	done < <(cd "$dir" && for d in */; do
			d=${d%/}
			[ -d "$d" ] || continue
			if [ -e "$d/stamp" ]; then
				printf '%s %s\n' "$(stat -c %Y "$d/stamp")" "$d"
			else
				printf '0 %s\n' "$d"
			fi
		done | sort -rn | cut -d' ' -f2-)
}

# vmtest_newc_entry NAME MODE RDEVMAJOR RDEVMINOR: one data-less newc cpio header.
vmtest_newc_entry()
{
	local name=$1 mode=$2 major=$3 minor=$4 namesize pad

	namesize=$((${#name} + 1))
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		0 "$mode" 0 0 1 0 0 0 0 "$major" "$minor" "$namesize" 0
	printf '%s\0' "$name"
	# The header is 110 bytes; name and header together are padded to a multiple of 4.
	pad=$(((4 - (110 + namesize) % 4) % 4))
	head -c "$pad" /dev/zero
}

# vmtest_newc_node NAME PERM MAJOR MINOR: a character device entry, so the base initramfs has
# /dev/console without mknod (and without root) on the host. The kernel reads concatenated
# archives, so these entries and their trailer simply precede the cpio(1) output.
vmtest_newc_node()
{
	vmtest_newc_entry "$1" $((0020000 | $2)) "$3" "$4"
}

vmtest_newc_trailer()
{
	vmtest_newc_entry 'TRAILER!!!' 0 0 0
}

# vmtest_shell_quote ARG...: each ARG single-quoted for a POSIX shell, space separated.
vmtest_shell_quote()
{
	local arg sep=''

	for arg in "$@"; do
		printf "%s'%s'" "$sep" "${arg//\'/\'\\\'\'}"
		sep=' '
	done
}

# Make the VM side's Debian packages present (vmtest/deps is a no-op when they are).
vmtest_deps()
{
	"$VMTEST_DIR/deps"
}

# vmtest_extract_vmlinux VMLINUZ OUT: the ELF vmlinux (with its .BTF section) inside a bzImage,
# found by trying each compressed stream the image may hold until one unpacks to an ELF file.
vmtest_extract_vmlinux()
{
	local img=$1 out=$2 magic tool off

	for magic in 'zstd:\x28\xb5\x2f\xfd' 'xz:\xfd7zXZ\x00' 'gzip:\x1f\x8b\x08' 'lz4:\x02\x21\x4c\x18'; do
		tool=${magic%%:*}
		command -v "$tool" >/dev/null || continue
		for off in $(LC_ALL=C grep -obaP "${magic#*:}" "$img" | head -n 8 | cut -d: -f1); do
			tail -c "+$((off + 1))" "$img" | "$tool" -dc >"$out.$$" 2>/dev/null || true
			if [ "$(head -c 4 "$out.$$" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
				mv "$out.$$" "$out"
				return 0
			fi
		done
	done
	rm -f "$out.$$"
	return 1
}
