#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/system/workloads.sh: real workloads on a real Debian system, run as root inside
# vmtest/system (--add=tests/system/workloads.sh, then `bash /opt/add/workloads.sh [life]`),
# once with nodefd on and once with it off (same image, unit masked). TAP on stdout.
#
# A legitimate case must work either way, and with nodefd on it must also leave no deny event
# ("CASE: no deny event"); an attack must be refused with nodefd on, with its event in the
# journal, and work with nodefd off (so that the case can tell the two apart). The events a
# case caused are printed under it as "# event: ..." lines (action rule kind reason comm path).
# The host side (tests/host/workloads.sh) lines the two runs up case by case.
#
# With "life" as argument, the unit's life follows (nodefd on only; it removes the package, so
# it comes last): stop, start, reload, restart, kill -9, reinstall, upgrade, remove, purge, with
# a reopen attack probing all along, and the events made while no daemon ran counted.
set -u
export LC_ALL=C PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

tap_n=0
work=/var/lib/vmtest/workloads
user=user
uid=$(id -u "$user")
log=$work/log
rm -rf "$work"
mkdir -p "$work"
chmod 0755 "$work"
export work

if systemctl is-active -q nodefd.service; then
	nodefd=on
else
	nodefd=off
fi
echo "# nodefd $nodefd, kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"), system ${VMTEST_SYSTEM_STATE:-?}"

tap()
{
	tap_n=$((tap_n + 1))
	if [ "$1" = ok ]; then
		printf 'ok %d %s\n' "$tap_n" "$2"
	else
		printf 'not ok %d %s\n' "$tap_n" "$2"
	fi
}

# The journal of nodefd.service from a cursor on: its event lines, one per line, short.
cursor()
{
	journalctl --show-cursor -n 0 -q 2>/dev/null | sed -n 's/^-- cursor: //p'
}

# denials: refusals and audits so far (each makes one event, or counts as dropped).
denials()
{
	[ "$nodefd" = on ] || { echo 0; return; }
	nodefdctl -j status 2>/dev/null |
		jq '[.counters.denied[], .counters.audited[], .counters.events_dropped] | add' 2>/dev/null ||
		echo 0
}

# events_since CURSOR [WANT]: nodefd's events in the journal after CURSOR, one short line each;
# waits (up to 20 s) for WANT of them: the daemon and journald lag behind the kernel.
events_since()
{
	local c=$1 want=${2:-0} i out

	[ "$nodefd" = on ] || return 0
	for i in $(seq 40); do
		journalctl --sync 2>/dev/null
		# Not "-u nodefd.service --after-cursor": systemd 252 (Debian 12) returns nothing for
		# a match after a cursor of another unit's entry. The unit is selected from the JSON.
		out=$(journalctl --no-pager -o json ${c:+--after-cursor="$c"} 2>/dev/null |
			jq -r 'select(._SYSTEMD_UNIT == "nodefd.service") | .MESSAGE | strings' |
			grep '^{.*"type":"event"' |
			jq -r '"\(.action) \(.rule) \(.kind) reason=\(.reason) comm=\(.comm) uid=\(.uid) orig=\(.orig) req=\(.req) hook=\(.hook) path=\(.path)\(if .ancestor then " ancestor=" + .ancestor else "" end)"' 2>/dev/null)
		[ "$(grep -c . <<<"$out")" -ge "$want" ] && break
		sleep 0.5
	done
	[ -z "$out" ] || printf '%s\n' "$out"
}

# run_case CASE: run case_CASE with a timeout, its output and the events it caused in $work.
run_case()
{
	local name=$1 c= rc d0 d1

	# The boot's case looks at nodefd's whole journal: the boot's own events.
	[ "$name" = boot ] || c=$(cursor)
	d0=$(denials)
	# Since boot: the one refusal nodefdctl's load counts is its canary's, whose event the
	# loader reads back itself (it never reaches the journal).
	[ "$name" = boot ] && d0=$([ "$nodefd" = on ] && echo 1 || echo 0)
	timeout -k 5 "${case_timeout:-120}" bash -c "$(declare -f); case_$name" \
		>"$work/$name.out" 2>&1 </dev/null
	rc=$?
	d1=$(denials)
	events_since "$c" $((d1 - d0)) >"$work/$name.events"
	if [ "$(grep -c . "$work/$name.events")" -lt $((d1 - d0)) ]; then
		echo "missing: $((d1 - d0)) refusals or audits counted, fewer events in the journal" >>"$work/$name.events"
	fi
	return "$rc"
}

# refused CASE: the case caused a refusal: an event whose action is not "audit" (deny, or
# whatever the kernel side calls it).
refused()
{
	grep -Ev '^(audit|missing:) ' "$work/$1.events" | grep -q .
}

show()
{
	local name=$1

	tail -n 15 "$work/$name.out" | sed 's/^/#   /'
	sed 's/^/# event: /' "$work/$name.events"
}

# legit CASE DESCRIPTION: case_CASE must exit 0, and cause no deny event.
legit()
{
	local name=$1 rc

	run_case "$name"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		tap ok "$name: works"
	else
		tap fail "$name: works"; echo "# exit $rc"
	fi
	# A refusal counted by the kernel side but not (yet) in the journal fails it too.
	if refused "$name" || grep -q '^missing:' "$work/$name.events"; then
		tap fail "$name: no deny event"
	else
		tap ok "$name: no deny event"
	fi
	show "$name"
}

