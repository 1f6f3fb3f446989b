#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/kconst.sh: the kernel values nodefd takes from a #define (which CO-RE cannot
# relocate) are right for every kernel nodefd is tested on, read from that kernel's own source.
#  - The values src/kconst.c gives each kernel's release (build/host/kconst_dump, with that
#    kernel's BTF when its vmlinux is in the cache) are those its headers define.
#  - Every #define in bpf/ and include/nodefd.h is either a kernel constant listed below, whose
#    value must be the one each kernel's headers give it, or one of nodefd's own names, also
#    listed below: a new hard-coded kernel value fails until it is listed, and so checked.
#  - The checker itself reads each form of #define it meets, and reports a wrong value.
# The headers come from each kernel's linux-source package (the host's linux-source-6.1; the
# others downloaded once, at the version vmtest/fetch-stock pins the kernel to): only the files
# needed are kept, in the cache (ksrc/<release>/<version>/), so a second run is quick.
# Needs python3 (tests/kconst/kdefine.py reads and evaluates the definitions).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

work=$(mktemp -d /tmp/nodefd-kconst.XXXXXX)
trap 'rm -rf "$work"' EXIT
kdefine=tests/kconst/kdefine.py
# Debian's python3 (/usr/bin) first: a python3 earlier in PATH may be a slow wrapper (pyenv).
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# The tested kernels (tests/run, vmtest/run --kernel=NAME) and the release each reports. The
# O_NODE test kernel is built from the host's linux-source-6.1; the stock kernels' suites and
# pins are vmtest/fetch-stock's (STOCK_KERNELS), and their linux-source is taken at the same
# version (Debian versions linux-source-X.Y and the cloud kernel's metapackage alike).
KERNELS='
onode               6.1
debian12            6.1
debian13            6.12
sid                 7.2
debian13-backports  7.3
'

# Kernel constants that bpf/ and include/nodefd.h hard-code: the name there, the kernel's name
# ("=": the same; syscall:NAME: that system call's number in a syscall table), and the files of
# the kernel's source that define it (it may move: the first that defines it wins).
KERNEL_DEFINES='
EACCES                        =                             include/uapi/asm-generic/errno-base.h
AT_FDCWD                      =                             include/uapi/linux/fcntl.h
AT_EMPTY_PATH                 =                             include/uapi/linux/fcntl.h
O_TRUNC                       =                             include/uapi/asm-generic/fcntl.h
O_APPEND                      =                             include/uapi/asm-generic/fcntl.h
O_PATH                        =                             include/uapi/asm-generic/fcntl.h
PROC_SUPER_MAGIC              =                             include/uapi/linux/magic.h
OVERLAYFS_SUPER_MAGIC         =                             include/uapi/linux/magic.h
EXT4_SUPER_MAGIC              =                             include/uapi/linux/magic.h
S_IFMT                        =                             include/uapi/linux/stat.h
S_IFDIR                       =                             include/uapi/linux/stat.h
S_IFIFO                       =                             include/uapi/linux/stat.h
S_IRWXG                       =                             include/uapi/linux/stat.h
S_IXUSR                       =                             include/uapi/linux/stat.h
S_IXGRP                       =                             include/uapi/linux/stat.h
S_IXOTH                       =                             include/uapi/linux/stat.h
CAP_DAC_OVERRIDE              =                             include/uapi/linux/capability.h
CAP_DAC_READ_SEARCH           =                             include/uapi/linux/capability.h
CAP_SYS_PTRACE                =                             include/uapi/linux/capability.h
YAMA_SCOPE_CAPABILITY         =                             security/yama/yama_lsm.c
YAMA_SCOPE_NO_ATTACH          =                             security/yama/yama_lsm.c
ACL_USER_OBJ                  =                             include/uapi/linux/posix_acl.h include/linux/posix_acl.h
ACL_USER                      =                             include/uapi/linux/posix_acl.h include/linux/posix_acl.h
ACL_GROUP_OBJ                 =                             include/uapi/linux/posix_acl.h include/linux/posix_acl.h
ACL_GROUP                     =                             include/uapi/linux/posix_acl.h include/linux/posix_acl.h
ACL_MASK                      =                             include/uapi/linux/posix_acl.h include/linux/posix_acl.h
ACL_OTHER                     =                             include/uapi/linux/posix_acl.h include/linux/posix_acl.h
UID_GID_MAP_MAX_BASE_EXTENTS  =                             include/linux/user_namespace.h
UID_GID_MAP_MAX_EXTENTS       =                             include/linux/user_namespace.h
X32_SYSCALL_BIT               __X32_SYSCALL_BIT             arch/x86/include/uapi/asm/unistd.h
USER32_CS                     __USER32_CS                   arch/x86/include/asm/segment.h
NR_LINKAT_IA32                syscall:linkat                arch/x86/entry/syscalls/syscall_32.tbl
NODEFD_EV_MODE_READ           FMODE_READ                    include/linux/fs.h
NODEFD_EV_MODE_WRITE          FMODE_WRITE                   include/linux/fs.h
NODEFD_EV_MODE_EXEC           FMODE_EXEC                    include/linux/fs.h
NODEFD_EV_MODE_PATH           FMODE_PATH                    include/linux/fs.h
NODEFD_COMM_LEN               TASK_COMM_LEN                 include/linux/sched.h
'

