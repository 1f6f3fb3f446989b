# SPDX-License-Identifier: GPL-2.0
#
# vmtest/system-lib.sh: the Debian system image of vmtest/system (sourced after lib.sh).
#
# The image is built from Debian packages only, never from the project's code (nodefd's
# package goes in at each boot), so it is cached by what it is made of: the suite, the package
# list and the functions below that build and customize it. It is built unprivileged:
# mmdebstrap --mode=unshare runs as a dedicated system user with subuid/subgid ranges (made
# here when we run as root), and mke2fs -d runs in the same user namespace, where the tree's
# owners read as they will in the guest.

# Lines that mean the kernel itself went wrong, whatever the command's status: vmtest/run's.
SYSTEM_SPLAT='BUG:|WARNING:|Oops|Kernel panic|general protection fault|Call Trace:|kernel BUG at|UBSAN:|KASAN:|Unable to handle kernel'

# The user the image is built as, when vmtest/system runs as root.
SYSTEM_BUILD_USER=nodefd-build

# system_packages SUITE: what the guest needs: systemd as PID 1 and the kernel it boots
# (initramfs-tools makes the initrd that finds the virtio disk; system_kernel_pin may say from
# which release), then the tools the real-workload suite runs.
system_packages()
{
	printf '%s\n' \
		systemd systemd-sysv udev dbus linux-image-cloud-amd64 initramfs-tools \
		e2fsprogs kmod procps login passwd \
		bash sudo util-linux iproute2 jq \
		runc crun podman uidmap bubblewrap systemd-container busybox-static \
		apt dpkg
	# A pod's infra container runs podman's pause image, which podman builds locally around
	# catatonit (only recommended by podman): `podman kube play` (tests/system/kube.sh).
	printf '%s\n' catatonit
	# nodefd's package goes in at each boot, offline: what it depends on must be here. A
	# new dependency makes dpkg -i fail at boot, by name, until it is added.
	printf '%s\n' libbpf1 libinih1 libjson-c5
	case "$1" in
	bookworm) printf '%s\n' libmicrohttpd12 ;;
	*) printf '%s\n' libmicrohttpd12t64 ;;
	esac
	# Debian's Prometheus server and promtool scrape nodefd's metrics endpoint (trixie splits
	# promtool into its own package).
	printf '%s\n' prometheus
	[ "$1" = bookworm ] || printf '%s\n' promtool
}

# The host side's own packages, beyond vmtest/deps'.
system_deps()
{
	local pkg missing=()

	for pkg in mmdebstrap uidmap e2fsprogs tar; do
		[ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ] ||
			missing+=("$pkg")
	done
	[ "${#missing[@]}" -eq 0 ] && return
	vmtest_is_root ||
		vmtest_die "packages" "missing: ${missing[*]}; run as root: apt-get install ${missing[*]}"
	vmtest_step_begin "installing ${missing[*]}"
	vmtest_apt_install "${missing[@]}"
	vmtest_step_end
}

# system_build_user: the user to run mmdebstrap as, given subordinate ids if it lacks them.
# Prints the name; as non-root, ourselves (who must have /etc/subuid and /etc/subgid entries).
system_build_user()
{
	local user start

	if ! vmtest_is_root; then
		user=$(id -un)
		grep -q "^$user:" /etc/subuid 2>/dev/null && grep -q "^$user:" /etc/subgid 2>/dev/null ||
			vmtest_die "image" "$user has no /etc/subuid and /etc/subgid ranges for mmdebstrap --mode=unshare (run once as root, or add them: usermod --add-subuids/--add-subgids)"
		printf '%s\n' "$user"
		return
	fi
	user=$SYSTEM_BUILD_USER
	# The image and the DaemonSet's base are built under locks of their own, maybe at once:
	# one of them creates the user.
	exec 8>"$(vmtest_cache_dir)/build-user.lock"
	flock 8
	if ! id -u "$user" >/dev/null 2>&1; then
		vmtest_msg "creating the system user $user, to build the Debian image unprivileged"
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
			"$user" || vmtest_die "useradd $user" "failed"
	fi
	if ! grep -q "^$user:" /etc/subuid 2>/dev/null || ! grep -q "^$user:" /etc/subgid 2>/dev/null; then
		# Past every range already given out (uids and gids alike), 65536 ids.
		start=$(cat /etc/subuid /etc/subgid 2>/dev/null |
			awk -F: 'BEGIN { e = 100000 } NF == 3 && $2 + $3 > e { e = $2 + $3 } END { print e }')
		start=$(((start + 65535) / 65536 * 65536))
		vmtest_msg "giving $user subordinate uids and gids $start-$((start + 65535)) (/etc/subuid, /etc/subgid)"
		grep -q "^$user:" /etc/subuid 2>/dev/null || echo "$user:$start:65536" >>/etc/subuid
		grep -q "^$user:" /etc/subgid 2>/dev/null || echo "$user:$start:65536" >>/etc/subgid
	fi
	exec 8>&-
	printf '%s\n' "$user"
}