# attack CASE: case_CASE exits 0 when the attack succeeded, 1 when it was refused (anything
# else: it could not be tried). Refused with nodefd on, with a deny event; done with it off.
attack()
{
	local name=$1 rc

	run_case "$name"
	rc=$?
	if [ "$nodefd" = on ]; then
		if [ "$rc" -eq 1 ]; then tap ok "$name: refused"; else tap fail "$name: refused"; echo "# exit $rc"; fi
		if refused "$name"; then
			tap ok "$name: deny event in the journal"
		else
			tap fail "$name: deny event in the journal"
		fi
	else
		if [ "$rc" -eq 0 ]; then tap ok "$name: works without nodefd"; else tap fail "$name: works without nodefd"; echo "# exit $rc"; fi
		tap ok "$name: deny event in the journal # SKIP nodefd off"
	fi
	show "$name"
}

as_user()
{
	runuser -u user -- env HOME=/home/user "$@"
}

# ---- setup -------------------------------------------------------------------------------

setup()
{
	printf 'user ALL=(ALL) NOPASSWD: ALL\n' >/etc/sudoers.d/vmtest
	grep -q '^user:' /etc/subuid 2>/dev/null ||
		usermod --add-subuids 200000-265535 --add-subgids 200000-265535 user
	chmod 0440 /etc/sudoers.d/vmtest
	bash /run/vmtest/guest container-image >"$work/image.out" 2>&1 ||
		{ echo "# container-image failed:"; sed 's/^/#   /' "$work/image.out"; }
	rootfs=/var/lib/vmtest/busybox-rootfs
}
rootfs=/var/lib/vmtest/busybox-rootfs

# ---- cases -------------------------------------------------------------------------------
# Each case_X runs in its own bash (declare -f), as root, cwd /root; $work is world-readable.

case_boot()
{
	# The journal since boot: no deny event from anything that ran (the boot's own units).
	echo "system state: $VMTEST_SYSTEM_STATE"
	[ "$VMTEST_SYSTEM_STATE" = running ]
}

case_daemon_reload()
{
	systemctl daemon-reload && systemctl daemon-reexec && systemctl is-system-running
}

case_hostnamectl()
{
	local out

	out=$(hostnamectl 2>&1)
	echo "$out"
	grep -q 'Operating System: Debian' <<<"$out"
}