# Headers the values above may refer to (MNT_NS_INTERNAL is ERR_PTR(-EINVAL)).
ALSO_HEADERS='include/uapi/asm-generic/errno-base.h include/uapi/asm-generic/errno.h'

# nodefd's own names, no kernel value to check. (A macro that reads kconst. is checked through
# kconst_dump instead: its name must be one kconst_dump prints.)
OWN_DEFINES='
NODEFD_ABI_VERSION            the ABI between nodefdctl and the BPF object
NODEFD_MAX_DEPTH              a bound of nodefd walks
NODEFD_GROUP_STEPS            a bound of nodefd binary search (NGROUPS_MAX, 65536, halved 17 times)
NODEFD_MAX_ACL                a bound of nodefd (as many ACL entries as XATTR_SIZE_MAX holds)
NODEFD_MAX_CGROUP_LEVELS      a bound of nodefd walks
NODEFD_PATH_MAX               the size of an event field
NODEFD_NAME_MAX               the size of an event field
NODEFD_CGROUP_PATH_MAX        the size of an event field
NODEFD_EV_CGROUP_CUT          an event flag
NODEFD_REASON_SLOTS           the size of a counter block
NODEFD_MAX_POLICIES           the size of a map
NODEFD_EVENT_BURST            a rate of nodefd events
NODEFD_EVENT_UID_BURST        a rate of nodefd events
NODEFD_EVENT_WINDOW_NS        a rate of nodefd events
NODEFD_EVENT_SOURCES          the size of a map
NODEFD_POLICY_PATH_READ       a policy flag
NODEFD_POLICY_STRICT          a policy flag
NODEFD_MAX_CPUS               a bound of nodefd loop over CPUs
USER_NS_LEVELS                a bound of nodefd walks (the kernel nests 32 user namespaces)
PARENTS_SEARCHED              a bound of nodefd walks
MAP_FILES_DIGITS              the hex digits of a 64-bit address, in a map_files name
__NR_fchmodat2                x86-64 fchmodat2 (6.6) where the build host uapi headers lack it; in no 6.1 table
__NR_setxattrat               x86-64 setxattrat (6.13) where the build host uapi headers lack it; in no 6.1 or 6.12 table
__NR_getxattrat               x86-64 getxattrat (6.13), as above
__NR_listxattrat              x86-64 listxattrat (6.13), as above
__NR_removexattrat            x86-64 removexattrat (6.13), as above
PATH_COMPONENTS               a bound of nodefd walks
TAIL_PEEK                     a bound of nodefd walks
ALIAS_MOUNTS                  a bound of nodefd walks
CHILD_MOUNTS                  a bound of nodefd walks (the mounts on one mount)
BIND_CHAIN                    a bound of nodefd walks (the mounts from a target up to the top)
WALK_BINDS                    a mode of nodefd_check_place()
WALK_CRED                     a mode of nodefd_check_place()
SCAN_END                      nodefd marker
CAST                          a function-like helper
F_OFF                         a function-like helper
O_NODE                        the flag of nodefd own kernel patch (kernel-config/patches), in no stock kernel
'