# system_as USER CMD...: CMD as USER (ourselves as non-root).
system_as()
{
	local user=$1

	shift
	if vmtest_is_root; then
		runuser -u "$user" -- env HOME=/tmp "$@"
	else
		"$@"
	fi
}

# system_kernel_pin SUITE KSUITE: apt preferences that take the kernel from KSUITE, when it is
# not SUITE: its release and its -security and -updates suites at a priority above SUITE's, so
# the image gets the kernel KSUITE ships today, security updates included (apt's own
# PACKAGE/RELEASE would look in the one release named). Nothing when they are the same.
system_kernel_pin()
{
	local rel

	[ "$2" = "$1" ] && return
	for rel in "$2" "$2-updates" "$2-security"; do
		printf 'Package: linux-image-cloud-amd64 linux-image-*-cloud-amd64\n'
		printf 'Pin: release n=%s\nPin-Priority: 990\n\n' "$rel"
	done
}

# system_mirrors SUITE [KSUITE]: the image's sources, and the kernel's release's if it differs.
system_mirrors()
{
	[ "${2:-$1}" = "$1" ] || system_mirrors "$2"
	case "$1" in
	bookworm)
		printf '%s\n' \
			'deb http://deb.debian.org/debian bookworm main' \
			'deb http://deb.debian.org/debian bookworm-updates main' \
			'deb http://deb.debian.org/debian-security bookworm-security main'
		;;
	trixie)
		printf '%s\n' \
			'deb http://deb.debian.org/debian trixie main' \
			'deb http://deb.debian.org/debian trixie-updates main' \
			'deb http://deb.debian.org/debian-security trixie-security main'
		;;
	esac
}