case_timedatectl()
{
	local out

	out=$(timedatectl status 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -q 'Time zone' <<<"$out"
}

case_systemd_run()
{
	# A transient service with its own /tmp and a dynamic user: a here-doc written to /tmp,
	# one read through /dev/stdin, and its own stdin (a pipe from us) read as fd 0.
	local out

	out=$(echo from-stdin | systemd-run --quiet --wait --pipe --collect \
		-p PrivateTmp=yes -p DynamicUser=yes /bin/bash -c '
		id -u
		cat <<EOF >/tmp/heredoc
here-doc in /tmp
EOF
		cat /tmp/heredoc
		cat /dev/stdin <<EOF
here-doc through /dev/stdin
EOF
		cat' 2>&1)
	echo "$out"
	grep -q '^here-doc in /tmp$' <<<"$out" && grep -q '^here-doc through /dev/stdin$' <<<"$out" &&
		grep -q '^from-stdin$' <<<"$out"
}

case_nspawn()
{
	local tree=/var/lib/vmtest/nspawn-tree out

	rm -rf "$tree"
	cp -a /var/lib/vmtest/busybox-rootfs "$tree" || return 2
	printf 'ID=busybox\nNAME=busybox\n' >"$tree/etc/os-release"
	out=$(systemd-nspawn --quiet --register=no --keep-unit -D "$tree" \
		/bin/sh -c 'echo in-nspawn; echo to-stderr >/dev/stderr' 2>&1 | tr -d '\r')
	echo "$out"
	grep -q '^in-nspawn$' <<<"$out" && grep -q '^to-stderr$' <<<"$out"
}

case_su()
{
	local out

	out=$(su -s /bin/bash user -c 'id -un; echo "$HOME"' 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	[ "$(head -n 1 <<<"$out")" = user ] || return 1
	out=$(su - user -c 'pwd' 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	[ "$out" = /home/user ]
}

case_sudo()
{
	local out

	out=$(runuser -u user -- sudo -n id -un 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	[ "$out" = root ] || return 1
	out=$(runuser -u user -- bash -c 'sudo -n cat /dev/stdin <<<from-user' 2>&1)
	echo "$out"
	[ "$out" = from-user ]
}

case_login_pty()
{
	# login -f (root only: no password) on the pty script(1) makes, exec'd as the session
	# leader the way agetty leaves it: util-linux's login (Debian 13) run as a child of
	# script's shell stops (state T) on the terminal and never logs in. The user's shell
	# reads its commands from the pty; login may flush what was typed before the shell
	# started, so the commands come once a second until the shell exits and the pipe closes.
	local out

	out=$(for _ in $(seq 30); do
		printf 'echo "LOGGED-IN $(id -un) $(tty)"; exit\n' 2>/dev/null || break
		sleep 1
	done | script -qfec 'exec login -f user' /dev/null 2>&1)
	echo "$out" | tr -d '\r' | tail -n 5
	echo "$out" | tr -d '\r' | grep -q 'LOGGED-IN user /dev/pts/'
}

case_process_substitution()
{
	as_user bash -c '
		diff <(printf "a\nb\n") <(printf "a\nb\n") || exit 1
		n=0; while read -r _; do n=$((n + 1)); done < <(seq 5)
		[ "$n" = 5 ] || exit 1
		cat <(echo from-procsub) >/dev/null || exit 1
		wc -l < <(seq 3) | grep -qx 3'
}

case_here_doc()
{
	# Small (a pipe in bash 5.2) and large (a deleted temporary file) here-docs, read by cat
	# directly and through /dev/stdin, as the user.
	as_user bash -c '
		a=$(cat <<EOF
small
EOF
)
		[ "$a" = small ] || exit 1
		b=$(cat /dev/stdin <<EOF
small-stdin
EOF
)
		[ "$b" = small-stdin ] || { echo "small /dev/stdin: $b"; exit 1; }
		big=$(head -c 200000 /dev/zero | tr "\0" x)
		c=$(cat /dev/stdin <<EOF | wc -c
$big
EOF
)
		[ "$c" = 200001 ] || { echo "large /dev/stdin: $c bytes"; exit 1; }
		d=$(wc -c /dev/stdin <<<"$big")
		[ "${d% *}" = 200001 ] || { echo "large here-string /dev/stdin: $d"; exit 1; }'
}

case_stdin_file()
{
	# A root-owned file as the user's stdin, read through /dev/stdin.
	local n

	n=$(as_user bash -c 'wc -l /dev/stdin </var/lib/dpkg/status') || return 1
	echo "$n"
	[ "${n% *}" -gt 100 ]
}

case_tee_append_log()
{
	# tee opens /dev/stderr (O_TRUNC, no O_APPEND) when stderr is an append-mode log.
	as_user bash -c '
		cd && rm -f tee.log && echo before >tee.log
		(echo hi | tee /dev/stderr) 2>>tee.log >/dev/null || exit 1
		cat tee.log
		grep -qx hi tee.log'
}

case_stdout_append_log()
{
	# A script that writes to /dev/stdout, run with its output appended to a log.
	as_user bash -c '
		cd && rm -f out.log && echo before >out.log
		printf "#!/bin/sh\necho to-stdout >/dev/stdout\n" >w.sh
		sh w.sh >>out.log || exit 1
		cat out.log
		grep -qx to-stdout out.log'
}

case_chroot_stderr()
{
	# A chroot made of busybox, /dev/stderr inside it a link to /proc/self/fd/2, and its
	# stderr a file outside the chroot.
	local dir=/var/lib/vmtest/chroot rc

	umount "$dir/proc" 2>/dev/null
	rm -rf "$dir"
	mkdir -p "$dir/bin" "$dir/proc" "$dir/dev"
	cp /bin/busybox "$dir/bin/busybox"
	ln -s /proc/self/fd/2 "$dir/dev/stderr"
	mount -t proc proc "$dir/proc" || return 2
	rm -f /root/chroot.log
	chroot "$dir" /bin/busybox sh -c 'echo in-chroot >/dev/stderr' 2>/root/chroot.log
	rc=$?
	umount "$dir/proc"
	cat /root/chroot.log
	[ "$rc" -eq 0 ] && grep -qx in-chroot /root/chroot.log
}

# bundle DIR ARGS-JSON [JQ-FILTER]: an OCI bundle of the busybox tree for runc and crun.
bundle()
{
	local dir=$1 args=$2 extra=${3:-.}

	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a /var/lib/vmtest/busybox-rootfs "$dir/rootfs" || return 2
	(cd "$dir" && runc spec) || return 2
	jq --argjson a "$args" '.process.terminal = false | .process.args = $a |
		.root.readonly = false' "$dir/config.json" | jq "$extra" >"$dir/config.new" &&
		mv "$dir/config.new" "$dir/config.json"
}

case_runc()
{
	local out

	bundle "$work/runc" '["/bin/sh", "-c", "echo hello-runc; echo to-stderr >/dev/stderr; cat /proc/self/cgroup"]' || return 2
	out=$(cd "$work/runc" && runc run vmtest-runc 2>&1)
	echo "$out"
	grep -q '^hello-runc$' <<<"$out" && grep -q '^to-stderr$' <<<"$out"
}

case_crun()
{
	local out

	bundle "$work/crun" '["/bin/sh", "-c", "echo hello-crun; echo to-stderr >/dev/stderr"]' || return 2
	out=$(cd "$work/crun" && crun run vmtest-crun 2>&1)
	echo "$out"
	grep -q '^hello-crun$' <<<"$out" && grep -q '^to-stderr$' <<<"$out"
}

case_podman()
{
	local out

	out=$(podman run --rm --network=none localhost/busybox:vmtest \
		sh -c 'echo hello-podman; echo to-stderr >/dev/stderr' 2>&1)
	echo "$out"
	grep -q '^hello-podman$' <<<"$out" && grep -q '^to-stderr$' <<<"$out"
}

case_podman_rootless()
{
	local out

	# Its runtime directory, as a login session would make it (no session here).
	install -d -o user -g user -m 0700 "/run/user/$(id -u user)"
	out=$(cd /home/user && runuser -u user -- env HOME=/home/user \
		XDG_RUNTIME_DIR=/run/user/$(id -u user) \
		DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$(id -u user)/bus sh -c '
		podman import --quiet /var/lib/vmtest/busybox-rootfs.tar localhost/busybox:vmtest >/dev/null &&
		podman run --rm --network=none localhost/busybox:vmtest \
			sh -c "echo hello-rootless; id -u; echo to-stderr >/dev/stderr"' 2>&1)
	echo "$out"
	grep -q '^hello-rootless$' <<<"$out" && grep -q '^to-stderr$' <<<"$out"
}

case_bwrap()
{
	# As the user, its output files of the user's (the reopen of /dev/stderr is the user's).
	# Two files: ">/dev/stderr" truncates what it reopens, so one file for both would lose
	# the first line, nodefd or not.
	as_user bash -c '
		cd && rm -f bwrap.out bwrap.err
		printf "%s\n" "echo hello-bwrap" "echo to-stderr >/dev/stderr" \
			"cat /dev/stdin <<<stdin-bwrap" >bw.sh
		bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-pid \
			bash "$HOME/bw.sh" >bwrap.out 2>bwrap.err
		rc=$?
		cat bwrap.out bwrap.err
		[ "$rc" -eq 0 ] && grep -qx hello-bwrap bwrap.out && grep -qx to-stderr bwrap.err &&
			grep -qx stdin-bwrap bwrap.out'
}

case_apt_offline()
{
	# A local package made here, installed with apt (no network, no lists) and removed.
	local d=$work/pkg

	rm -rf "$d"
	mkdir -p "$d/DEBIAN" "$d/usr/share/vmtest-hello"
	printf 'Package: vmtest-hello\nVersion: 1.0\nArchitecture: all\nMaintainer: vmtest <vmtest@localhost>\nDescription: a local package for the workloads suite\n' \
		>"$d/DEBIAN/control"
	echo hello >"$d/usr/share/vmtest-hello/hello"
	dpkg-deb --root-owner-group -b "$d" "$work/vmtest-hello_1.0_all.deb" >/dev/null || return 2
	chmod 0644 "$work/vmtest-hello_1.0_all.deb"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "$work/vmtest-hello_1.0_all.deb" || return 1
	[ "$(cat /usr/share/vmtest-hello/hello)" = hello ] || return 1
	dpkg -r vmtest-hello || return 1
	[ ! -e /usr/share/vmtest-hello/hello ]
}

# The article's attack: the user opens a file read-only while its directory is open to
# everyone, the owner then closes the directory (0700), and the user reopens the file for write
# through /proc/self/fd. Exit 0: written; 1: refused.
case_attack_article()
{
	local d=/srv/article

	rm -rf "$d" /tmp/article.*
	mkdir -p "$d"
	chmod 0755 "$d"
	echo secret >"$d/file"
	chmod 0666 "$d/file"
	as_user bash -c '
		exec 3<'"$d"'/file || exit 2
		touch /tmp/article.opened
		while [ ! -e /tmp/article.closed ]; do sleep 0.1; done
		echo written >/proc/self/fd/3 && echo "reopened for write"' &
	for _ in $(seq 600); do [ -e /tmp/article.opened ] && break; sleep 0.1; done
	chmod 0700 "$d"
	touch /tmp/article.closed
	wait $!
	# Not opened in a minute: the user never held the file, and its refusal would prove nothing.
	[ -e /tmp/article.opened ] || { echo "the user never opened the file: not tried"; return 2; }
	echo "file now: $(cat "$d/file")"
	case "$(cat "$d/file")" in
	written) return 0 ;;
	secret) return 1 ;;
	*) return 2 ;;
	esac
}

# CVE-2019-5736's shape: a process in a runc container gets hold of a binary of the host (not
# under its root) through /proc/PID/exe of a host process it can see, waits for that process to
# exit (a running binary cannot be written), and reopens it for write through /proc/self/fd.
# The container shares the host's PID namespace so that the host process is visible; both run
# as nobody. Exit 0: the host binary was rewritten; 1: refused; 2: not tried.
case_escape_exe_runc()
{
	escape_exe runc
}

case_escape_exe_crun()
{
	escape_exe crun
}

escape_exe()
{
	local runtime=$1 d=/var/lib/vmtest/escape vpid cpid rc sum

	rm -rf "$d"
	mkdir -p "$d"
	cp /bin/sleep "$d/victim"
	chown nobody:nogroup "$d/victim"
	chmod 0755 "$d/victim"
	sum=$(md5sum <"$d/victim")
	# The victim runs until the container holds its exe link, then exits.
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$d/victim" 300 &
	vpid=$!
	bundle "$work/escape" '["/bin/sh", "-c", "(exec 3</proc/'"$vpid"'/exe) || exit 3; exec 3</proc/'"$vpid"'/exe; echo holding; while [ -e /proc/'"$vpid"' ]; do sleep 0.2; done; echo pwned >/proc/self/fd/3 && echo rewrote"]' \
		'.process.user = {"uid": 65534, "gid": 65534} |
		 .linux.namespaces |= map(select(.type != "pid")) |
		 .linux.maskedPaths = [] ' || { kill "$vpid"; return 2; }
	(cd "$work/escape" && "$runtime" run vmtest-escape) >"$d/out" 2>&1 &
	cpid=$!
	for _ in $(seq 600); do
		grep -q holding "$d/out" && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$vpid"
	wait "$vpid"
	wait "$cpid"
	rc=$?
	cat "$d/out"
	echo "container exit $rc"
	if [ "$(md5sum <"$d/victim")" != "$sum" ]; then
		echo "victim now: $(head -c 20 "$d/victim")"
		return 0
	fi
	if [ "$rc" -eq 3 ]; then
		echo "the exe link itself was refused"
		return 1
	fi
	if ! grep -q '^holding$' "$d/out"; then
		echo "the container never got hold of the victim: not tried"
		return 2
	fi
	return 1
}

# The literal form: a process in a runc container opens /proc/self/exe for write (the running
# binary: ETXTBSY whatever nodefd does). It must fail either way.
case_self_exe_write()
{
	local out

	bundle "$work/selfexe" '["/bin/sh", "-c", "echo x >>/proc/self/exe && echo WROTE; exit 0"]' || return 2
	out=$(cd "$work/selfexe" && runc run vmtest-selfexe 2>&1)
	echo "$out"
	# It ran (the shell's own error names the file) and wrote nothing.
	grep -q 'proc/self/exe' <<<"$out" && ! grep -q WROTE <<<"$out"
}

# ---- the run -------------------------------------------------------------------------------

legit boot
setup
legit daemon_reload
legit hostnamectl
legit timedatectl
legit systemd_run
legit nspawn
legit su
legit sudo
legit login_pty
legit process_substitution
legit here_doc
legit stdin_file
legit tee_append_log
legit stdout_append_log
legit chroot_stderr
legit runc
legit crun
case_timeout=240 legit podman
case_timeout=240 legit podman_rootless
legit bwrap
legit apt_offline
attack attack_article
attack escape_exe_runc
attack escape_exe_crun
legit self_exe_write

if [ "$nodefd" = on ]; then
	echo "# nodefdctl status after the workloads:"
	nodefdctl status 2>&1 | sed 's/^/#   /'
	echo "# every event of this boot:"
	events_since "" | sed 's/^/# all: /'
fi

# ---- the unit's life ----------------------------------------------------------------------

# probe: root hands the user a read-only fd of a 0666 file in a directory only root may search;
# the user reopens it for writing (upgrade, and no name gives it). Prints refused or allowed.
probe_setup()
{
	mkdir -p /srv/probe
	chmod 0700 /srv/probe
	: >/srv/probe/file
	chmod 0666 /srv/probe/file
}

probe()
{
	if (exec 3</srv/probe/file && as_user bash -c 'echo x >/proc/self/fd/3') 2>/dev/null; then
		echo allowed
	else
		echo refused
	fi
}

# step NAME CMD...: CMD, then the probe refused and nodefd loaded (its pins).
step()
{
	local name=$1 out rc p

	shift
	out=$("$@" 2>&1)
	rc=$?
	p=$(probe)
	if [ "$rc" -eq 0 ] && [ "$p" = refused ] && [ -e /sys/fs/bpf/nodefd ]; then
		tap ok "life: $name: enforcing after it"
	else
		tap fail "life: $name: enforcing after it"
		echo "# exit $rc, probe $p, pins $([ -e /sys/fs/bpf/nodefd ] && echo present || echo gone)"
		printf '%s\n' "$out" | tail -n 10 | sed 's/^/#   /'
	fi
	echo "# $name: nodefd.service $(systemctl is-active nodefd.service)"
}

# The unit's lines carry their priority: refusals at warning, its start record at info.
journal_priorities()
{
	local warn

	journalctl --sync
	warn=$(journalctl -u nodefd.service -p warning -o cat --no-pager)
	echo "# journalctl -u nodefd -p warning: $(grep -c '"type":"event"' <<<"$warn") events, $(grep -c '"type":"start"' <<<"$warn") start records"
	grep '"type":"event"' <<<"$warn" | grep -q '"action":"enforce"' &&
		! grep -q '"type":"start"' <<<"$warn" &&
		journalctl -u nodefd.service -p info -o cat --no-pager | grep -q '"type":"start"' &&
		tap ok "life: journalctl -p warning shows the refusals, not the start record" ||
		tap fail "life: journalctl -p warning shows the refusals, not the start record"
}

# http_get PATH: GET http://127.0.0.1:9847PATH with bash's /dev/tcp (the image has no curl):
# the status code on the first line, then the body.
http_get()
{
	local resp

	exec 5<>/dev/tcp/127.0.0.1/9847 || return 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&5
	resp=$(timeout 10 cat <&5 | tr -d '\r')
	exec 5<&-
	printf '%s\n' "$resp" | sed -n '1s/^HTTP\/1\.[01] \([0-9]*\).*/\1/p'
	printf '%s\n' "$resp" | sed '1,/^$/d'
}

# promql EXPR: the value of an instant query's one sample, by promtool (empty: no sample).
promql()
{
	promtool query instant http://127.0.0.1:9090 "$1" 2>/dev/null |
		sed -n 's/.* => \([-0-9.e+]*\) @.*/\1/p' | head -n 1
}

# promql_wait EXPR VALUE [SECONDS]: waits (60 s) until EXPR's value is VALUE; prints the last.
promql_wait()
{
	local v i

	for i in $(seq "${3:-60}"); do
		v=$(promql "$1")
		[ "$v" = "$2" ] && break
		sleep 1
	done
	printf '%s\n' "$v"
}

# The daemon's metrics endpoint (nodefd.conf), scraped by Debian's Prometheus server: the
# refusal of the article's attack seen by PromQL; promtool finds nothing wrong with the metrics.
metrics_scrape()
{
	local conf=/etc/nodefd/nodefd.conf out code v0 v1 i up inc rc

	cp -a "$conf" "$work/nodefd.conf.orig"
	printf '[metrics]\nlisten = 127.0.0.1:9847\n' >"$conf"
	step "systemctl restart with the metrics endpoint on" systemctl restart nodefd.service
	for i in $(seq 40); do
		code=$(http_get /healthz 2>/dev/null | head -n 1)
		[ "$code" = 200 ] && break
		sleep 0.5
	done
	out=$(http_get /readyz)
	echo "# /healthz: $code; /readyz: $(printf '%s' "$out" | paste -sd ' ')"
	[ "$code" = 200 ] && [ "$(head -n 1 <<<"$out")" = 200 ] && grep -q '^ready: enforcing' <<<"$out" &&
		[ "$(http_get /nothing | head -n 1)" = 404 ] &&
		tap ok "life: metrics endpoint: /healthz 200, /readyz 200 enforcing, other paths 404" ||
		tap fail "life: metrics endpoint: /healthz 200, /readyz 200 enforcing, other paths 404"
	http_get /metrics | sed 1d >"$work/metrics.txt"
	out=$(promtool check metrics <"$work/metrics.txt" 2>&1)
	rc=$?
	echo "# promtool check metrics (/metrics, $(grep -vc '^#' "$work/metrics.txt") samples): exit $rc${out:+: $out}"
	[ "$rc" -eq 0 ] && [ -z "$out" ] && grep -q '^nodefd_refused_total{rule="upgrade",reason="rule"} ' "$work/metrics.txt" &&
		out=$(nodefdctl metrics | promtool check metrics 2>&1) && [ -z "$out" ] &&
		tap ok "life: promtool check metrics: clean (the endpoint's and nodefdctl metrics')" ||
		tap fail "life: promtool check metrics: clean (the endpoint's and nodefdctl metrics')"
	cat >"$work/prometheus.yml" <<-'EOF'
	global:
	  scrape_interval: 1s
	scrape_configs:
	  - job_name: nodefd
	    static_configs:
	      - targets: ['127.0.0.1:9847']
	EOF
	# Its own state directory, made by systemd for its user (the package's is root's here).
	systemd-run -q --unit=vmtest-prometheus -p User=prometheus \
		-p StateDirectory=vmtest-prometheus \
		/usr/bin/prometheus --config.file="$work/prometheus.yml" \
		--storage.tsdb.path=/var/lib/vmtest-prometheus --web.listen-address=127.0.0.1:9090
	up=$(promql_wait 'up{job="nodefd"}' 1 120)
	if [ "$up" != 1 ]; then
		echo "# prometheus is not scraping nodefd; its unit and its last lines:"
		systemctl status --no-pager -n 0 vmtest-prometheus.service 2>&1 | sed 's/^/#   /'
		journalctl --no-pager -u vmtest-prometheus.service -n 15 -o cat | sed 's/^/#   /'
		promtool query instant http://127.0.0.1:9090 'up' 2>&1 | head -n 5 | sed 's/^/#   /'
	fi
	# The background probe is refused by the same rule: paused, so that what PromQL sees
	# after this is the attack's alone (life's $loop; its last probe given time to end).
	kill -STOP "$loop"
	sleep 3
	v0=$(promql 'sum(nodefd_refused_total{rule="upgrade"})')
	echo "# prometheus: up{job=\"nodefd\"} = ${up:-none}; refusals of the upgrade rule before the attack: ${v0:-none}"
	(case_attack_article) >"$work/scrape-attack.out" 2>&1
	rc=$?
	for i in $(seq 60); do
		v1=$(promql "sum(nodefd_refused_total{rule=\"upgrade\"}) > ${v0:-0}")
		[ -n "$v1" ] && break
		sleep 1
	done
	v1=$(promql 'sum(nodefd_refused_total{rule="upgrade"})')
	kill -CONT "$loop"
	inc=$(promql 'sum(increase(nodefd_refused_total{rule="upgrade",reason="rule"}[1m]))')
	echo "# the attack: exit $rc ($(tail -n 1 "$work/scrape-attack.out")); PromQL sum(nodefd_refused_total{rule=\"upgrade\"}): ${v0:-none} -> ${v1:-none} after ${i}s; sum(increase(nodefd_refused_total{rule=\"upgrade\",reason=\"rule\"}[1m])) = ${inc:-none}"
	[ "$up" = 1 ] && [ -n "$v0" ] && [ "$rc" -eq 1 ] && [ -n "$v1" ] &&
		[ "$(awk -v a="$v0" -v b="$v1" 'BEGIN { print (b - a >= 1) }')" = 1 ] &&
		tap ok "life: Prometheus scrapes the daemon and PromQL sees the attack's refusal" ||
		tap fail "life: Prometheus scrapes the daemon and PromQL sees the attack's refusal"
}

# With Prometheus still scraping: a file the daemon itself rejects (SIGHUP straight to it: the
# unit's reload would not send it) is a metric, and so is the good one read again.
metrics_reload()
{
	local conf=/etc/nodefd/policy.conf last bad good

	printf '[default]\nmode = audit\nbogus = on\n' >"$conf"
	systemctl kill -s HUP --kill-whom=main nodefd.service
	last=$(promql_wait 'nodefd_policy_last_load_successful{job="nodefd"}' 0 30)
	bad=$(promql 'nodefd_policy_loads_total{job="nodefd",result="rejected"}')
	cp -a "$work/policy.conf.good" "$conf"
	systemctl kill -s HUP --kill-whom=main nodefd.service
	good=$(promql_wait 'nodefd_policy_last_load_successful{job="nodefd"}' 1 30)
	echo "# PromQL after a SIGHUP with a bad file: nodefd_policy_last_load_successful = ${last:-none}, nodefd_policy_loads_total{result=\"rejected\"} = ${bad:-none}; after the good file: ${good:-none}, generation $(promql 'nodefd_policy_generation{job="nodefd"}')"
	[ "$last" = 0 ] && [ "${bad:-0}" -ge 1 ] 2>/dev/null && [ "$good" = 1 ] &&
		tap ok "life: a rejected policy file in Prometheus (last load unsuccessful, counted), then the good one" ||
		tap fail "life: a rejected policy file in Prometheus (last load unsuccessful, counted), then the good one"
	systemctl stop vmtest-prometheus.service
}

# A policy file the daemon would reject: `systemctl reload` fails saying why, the policy stays.
bad_reload()
{
	local conf=/etc/nodefd/policy.conf before after out rc

	cp -a "$conf" "$work/policy.conf.good" 2>/dev/null || : >"$work/policy.conf.good"
	before=$(nodefdctl -j policy show | jq -c '.map_id')
	printf '[default]\nmode = audit\nbogus = on\n' >"$conf"
	out=$(systemctl reload nodefd.service 2>&1)
	rc=$?
	journalctl --sync
	after=$(nodefdctl -j policy show | jq -c '.map_id')
	echo "# systemctl reload with a bad file: exit $rc, policy map $before -> $after"
	printf '%s\n' "$out" | sed 's/^/#   /'
	journalctl -u nodefd.service -p err -o cat --no-pager | grep -F 'policy.conf:3' | tail -n 2 |
		sed 's/^/#   /'
	[ "$rc" -ne 0 ] && [ "$before" = "$after" ] && systemctl is-active -q nodefd.service &&
		journalctl -u nodefd.service -p err -o cat --no-pager |
		grep -qF "policy.conf:3: unknown key 'bogus'" &&
		tap ok "life: systemctl reload of a bad file fails with the reason, the policy stays" ||
		tap fail "life: systemctl reload of a bad file fails with the reason, the policy stays"
	cp -a "$work/policy.conf.good" "$conf"
	step "systemctl reload of the good file again" systemctl reload nodefd.service
}

# A section by pattern, applied by the running daemon to a container it has never seen: a reload
# adds [cgroup "machine.slice/libpod-*.scope"] in audit; a podman container started after it
# runs the article's attack inside (root opens the file, nobody reopens it for write). With the
# section applied, the attack goes through and is reported (audit), where the default policy
# would refuse it; `policy show` of the container's cgroup names the section, and the daemon's
# event names the container: runtime podman and its id, with its cgroup.
container_pattern()
{
	local conf=/etc/nodefd/policy.conf c id pid cg out i show ev

	cp -a "$conf" "$work/policy.conf.pattern"
	printf '\n[cgroup "machine.slice/libpod-*.scope"]\nmode = audit\n' >>"$conf"
	step "systemctl reload with a section for podman's containers" systemctl reload nodefd.service
	c=$(cursor)
	id=$(podman run -d --network=none localhost/busybox:vmtest sh -c '
		mkdir -p /d && echo secret >/d/f && chmod 0666 /d/f && chmod 0755 /d &&
		exec 3</d/f && chmod 0700 /d || { echo "result: not-tried"; sleep 60; exit 0; }
		su -s /bin/sh nobody -c "echo x >/proc/self/fd/3" 2>/dev/null
		echo "result: $(cat /d/f)"; sleep 60' 2>&1)
	for i in $(seq 60); do
		out=$(podman logs "$id" 2>&1 | sed -n 's/^result: //p')
		[ -n "$out" ] && break
		sleep 0.5
	done
	pid=$(podman inspect --format '{{.State.Pid}}' "$id" 2>/dev/null)
	cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null)
	show=$(nodefdctl policy show "/sys/fs/cgroup$cg" 2>&1)
	ev=
	for i in $(seq 40); do
		journalctl --sync
		ev=$(journalctl -u nodefd.service --after-cursor="$c" -o cat --no-pager |
			grep '^{.*"type":"event"' |
			jq -c --arg id "$id" 'select(.container.id == $id) |
				{action, rule, cgroup_path, container}' 2>/dev/null | head -n 1)
		[ -n "$ev" ] && break
		sleep 0.5
	done
	podman rm -f "$id" >/dev/null 2>&1
	echo "# container ${id:0:12}, cgroup $cg: the attack inside: ${out:-no result}"
	printf '%s\n' "$show" | sed 's/^/#   policy show: /'
	echo "#   event: ${ev:-none}"
	[ "$out" = x ] &&
		tap ok "life: a container started after the reload gets the pattern's policy (audit: the attack goes through)" ||
		tap fail "life: a container started after the reload gets the pattern's policy (audit: the attack goes through)"
	grep -qF 'machine.slice/libpod-*.scope' <<<"$show" &&
		tap ok "life: policy show of the container's cgroup names the pattern's section" ||
		tap fail "life: policy show of the container's cgroup names the pattern's section"
	[ "$(jq -r '"\(.action) \(.container.runtime)"' <<<"${ev:-null}" 2>/dev/null)" = "audit podman" ] &&
		tap ok "life: the audit event names the container (runtime podman, its id)" ||
		tap fail "life: the audit event names the container (runtime podman, its id)"
	cp -a "$work/policy.conf.pattern" "$conf"
	step "systemctl reload without the section" systemctl reload nodefd.service
}

# A policy file rejected at start: the unit fails once (exit 6), no restart loop, still enforcing.
bad_start()
{
	local conf=/etc/nodefd/policy.conf n0 n1 state

	printf '[default]\nmode = audit\nbogus = on\n' >"$conf"
	systemctl restart nodefd.service 2>&1 | sed 's/^/#   /'
	# A start by hand sets the count of automatic restarts back to 0: count from here.
	n0=$(systemctl show -P NRestarts nodefd.service)
	sleep 12	# two RestartSec: a restart loop would have begun
	n1=$(systemctl show -P NRestarts nodefd.service)
	state=$(systemctl show -P ActiveState nodefd.service)
	echo "# bad policy at start: $state, $(systemctl show -P Result nodefd.service), exit $(systemctl show -P ExecMainStatus nodefd.service), restarts $n0 -> $n1, status: $(systemctl show -P StatusText nodefd.service)"
	[ "$state" = failed ] && [ "$n0" = "$n1" ] &&
		[ "$(systemctl show -P ExecMainStatus nodefd.service)" = 6 ] &&
		[ "$(probe)" = refused ] &&
		tap ok "life: a bad policy at start fails the unit once, no restart loop, still enforcing" ||
		tap fail "life: a bad policy at start fails the unit once, no restart loop, still enforcing"
	cp -a "$work/policy.conf.good" "$conf"
	step "systemctl start with the good file again" systemctl start nodefd.service
}

life()
{
	local loop lapses n c made seen dropped ver deb2 p i

	probe_setup
	[ "$(probe)" = refused ] && tap ok "life: the probe is refused at first" ||
		tap fail "life: the probe is refused at first"
	# A probe every 0.2 s through every step but the purge: any "allowed" is a lapse.
	(while :; do probe; sleep 0.2; done) >"$work/probe.log" 2>&1 &
	loop=$!

	step "systemctl stop" systemctl stop nodefd.service
	# Events while no daemon reads: counted when the next one starts (backlog + missed).
	c=$(cursor)
	made=5
	for _ in $(seq "$made"); do probe >/dev/null; done
	step "systemctl start" systemctl start nodefd.service
	# The daemon writes the backlog after it is ready, and journald lags behind it: up to 20 s
	# (two VMs at once under TCG), and the time it took is shown.
	for i in $(seq 40); do
		journalctl --sync
		seen=$(journalctl -u nodefd.service --after-cursor="$c" -o cat | grep -c '"backlog":true')
		dropped=$(journalctl -u nodefd.service --after-cursor="$c" -o cat |
			grep '"type":"missed"' | jq -r '.events_dropped' | tail -n 1)
		[ "$((seen + ${dropped:-0}))" -lt "$made" ] || break
		sleep 0.5
	done
	echo "# events made while stopped (with the background probes): >= $made; backlog $seen, dropped ${dropped:-?}, seen in the journal at try $i"
	[ "$((seen + ${dropped:-0}))" -ge "$made" ] &&
		tap ok "life: no event lost uncounted while the daemon was stopped" ||
		tap fail "life: no event lost uncounted while the daemon was stopped"

	step "systemctl reload" systemctl reload nodefd.service
	journal_priorities
	metrics_scrape
	bad_reload
	container_pattern
	metrics_reload
	step "systemctl restart" systemctl restart nodefd.service
	step "kill -9 of the daemon" systemctl kill -s KILL nodefd.service
	for _ in $(seq 60); do systemctl is-active -q nodefd.service && break; sleep 0.5; done
	step "the daemon back after kill -9 (Restart=on-failure)" systemctl is-active nodefd.service
	bad_start
	step "reinstalling the same package" dpkg -i /run/vmtest/nodefd.deb
	ver=$(dpkg-query -W -f='${Version}' nodefd)
	deb2=$work/nodefd-bumped.deb
	rm -rf "$work/repack"
	dpkg-deb -R /run/vmtest/nodefd.deb "$work/repack" &&
		sed -i "s/^Version: .*/Version: $ver+vmtest1/" "$work/repack/DEBIAN/control" &&
		dpkg-deb --root-owner-group -b "$work/repack" "$deb2" >/dev/null
	step "upgrading to a bumped version" dpkg -i "$deb2"
	[ "$(dpkg-query -W -f='${Version}' nodefd)" = "$ver+vmtest1" ] &&
		tap ok "life: the upgrade installed the bumped version" ||
		tap fail "life: the upgrade installed the bumped version"
	step "dpkg -r nodefd" dpkg -r nodefd
	kill "$loop"
	wait "$loop" 2>/dev/null
	n=$(grep -c . "$work/probe.log")
	lapses=$(grep -c allowed "$work/probe.log")
	echo "# background probes: $n, allowed: $lapses"
	[ "$n" -gt 10 ] && [ "$lapses" -eq 0 ] &&
		tap ok "life: enforcement never lapsed" ||
		tap fail "life: enforcement never lapsed"
	# Purging ends enforcement (debian/nodefd.postrm unpins): the probe works again.
	dpkg -P nodefd 2>&1 | sed 's/^/#   /'
	# The links go with their last pin; give the kernel a moment (up to 20 s) to detach them.
	for i in $(seq 40); do
		p=$(probe)
		[ "$p" = allowed ] && break
		sleep 0.5
	done
	echo "# after dpkg -P nodefd: probe $p at try $i, pins $([ -e /sys/fs/bpf/nodefd ] && echo present || echo gone)"
	[ "$p" = allowed ] && [ ! -e /sys/fs/bpf/nodefd ] &&
		tap ok "life: dpkg -P ends enforcement and leaves no pins" ||
		tap fail "life: dpkg -P ends enforcement and leaves no pins"
	echo "# the unit's journal:"
	journalctl -u nodefd.service -o cat --no-pager | grep -v '"type":"event"' | tail -n 40 | sed 's/^/#   /'
}

# nodefdctl load's time, with nodefd off (the unit masked: nothing else loads it), three
# times, each followed by an unload.
load_time()
{
	local i t0 t1 times=()

	for i in 1 2 3; do
		t0=$(date +%s%N)
		if ! nodefdctl load >"$work/load.out" 2>&1; then
			tap fail "nodefdctl load"
			sed 's/^/#   /' "$work/load.out"
			return
		fi
		t1=$(date +%s%N)
		times+=("$(((t1 - t0) / 1000000))")
		nodefdctl unload >/dev/null 2>&1
	done
	tap ok "nodefdctl load, three times"
	echo "# load-time-ms: ${times[*]}"
}

echo "# systemd-analyze time:"
systemd-analyze time 2>&1 | sed 's/^/# boot-time: /'
if [ "${1:-}" = life ]; then
	if [ "$nodefd" = on ]; then
		life
	else
		load_time
	fi
fi
printf '1..%d\n' "$tap_n"