declare -A kernel_define=() own_define=()
for n in $(awk 'NF { print $1 }' <<<"$KERNEL_DEFINES"); do
	kernel_define[$n]=1
done
for n in $(awk 'NF { print $1 }' <<<"$OWN_DEFINES"); do
	own_define[$n]=1
done

# stock_kernel NAME: "SUITE PIN" from vmtest/fetch-stock's STOCK_KERNELS.
stock_kernel()
{
	sed -n "/^STOCK_KERNELS='/,/^'/p" vmtest/fetch-stock | awk -v k="$1" '$1 == k { print $2, $3; found = 1 } END { exit !found }'
}

# fetch_source RELEASE SUITE PIN FILE...: the directory, in the cache, holding the FILEs
# (paths in a kernel source tree; those a version lacks are left out) of linux-source-RELEASE
# at version PIN ("-": the suite's current one), from Debian's SUITE ("host": the installed
# package, from vmtest/deps). Prints the directory; its stamp holds "PACKAGE VERSION".
fetch_source()
(
	. vmtest/lib.sh

	local rel=$1 suite=$2 pin=$3 pkg=linux-source-$1 cache top version tarball d dir new dl f
	local apt_opts=() had=() want=() members=() st=() aptdir
	shift 3
	cache=$(vmtest_cache_dir)
	top=$cache/ksrc/$rel
	mkdir -p "$top"

	# As vmtest/fetch-stock: another suite than the host's through a sources list and package
	# lists of our own, in $cache/apt/<suite> (shared with it); /etc/apt is never changed.
	if [ "$suite" != host ]; then
		aptdir=$cache/apt/$suite
		mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
		printf '%s\n' "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
			>"$aptdir/sources.list"
		apt_opts=(-o "Dir::Etc::sourcelist=$aptdir/sources.list" -o "Dir::Etc::sourceparts=-"
			-o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache"
			-o "Dir::State::status=/dev/null" -o APT::Sandbox::User=root)
	fi
	candidate() { apt-cache "${apt_opts[@]}" policy "$pkg" 2>/dev/null | awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'; }
	known() { apt-cache "${apt_opts[@]}" show "$pkg=$1" >/dev/null 2>&1; }
	update()
	{
		vmtest_step_begin "apt-get update for $suite ($1)"
		apt-get "${apt_opts[@]}" update >/dev/null || vmtest_die "apt-get update for $suite" "failed"
		vmtest_step_end
	}

	if [ "$suite" = host ]; then
		version=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) ||
			vmtest_die "$pkg" "not installed (vmtest/deps installs it)"
		tarball=/usr/src/$pkg.tar.xz
		[ -r "$tarball" ] || vmtest_die "$tarball" "missing (reinstall $pkg)"
	elif [ "$pin" != - ]; then
		version=$pin
	else
		version=$(candidate)
		if [ -z "$version" ]; then
			d=$(ls -t "$top"/*/stamp 2>/dev/null | head -n 1) || true
			if [ -n "$d" ]; then
				vmtest_msg "cannot resolve $pkg (no $suite lists); using the cached $(cat "$d")"
				dirname "$d"
				exit 0
			fi
			update "no package lists"
			version=$(candidate)
			[ -n "$version" ] || vmtest_die "$pkg" "not in the $suite lists"
		fi
	fi

	dir=$top/$version
	# have: every FILE asked for is in $dir/files, the files asked for last time.
	have()
	{
		[ -e "$dir/stamp" ] || return 1
		mapfile -t had <"$dir/files"
		for f in "$@"; do
			[[ " ${had[*]} " == *" $f "* ]] || return 1
		done
	}
	if have "$@"; then
		printf '%s\n' "$dir"
		exit 0
	fi
	vmtest_lock "$top/.lock"
	if have "$@"; then
		printf '%s\n' "$dir"
		exit 0
	fi
	# Anything asked for before is kept.
	if [ -e "$dir/stamp" ]; then
		mapfile -t want <"$dir/files"
		vmtest_msg "$pkg $version: more files wanted than the cache has, extracting again"
	fi
	mapfile -t want < <(printf '%s\n' "${want[@]}" "$@" | sed '/^$/d' | sort -u)
	for f in "${want[@]}"; do
		members+=("$pkg/$f")
	done

	new=$dir.new
	rm -rf "$new"
	mkdir -p "$new/src"
	if [ "$suite" = host ]; then
		vmtest_step_begin "extracting ${#want[@]} files from $tarball"
		set +e
		tar -xJf "$tarball" -C "$new/src" --strip-components=1 "${members[@]}" 2>"$new/tar.err"
		st=(0 0 $?)
		set -e
	else
		if ! known "$version"; then
			update "no $pkg $version in the lists"
			known "$version" ||
				vmtest_die "$pkg $version" "not in the $suite lists (they have $(candidate)); move the pin in vmtest/fetch-stock"
		fi
		dl=$(mktemp -d "$top/.download.XXXXXX")
		trap 'rm -rf "$dl"' EXIT
		vmtest_step_begin "downloading $pkg $version from $suite"
		(cd "$dl" && apt-get "${apt_opts[@]}" download -qq -o APT::Sandbox::User=root "$pkg=$version") >&2 ||
			vmtest_die "apt-get download $pkg=$version" "failed"
		vmtest_step_end
		vmtest_step_begin "extracting ${#want[@]} files from $pkg $version"
		# The .deb is read once, through pipes: its .tar.xz is never written out.
		set +e
		dpkg-deb --fsys-tarfile "$dl"/*.deb | tar -xOf - "./usr/src/$pkg.tar.xz" |
			tar -xJf - -C "$new/src" --strip-components=1 "${members[@]}" 2>"$new/tar.err"
		st=("${PIPESTATUS[@]}")
		set -e
		rm -rf "$dl"
	fi
	# A file this version does not have is no error (tar's status 2): the next header listed
	# for the name is read.
	if [ "${st[0]}" -ne 0 ] || [ "${st[1]}" -ne 0 ] || [ "${st[2]}" -gt 2 ] ||
		grep -v -e ': Not found in archive$' -e '^tar: Exiting with failure status due to previous errors$' "$new/tar.err" >&2 ||
		[ -z "$(find "$new/src" -type f -print -quit)" ]; then
		vmtest_die "extracting $pkg $version" "failed (status ${st[*]})"
	fi
	rm -f "$new/tar.err"
	vmtest_step_end
	printf '%s\n' "${want[@]}" >"$new/files"
	printf '%s %s\n' "$pkg" "$version" >"$new/stamp"
	rm -rf "$dir"
	mv "$new" "$dir"
	vmtest_msg "$pkg $version: $(cd "$dir/src" && find . -type f | wc -l) of ${#want[@]} files in $dir"
	vmtest_prune "$top" 2
	printf '%s\n' "$dir"
)

# cached_build KERNEL: the cached build of KERNEL (vmlinux, for its BTF, and its .config), if
# there is one; never builds or downloads one. The newest vmtest/build-kernel build for onode;
# vmtest/fetch-stock's unpacking at its pin (or its newest) for a stock kernel.
cached_build()
{
	local cache d pin=-

	cache=$(. vmtest/lib.sh && vmtest_cache_dir 2>/dev/null) || return 1
	if [ "$1" = onode ]; then
		d=$(ls -td "$cache"/onode/*/stamp 2>/dev/null | head -n 1)
	else
		read -r _ pin < <(stock_kernel "$1")
		if [ "${pin:--}" != - ]; then
			d=$(ls -td "$cache/stock/$1"/*_"$pin"/stamp 2>/dev/null | head -n 1)
		else
			d=$(ls -td "$cache/stock/$1"/*/stamp 2>/dev/null | head -n 1)
		fi
	fi
	[ -n "$d" ] && [ -r "$(dirname "$d")/vmlinux" ] && dirname "$d"
}