# The generic part of the guest, baked into the image: two units that take this run's job
# from the second disk (a raw tar) and hand over to the job's own script, which travels with
# the job, so that changing how a run goes does not rebuild the image.
#   vmtest-setup.service: before sysinit.target, unpacks the job into /run/vmtest and runs
#     "guest setup" (installs nodefd's package, masks its unit with --nodefd=off).
#   vmtest-run.service: after multi-user.target, runs "guest run" (waits for the boot to
#     finish, runs the command, reports, powers off). Type=simple, so that its own start job
#     is done at once and never keeps the system from reaching "running".
system_customize()
{
	local root=$1

	mkdir -p "$root/usr/local/lib/vmtest"
	cat >"$root/usr/local/lib/vmtest/setup" <<-'EOF'
	#!/bin/sh
	# vmtest: unpack this run's job from the second disk and set it up (/run is noexec: the
	# job's script runs through bash). Any failure ends the boot at once: the host sees no
	# command start and fails the run, rather than waiting for its timeout.
	mkdir -p /run/vmtest && tar -xf /dev/vdb -C /run/vmtest && exec bash /run/vmtest/guest setup
	echo "vmtest-setup: error: cannot unpack the job from /dev/vdb" >/dev/console
	systemctl poweroff --force --force
	EOF
	chmod 0755 "$root/usr/local/lib/vmtest/setup"
	cat >"$root/etc/systemd/system/vmtest-setup.service" <<-'EOF'
	[Unit]
	Description=vmtest: set up this run's job
	DefaultDependencies=no
	Requires=dev-vdb.device
	After=dev-vdb.device local-fs.target systemd-remount-fs.service
	Before=sysinit.target

	[Service]
	Type=oneshot
	RemainAfterExit=yes
	TimeoutStartSec=10min
	ExecStart=/usr/local/lib/vmtest/setup
	StandardOutput=journal+console
	StandardError=journal+console

	[Install]
	WantedBy=sysinit.target
	EOF
	cat >"$root/etc/systemd/system/vmtest-run.service" <<-'EOF'
	[Unit]
	Description=vmtest: run this run's command
	After=multi-user.target vmtest-setup.service
	Requires=vmtest-setup.service

	[Service]
	Type=simple
	ExecStart=/bin/bash /run/vmtest/guest run
	StandardOutput=journal+console
	StandardError=journal+console

	[Install]
	WantedBy=multi-user.target
	EOF
	chroot "$root" systemctl enable vmtest-setup.service vmtest-run.service
	# Nothing on a timer may wake up in the middle of a test.
	chroot "$root" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
		fstrim.timer man-db.timer 2>/dev/null || true
	# Prometheus runs only in the case that scrapes nodefd, with that case's configuration.
	chroot "$root" systemctl disable prometheus.service 2>/dev/null || true
	printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' >"$root/etc/fstab"
	printf 'nodefd-system\n' >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 nodefd-system\n::1 localhost\n' >"$root/etc/hosts"
	# Root may log in on the console without a password (debugging by hand).
	chroot "$root" passwd -d root >/dev/null
	# A user for rootless workloads.
	chroot "$root" useradd -m -s /bin/bash -G sudo user
	chroot "$root" apt-get clean
	rm -rf "$root"/var/lib/apt/lists/*_Packages "$root"/var/cache/apt/*.bin
}

# system_image SUITE [KSUITE]: the cached image for SUITE with KSUITE's kernel (default:
# SUITE's own), built the first time. Sets image_dir, which holds root.img (ext4), vmlinuz and
# initrd.img (from the image's /boot), stamp.
system_image()
{
	local suite=$1 ksuite=${2:-$1} name=$1 key pkgs user stage log start

	[ "$ksuite" = "$suite" ] || name=$suite-$ksuite-kernel
	pkgs=$(system_packages "$suite" | sort -u | paste -sd, -)
	# Keyed by what makes the image: the suite, its sources, the packages, and the code that
	# builds and customizes it (not the rest of this file: the run side may change freely).
	key=$({
		printf '%s\n' "$suite" "$pkgs"
		system_mirrors "$suite" "$ksuite"
		system_kernel_pin "$suite" "$ksuite"
		declare -f system_packages system_kernel_pin system_mirrors system_customize system_image
	} | vmtest_sha256 | cut -c1-16)
	image_dir=$cache/image/$name-$key
	[ -e "$image_dir/stamp" ] && return
	mkdir -p "$cache/image"
	vmtest_lock "$cache/image/lock"
	if [ -e "$image_dir/stamp" ]; then
		exec 9>&-
		return
	fi
	command -v mmdebstrap >/dev/null && command -v newuidmap >/dev/null ||
		vmtest_die "image" "mmdebstrap and uidmap are needed (apt-get install mmdebstrap uidmap)"
	user=$(system_build_user)
	rm -rf "$image_dir"
	stage=$cache/image/tmp-$name-$key
	rm -rf "$stage"
	mkdir -p "$stage"
	# The hooks run as the namespace's root, which is no one outside: the stage is theirs to
	# write (and the cache around it is root's, 0755, so no one else can reach it).
	chmod 0777 "$stage"
	truncate -s 8G "$stage/root.img"
	chmod 0666 "$stage/root.img"
	log=$stage/mmdebstrap.log
	[ "$user" != "$(id -un)" ] && chown "$user" "$stage" "$stage/root.img"
	vmtest_step_begin "building the $name image as $user ($(system_packages "$suite" | wc -l) packages; about 4-8 minutes on two busy cores, once; log $log)"
	start=$SECONDS
	# The hooks run as the namespace's root: the customizing one is a bash script in the stage.
	{
		printf '#!/bin/bash\nset -euo pipefail\n'
		declare -f system_customize
		printf 'system_customize "$1"\n'
	} >"$stage/customize"
	chmod 0644 "$stage/customize"
	system_mirrors "$suite" "$ksuite" >"$stage/sources.list"
	system_kernel_pin "$suite" "$ksuite" >"$stage/kernel.pref"
	# mmdebstrap's own "I:" lines are the progress report (the whole output goes to the log).
	# The tree is made as a directory, so that mmdebstrap has cleaned it up (its policy-rc.d,
	# its start-stop-daemon stand-in, apt's lists) before it becomes the disk.
	# shellcheck disable=SC2016 # $1 is the hooks' own argument.
	if ! system_as "$user" mmdebstrap --mode=unshare --variant=minbase \
		--include="$pkgs" \
		--setup-hook="mkdir -p \"\$1/etc/apt/preferences.d\" && if [ -s $stage/kernel.pref ]; then cp $stage/kernel.pref \"\$1/etc/apt/preferences.d/vmtest-kernel\"; fi" \
		--customize-hook="bash $stage/customize \"\$1\"" \
		--customize-hook="download /vmlinuz $stage/vmlinuz" \
		--customize-hook="download /initrd.img $stage/initrd.img" \
		"$suite" "$stage/root" "$stage/sources.list" 2>&1 | tee "$log" |
		{ grep --line-buffered '^I: ' || true; } | sed -u 's/^I: /vmtest:   /' >&2; then
		tail -n 30 "$log" >&2
		vmtest_die "image" "mmdebstrap failed ($log)"
	fi
	# In the same user namespace, where the tree's owners read as they will in the guest.
	vmtest_msg "  making the ext4 image of $(du -sh "$stage/root" 2>/dev/null | cut -f1)"
	# shellcheck disable=SC2016
	system_as "$user" mmdebstrap --unshare-helper \
		sh -c 'mke2fs -q -t ext4 -L root -d "$1" "$2" && rm -rf "$1"' sh \
		"$stage/root" "$stage/root.img" >>"$log" 2>&1 ||
		{ tail -n 10 "$log" >&2; vmtest_die "image" "mke2fs -d failed ($log)"; }
	vmtest_step_end
	chown -R 0:0 "$stage" 2>/dev/null || true
	chmod 0755 "$stage"
	chmod 0644 "$stage/root.img" "$stage/vmlinuz" "$stage/initrd.img"
	{ printf 'suite %s\nkernel %s\nkey %s\nbuilt %s\nseconds %s\npackages %s\n' "$suite" "$ksuite" "$key" \
		"$(date -u +%FT%TZ)" "$((SECONDS - start))" "$pkgs"; } >"$stage/info"
	mv "$stage" "$image_dir"
	: >"$image_dir/stamp"
	vmtest_prune "$cache/image" 4
	exec 9>&-
}