# config_of BUILD: the kernel .config beside BUILD's vmlinux.
config_of()
{
	local f

	for f in "$1/.config" "$1"/root/boot/config-* "$1"/root/usr/lib/modules/*/config; do
		[ -f "$f" ] && { printf '%s\n' "$f"; return 0; }
	done
	return 1
}

# compare_with SOURCE_DIR CONFIG LINES_FILE: kdefine.py compare with the headers of SOURCE_DIR.
compare_with()
{
	local also=() h

	for h in $ALSO_HEADERS; do
		also+=(--also "$h")
	done
	"$python" "$kdefine" compare "$1/src" ${2:+--config "$2"} "${also[@]}" <"$3"
}

# check_kconst KERNEL RELEASE SOURCE_DIR BUILD: kconst_dump's values for KERNEL against its
# source (with the BTF of BUILD's vmlinux, if there is a BUILD).
check_kconst()
{
	local k=$1 rel=$2 dir=$3 build=$4 vmlinux=() config=

	[ -n "$dir" ] || { echo "no source for $k"; return 1; }
	[ -x "$dump" ] || { echo "no kconst_dump"; return 1; }
	if [ -n "$build" ]; then
		vmlinux=("$build/vmlinux")
		config=$(config_of "$build") || config=
		echo "BTF from $build/vmlinux, .config ${config:-none}"
	else
		echo "no $k vmlinux in the cache: values by release only, no .config"
	fi
	"$dump" "$rel" "${vmlinux[@]}" >"$work/dump.$k" || return 1
	awk '{ printf "%s = %s", $1, $2; for (i = 4; i <= NF; i++) printf " %s", $i; print "" }' \
		"$work/dump.$k" >"$work/kconst.$k"
	compare_with "$dir" "$config" "$work/kconst.$k"
}

# check_bpf KERNEL SOURCE_DIR BUILD: the kernel constants of bpf/ and include/nodefd.h against
# KERNEL's source (and BUILD's .config).
check_bpf()
{
	local k=$1 dir=$2 build=$3 config=

	[ -n "$dir" ] || { echo "no source for $k"; return 1; }
	[ -z "$build" ] || config=$(config_of "$build") || config=
	awk -F'\t' 'NR == FNR { if (NF) { split($0, f, " "); line[f[1]] = $0 } next }
		($1 in line) { split(line[$1], f, " "); printf "%s %s %s", f[1], f[2], $2
			for (i = 3; i in f; i++) printf " %s", f[i]
			print "" }' <(printf '%s\n' "$KERNEL_DEFINES") "$work/scan" >"$work/bpf.$k"
	compare_with "$dir" "$config" "$work/bpf.$k"
}

# check_listed SCAN: each #define of bpf/ and include/nodefd.h (SCAN: kdefine.py scan's lines)
# is in KERNEL_DEFINES (and evaluates to a number) or in OWN_DEFINES, or reads kconst. under a
# name kconst_dump knows.
check_listed()
{
	local name value where body bad=0 n=0 k
	local -A seen=() dumped=()

	while read -r name; do
		dumped[$name]=1
	done <"$work/dump.names"
	while IFS=$'\t' read -r name value where body; do
		n=$((n + 1))
		seen[$name]=1
		if [ -n "${kernel_define[$name]:-}" ]; then
			[ "$value" != - ] || { echo "$name in $where: not a number ($body)"; bad=1; }
		elif [ -n "${own_define[$name]:-}" ]; then
			:
		elif [[ "$body" == *kconst.* ]]; then
			[ -n "${dumped[$name]:-}" ] ||
				{ echo "$name in $where reads kconst but kconst_dump has no $name"; bad=1; }
		else
			echo "unchecked kernel constant $name in $where ($body): add it to KERNEL_DEFINES or OWN_DEFINES in tests/host/kconst.sh"
			bad=1
		fi
	done <"$1"
	for k in "${!kernel_define[@]}" "${!own_define[@]}"; do
		[ -n "${seen[$k]:-}" ] || echo "note: $k is listed here but defined nowhere any more"
	done
	echo "$n #defines in bpf/ and include/nodefd.h"
	return "$bad"
}

# A synthetic header with each form of #define the kernel uses, for the checker's self-test.
selftest_tree()
{
	mkdir -p "$work/self/src/include" "$work/self/src/arch"
	cat >"$work/self/src/include/forms.h" <<'EOF'
#ifndef _FORMS_H
#define _FORMS_H
#define EINVAL		22	/* Invalid argument */
#define F_HEX		0x0010
#define F_BIT		BIT(10)	/* ... in open */
#define F_SHIFT		(1 << 16)
#define F_FMODE		((__force fmode_t)(1 << 14))
#define F_FMODE_HEX	((__force fmode_t)0x4000)
#define F_VOID		((void *)(-1))
#define F_ERR		ERR_PTR(-EINVAL) /* distinct from any mnt_namespace */
#define F_OCTAL		00170000
#define F_CONT		(F_HEX | \
			 F_SHIFT)
/* #define F_COMMENTED 5 */
#if defined(CONFIG_X86_32) && !defined(BUILD_VDSO32_64)
#define F_ARCH		1
#else /* 64-bit: */
#define F_ARCH		(F_ARCH_BASE*8 + 3)
#define F_ARCH_BASE	4
#endif
#ifdef CONFIG_FORMS
#define F_CFG		1
#else
#define F_CFG		2
#endif
enum {
	F_E0,
	F_E1 = 1 << 3,	/* comment, with a comma */
	F_E2,
};
#endif
EOF
	printf '#define F_MOVED 7\n' >"$work/self/src/include/moved.h"
	printf 'CONFIG_FORMS=y\n' >"$work/self/config"
	printf '# comment\n303\ti386\tlinkat\t\t\tsys_linkat\n' >"$work/self/src/arch/syscall_32.tbl"
	cat >"$work/self/good" <<'EOF'
F_HEX = 0x10 include/forms.h
F_BIT = 0x400 include/forms.h
F_SHIFT = 0x10000 include/forms.h
F_FMODE = 0x4000 include/forms.h
F_FMODE_HEX = 0x4000 include/forms.h
F_VOID = 0xffffffffffffffff include/forms.h
F_ERR = 0xffffffffffffffea include/forms.h
F_OCTAL = 0xf000 include/forms.h
F_CONT = 0x10010 include/forms.h
F_ARCH = 0x23 include/forms.h
F_E0 = 0 include/forms.h
F_E2 = 0x9 include/forms.h
F_CFG = 1 include/forms.h
F_MOVED = 7 include/gone.h include/forms.h include/moved.h
NR syscall:linkat 303 arch/syscall_32.tbl
EOF
	cat >"$work/self/bad" <<'EOF'
F_BIT = 0x200 include/forms.h
F_COMMENTED = 5 include/forms.h
F_CFG = 1 include/forms.h
EOF
	# As bpf/ would be with a new hard-coded kernel value.
	{ cat "$work/scan"; printf 'PATH_MAX\t0x1000\tbpf/new.bpf.h:1\t4096\n'; } >"$work/self/scan"
}

# expect_report LINES_FILE SOURCE_DIR WANT...: the checker fails on LINES_FILE, and says each
# WANT (in a line of its output).
expect_report()
{
	local lines=$1 dir=$2 out w

	shift 2
	out=$(compare_with "$dir" "" "$lines") && { echo "$out"; echo "the checker passed"; return 1; }
	echo "$out"
	for w in "$@"; do
		grep -qF -- "$w" <<<"$out" || { echo "missing: $w"; return 1; }
	done
}

# unlisted_fails SCAN: check_listed fails on SCAN, which has an unlisted PATH_MAX.
unlisted_fails()
{
	local out

	out=$(check_listed "$1") && { echo "$out"; echo "check_listed passed"; return 1; }
	echo "$out" | grep -F PATH_MAX
	grep -qF "unchecked kernel constant PATH_MAX in bpf/new.bpf.h:1" <<<"$out"
}

dump=$work/host/kconst_dump
check "build/host/kconst_dump builds" make --no-print-directory BUILD="$work" "$dump"
: >"$work/dump.names"
[ -x "$dump" ] && "$dump" 6.1 | cut -d' ' -f1 >"$work/dump.names"
"$python" "$kdefine" scan bpf/*.h bpf/*.c include/nodefd.h >"$work/scan" || : >"$work/scan"
check "every #define in bpf/ and include/nodefd.h is a listed kernel constant or nodefd's own" check_listed "$work/scan"

selftest_tree
check "the checker reads each form of #define" compare_with "$work/self" "$work/self/config" "$work/self/good"
check "the checker reports a wrong value, a missing name, a value that depends on the .config" \
	expect_report "$work/self/bad" "$work/self" \
	"F_BIT: nodefd 0x200 kernel 0x400 (include/forms.h:5)" \
	"F_COMMENTED: F_COMMENTED is not defined in include/forms.h" \
	"F_CFG: nodefd 0x1 kernel 0x1 or 0x2 (include/forms.h:22, include/forms.h:24)"
check "a #define in bpf/ that is not listed here fails the test" unlisted_fails "$work/self/scan"

# The files to extract: every header kconst_dump names, and those of the tables above.
mapfile -t needed < <({
	[ -x "$dump" ] && "$dump" 6.1 | cut -d' ' -f4-
	awk 'NF { for (i = 3; i <= NF; i++) print $i }' <<<"$KERNEL_DEFINES"
	echo "$ALSO_HEADERS"
} | tr ' ' '\n' | sed '/^$/d' | sort -u)

declare -A sources=() by_release=()
while read -r k rel; do
	[ -n "$k" ] || continue
	if [ "$k" = onode ]; then
		suite=host pin=-
	else
		read -r suite pin < <(stock_kernel "$k") || suite=
	fi
	dir='' label="linux-source-$rel"
	if [ -z "$suite" ]; then
		echo "# no $k in vmtest/fetch-stock's STOCK_KERNELS" >&2
	elif [ -n "${sources[$rel $suite $pin]+set}" ]; then
		dir=${sources[$rel $suite $pin]}
	else
		dir=$(fetch_source "$rel" "$suite" "$pin" "${needed[@]}") || dir=
		sources[$rel $suite $pin]=$dir
	fi
	[ -z "$dir" ] || { label=$(cat "$dir/stamp"); by_release[$rel]=$dir; }
	build=$(cached_build "$k") || build=
	check "$k ($rel): kconst_dump's values are its source's ($label)" check_kconst "$k" "$rel" "$dir" "$build"
	check "$k ($rel): the kernel constants of bpf/ and include/nodefd.h are its source's" check_bpf "$k" "$dir" "$build"
done <<<"$KERNELS"

# LOOKUP_OPEN was 0x0100 until 6.15 renumbered the LOOKUP_ flags; 7.2 has it BIT(16).
echo 'LOOKUP_OPEN = 0x100 include/linux/namei.h' >"$work/wrong"
check "the checker reports LOOKUP_OPEN 0x100 as wrong for 7.2" expect_report "$work/wrong" "${by_release[7.2]:-$work/none}" \
	"LOOKUP_OPEN: nodefd 0x100 kernel 0x10000 (include/linux/namei.h:"
done_testing
