#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/system/kube.sh: nodefd as a Kubernetes DaemonSet under a real container engine, in a
# real Debian system: vmtest/system --nodefd=off (the host's unit masked: the pod is the
# daemon) with the image's parts added (tests/host/kube.sh says which), then
# `bash /opt/add/kube.sh`. TAP on stdout.
#
# It builds nodefd's image from the local base and the package (dist/image), plays
# dist/kubernetes/nodefd-daemonset.yaml with `podman kube play`, and shows: the pod ready,
# an attack refused on the host and in another container with the events in the pod's log,
# no gap in enforcement while the pod restarts or is replaced (an attack probing all along,
# the same programs after), and a changed ConfigMap applied, in place (as the kubelet
# updates a mounted ConfigMap) and by a new `kube play`. Each check can fail.
# shellcheck disable=SC2016 # check's eval strings expand when run, not when written
# shellcheck disable=SC2046 # caps_but and mounts_but print flags, one word each
set -u
export LC_ALL=C PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

add=${KUBE_ADD:-/opt/add}
deb=${KUBE_DEB:-/run/vmtest/nodefd.deb}
work=/var/lib/vmtest/kube
manifest=$add/nodefd-daemonset.yaml
pod=nodefd-pod
ctr=$pod-daemon
watch_ctr=$pod-policy-watch
probe_cg=/sys/fs/cgroup/nodefd-kube
# No pod network: the daemon uses none, and the guest has no nftables for netavark's bridge.
play_opts=--network=none
tap_n=0
rm -rf "$work"
mkdir -p "$work"
chmod 0755 "$work"

tap()
{
	tap_n=$((tap_n + 1))
	if [ "$1" = ok ]; then
		printf 'ok %d %s\n' "$tap_n" "$2"
	else
		printf 'not ok %d %s\n' "$tap_n" "$2"
	fi
}

# check DESCRIPTION CMD...: one TAP line for CMD's status.
check()
{
	local what=$1

	shift
	if "$@"; then tap ok "$what"; else tap fail "$what"; fi
}

note()
{
	printf '%s\n' "$@" | sed 's/^/#   /'
}

# ---- attacks -------------------------------------------------------------------------------

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
	if (exec 3</srv/probe/file && runuser -u user -- bash -c 'echo x >/proc/self/fd/3') 2>/dev/null; then
		echo allowed
	else
		echo refused
	fi
}

# probe_in CGROUP: the probe from a process of CGROUP (a directory under /sys/fs/cgroup).
probe_in()
{
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$1" bash -c "$(declare -f probe); probe"
}

# ctr_attack: the same shape inside another container (busybox, rootful podman): root opens a
# file of a directory it then closes to everyone, nobody reopens it for write through
# /proc/self/fd. Prints refused or allowed (anything else: not tried).
ctr_attack()
{
	podman run --rm --network=none --name nodefd-kube-victim localhost/busybox:vmtest sh -c '
		mkdir -p /d && echo secret >/d/f && chmod 0666 /d/f && chmod 0755 /d &&
		exec 3</d/f && chmod 0700 /d || { echo not-tried; exit 0; }
		su -s /bin/sh nobody -c "echo x >/proc/self/fd/3" 2>/dev/null
		case "$(cat /d/f)" in x) echo allowed ;; secret) echo refused ;; *) echo not-tried ;; esac' 2>&1
}

# ---- the pod -------------------------------------------------------------------------------

# within SECONDS CMD...: CMD, every half second until it succeeds or SECONDS have passed. What
# the daemon prints reaches the pod's log after the kernel acted, later still under TCG.
within()
{
	local i n=$(($1 * 2))

	shift
	for i in $(seq "$n"); do
		"$@" && return 0
		[ "$i" -eq "$n" ] || sleep 0.5
	done
	return 1
}

# logged ACTION TEXT: the pod's log has an event of ACTION whose line holds TEXT.
logged()
{
	pod_log | grep '"type":"event"' | grep "\"action\":\"$1\"" | grep -q -- "$2"
}

# ready [SECONDS]: the readinessProbe's command, in the daemon's container, until it passes.
ready()
{
	local i

	for i in $(seq "${1:-180}"); do
		podman exec "$ctr" /usr/sbin/nodefdctl status --quiet 2>/dev/null && return 0
		sleep 1
	done
	return 1
}

daemon_pid()
{
	nodefdctl -j status 2>/dev/null | jq -r '.daemon_pid // empty'
}

prog_ids()
{
	nodefdctl -j status 2>/dev/null | jq -c '[.programs[].prog_id] | sort'
}

pod_log()
{
	podman logs "$ctr" 2>&1
}

show_pod()
{
	note "podman pod ps:" "$(podman pod ps 2>&1)" "podman ps -a:" "$(podman ps -a 2>&1)"
	note "daemon's log (last 20):" "$(pod_log | tail -n 20)"
	note "policy-watch's log:" "$(podman logs "$watch_ctr" 2>&1 | tail -n 5)"
}

# policy_of CGROUP: the mode of the upgrade rule there (nodefdctl policy show).
policy_of()
{
	nodefdctl -j policy show "$1" 2>/dev/null | jq -r '.upgrade // empty'
}

# restart_check NAME CMD...: CMD restarts or replaces the pod while the probe runs every 0.2 s;
# after it, ready again, the same programs, a new daemon, and no probe ever allowed.
restart_check()
{
	local name=$1 ids0 ids1 pid0 pid1 loop n lapses out rc

	shift
	ids0=$(prog_ids)
	pid0=$(daemon_pid)
	(while :; do probe; sleep 0.2; done) >"$work/probe-$name.log" 2>&1 &
	loop=$!
	sleep 1
	out=$("$@" 2>&1)
	rc=$?
	ready 180
	sleep 1
	kill "$loop"
	wait "$loop" 2>/dev/null
	ids1=$(prog_ids)
	pid1=$(daemon_pid)
	n=$(grep -c . "$work/probe-$name.log")
	lapses=$(grep -c allowed "$work/probe-$name.log")
	note "$name: exit $rc; programs $ids0 -> $ids1; daemon pid $pid0 -> $pid1; probes $n, allowed $lapses" \
		"$(printf '%s\n' "$out" | tail -n 5)"
	check "$name: the command worked" [ "$rc" -eq 0 ]
	check "$name: ready again, with a new daemon" \
		eval '[ -n "$pid1" ] && [ "$pid1" != "$pid0" ] && podman exec "$ctr" nodefdctl status -q'
	check "$name: the same programs enforcing (no reload)" eval '[ -n "$ids0" ] && [ "$ids0" = "$ids1" ] && [ "$ids0" != "[]" ]'
	check "$name: enforcement never lapsed ($n probes)" eval '[ "$n" -gt 5 ] && [ "$lapses" -eq 0 ]'
}

# needs: each capability and mount of the daemon container is needed: `nodefdctl load` from a
# container like the pod's, less one thing, fails, on a node where nothing is loaded; the full
# set loads (and so CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE, which the unit keeps, are not).
NEEDED_CAPS=(SYS_ADMIN SYSLOG SYS_PTRACE)
NEEDED_MOUNTS=(/sys/fs/bpf:/sys/fs/bpf /sys/kernel/security:/sys/kernel/security:ro
	/sys/fs/cgroup:/sys/fs/cgroup:ro /run/nodefd:/run/nodefd)

needs_load()
{
	local what=$1 out rc

	shift
	out=$(podman run --rm --network=none --read-only --tmpfs /tmp \
		--security-opt=no-new-privileges --cap-drop=all --entrypoint /usr/sbin/nodefdctl "$@" \
		localhost/nodefd:latest load 2>&1)
	rc=$?
	if [ -e /sys/fs/bpf/nodefd ]; then
		nodefdctl unload >/dev/null 2>&1
	fi
	needs_said=$(grep -v '^libbpf: ' <<<"$out" | grep . | tail -n 1 | cut -c1-300)
	echo "# needs: without $what: load exit $rc: $needs_said"
	return "$rc"
}

# caps_but CAP: --cap-add for each needed capability but CAP.
caps_but()
{
	local c

	for c in "${NEEDED_CAPS[@]}"; do [ "$c" = "$1" ] || printf -- '--cap-add=%s\n' "$c"; done
}

# mounts_but MOUNT: -v for each needed mount but MOUNT.
mounts_but()
{
	local m

	for m in "${NEEDED_MOUNTS[@]}"; do [ "$m" = "$1" ] || printf -- '-v\n%s\n' "$m"; done
}

needs()
{
	local o rc

	mkdir -p /run/nodefd
	needs_load "nothing (the pod's set)" --pid=host $(mounts_but -) $(caps_but -)
	check "needs: the pod's capabilities (${NEEDED_CAPS[*]}) and mounts load nodefd" [ $? -eq 0 ]
	for o in "${NEEDED_CAPS[@]}"; do
		needs_load "CAP_$o" --pid=host $(mounts_but -) $(caps_but "$o")
		check "needs: without CAP_$o the load fails" [ $? -ne 0 ]
	done
	needs_load "hostPID" --pid=private $(mounts_but -) $(caps_but -)
	rc=$?
	check "needs: without hostPID the load fails, saying it is the PID namespace" \
		eval '[ "$rc" -ne 0 ] && [[ "$needs_said" == *"PID namespace of its own"* ]]'
	for o in /sys/fs/bpf:/sys/fs/bpf /sys/kernel/security:/sys/kernel/security:ro; do
		needs_load "the ${o%%:*} mount" --pid=host $(mounts_but "$o") $(caps_but -)
		check "needs: without the ${o%%:*} mount the load fails" [ $? -ne 0 ]
	done
}

# needs_running: the two mounts the daemon needs once loaded. Without the host's cgroup tree
# a container sees its own cgroup namespace's, where the policy's cgroups are not; without
# the host's /run/nodefd a second daemon (the host's unit) would not see the pod's lock.
needs_running()
{
	local out rc m

	for m in - /sys/fs/cgroup:/sys/fs/cgroup:ro; do
		out=$(podman run --rm --network=none --read-only --pid=host --cap-drop=all \
			$(caps_but -) $(mounts_but "$m") \
			--entrypoint /usr/sbin/nodefdctl localhost/nodefd:latest policy show init.scope 2>&1)
		rc=$?
		echo "# needs: without ${m%%:*}: policy show init.scope exit $rc: $(tail -n 1 <<<"$out" | cut -c1-200)"
		if [ "$m" = - ]; then
			check "needs: with the host's /sys/fs/cgroup a container finds the policy's cgroups" [ "$rc" -eq 0 ]
		else
			check "needs: without the host's /sys/fs/cgroup the policy's cgroups are not found" [ "$rc" -ne 0 ]
		fi
	done
	out=$(timeout 20 nodefdctl daemon --no-policy 2>&1 </dev/null)
	rc=$?
	echo "# needs: a second daemon on the host: exit $rc: $(grep -v '^{' <<<"$out" | tail -n 1 | cut -c1-200)"
	check "needs: /run/nodefd shared: a daemon on the host is refused while the pod's runs" \
		eval '[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "one daemon at a time" <<<"$out"'
}

# ---- the run -------------------------------------------------------------------------------

echo "# kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"), podman $(podman version --format '{{.Client.Version}}' 2>/dev/null), system ${VMTEST_SYSTEM_STATE:-?}"
echo "# lsm: $(cat /sys/kernel/security/lsm)"
probe_setup

# Before: no daemon on the host, nothing loaded, the attack works.
check "before the pod: nodefd.service not running, nothing pinned" \
	eval '! systemctl is-active -q nodefd.service && [ ! -e /sys/fs/bpf/nodefd ]'
check "before the pod: the host attack works" [ "$(probe)" = allowed ]

# The image: local base, the package, no network.
t0=$SECONDS
out=$(bash "$add/build" "$add/base.tar" "$deb" 2>&1)
rc=$?
note "dist/image/build: exit $rc in $((SECONDS - t0))s: $(tail -n 3 <<<"$out")"
check "the image builds from the local base and the package" [ "$rc" -eq 0 ]
echo "# image: $(podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' localhost/nodefd 2>&1 | tr '\n' ' ')"
echo "# image size in bytes: $(podman image inspect --format '{{.Size}}' localhost/nodefd:latest 2>&1)"
bash /run/vmtest/guest container-image >"$work/busybox.out" 2>&1 ||
	note "container-image failed:" "$(cat "$work/busybox.out")"
check "before the pod: the attack in a container works" [ "$(ctr_attack)" = allowed ]
[ "${KUBE_NEEDS:-1}" = 1 ] && needs
check "before the pod: nothing loaded" [ ! -e /sys/fs/bpf/nodefd ]

# The DaemonSet.
t0=$SECONDS
out=$(podman kube play $play_opts "$manifest" 2>&1)
rc=$?
note "podman kube play: exit $rc" "$(tail -n 8 <<<"$out")"
check "podman kube play of the DaemonSet" [ "$rc" -eq 0 ]
# The manifest asks for no AppArmor profile (appArmorProfile and the annotation): what podman made
# of it (empty when the host's AppArmor has no userspace to load profiles with).
echo "# AppArmor profile of $ctr: '$(podman inspect --format '{{.AppArmorProfile}}' "$ctr" 2>&1)'"
[ "$rc" -eq 0 ] && ready 240
rc=$?
echo "# ready after $((SECONDS - t0))s"
check "the pod gets ready (readinessProbe's command: nodefdctl status --quiet)" [ "$rc" -eq 0 ]
if [ "$rc" -ne 0 ]; then
	show_pod
	printf '1..%d\n' "$tap_n"
	exit 1
fi
note "nodefdctl status on the host:" "$(nodefdctl status 2>&1 | head -n 12)"
check "the livenessProbe passes (podman healthcheck run)" podman healthcheck run "$ctr"
check "the daemon is the pod's container, its pid in /run/nodefd" \
	eval 'p=$(daemon_pid); [ -n "$p" ] && [ "$p" = "$(podman inspect --format "{{.State.Pid}}" "$ctr")" ]'
note "daemon container: $(podman inspect --format 'privileged={{.HostConfig.Privileged}} caps={{.EffectiveCaps}} seccomp={{.HostConfig.SecurityOpt}} pidns={{.HostConfig.PidMode}}' "$ctr" 2>&1)"
check "the daemon container is not privileged" \
	[ "$(podman inspect --format '{{.HostConfig.Privileged}}' "$ctr")" = false ]
[ "${KUBE_NEEDS:-1}" = 1 ] && needs_running

# Enforcing on the host and in another container; events in the pod's log.
p=$(probe)
check "the host attack is refused" [ "$p" = refused ]
c=$(ctr_attack)
note "container attack: $c"
check "the attack in another container is refused" [ "$c" = refused ]
within 30 logged enforce /srv/probe/file && within 30 logged enforce libpod
pod_log | grep '"type":"event"' >"$work/events"
note "host attack's event: $(grep /srv/probe/file "$work/events" | tail -n 1 | cut -c1-600)"
note "container attack's event: $(grep -v /srv/probe/file "$work/events" | tail -n 1 | cut -c1-700)"
check "the pod's log has the host attack's refusal" \
	eval 'grep "\"action\":\"enforce\"" "$work/events" | grep -q "/srv/probe/file"'
check "the pod's log has the container's refusal, with its container" \
	eval 'grep "\"action\":\"enforce\"" "$work/events" | grep -v /srv/probe | grep -q "libpod"'

# Restarts with no gap: the pod restarted, then replaced.
restart_check "podman pod restart" podman pod restart "$pod"
note "daemon's start record: $(pod_log | grep '"type":"start"' | tail -n 1 | cut -c1-300)"
check "podman pod restart: the new daemon adopted the pins" \
	eval 'pod_log | grep "\"type\":\"start\"" | tail -n 1 | grep -q adopt'
restart_check "podman kube play --replace" podman kube play $play_opts --replace "$manifest"

# The ConfigMap changed in place, as the kubelet updates a mounted one: the policy-watch
# container sends the daemon SIGHUP, no restart.
mkdir -p "$probe_cg"
check "cgroup $probe_cg: enforced, the attack refused there" \
	eval '[ "$(policy_of "$probe_cg")" = enforce ] && [ "$(probe_in "$probe_cg")" = refused ]'
vol=$(podman volume inspect --format '{{.Mountpoint}}' nodefd-policy 2>&1)
note "the ConfigMap's volume: $vol: $(ls -l "$vol" 2>&1 | tail -n +2)"
pid0=$(daemon_pid)
{
	cat "$vol/policy.conf"
	printf '\n[cgroup "nodefd-kube"]\nmode = audit\n'
} >"$vol/..policy.conf.new" && chmod 0644 "$vol/..policy.conf.new" &&
	mv -f "$vol/..policy.conf.new" "$vol/policy.conf"
for i in $(seq 40); do
	[ "$(policy_of "$probe_cg")" = audit ] && break
	sleep 1
done
note "after ${i}s: $probe_cg upgrade=$(policy_of "$probe_cg"); policy-watch: $(podman logs "$watch_ctr" 2>&1 | tail -n 1)"
check "ConfigMap changed in place: applied without a restart" \
	eval '[ "$(policy_of "$probe_cg")" = audit ] && [ "$(daemon_pid)" = "$pid0" ]'
p=$(probe_in "$probe_cg")
within 30 logged audit /srv/probe/file
check "ConfigMap changed in place: the attack in $probe_cg is audited, not refused" \
	eval '[ "$p" = allowed ] && pod_log | grep "\"action\":\"audit\"" | grep -q /srv/probe/file'
check "ConfigMap changed in place: still refused elsewhere" [ "$(probe)" = refused ]

# A bad ConfigMap: rejected whole, the running policy stays, the daemon says why.
cp -a "$vol/policy.conf" "$work/policy.good"
printf '[default]\nmode = audit\nbogus = on\n' >"$vol/..policy.conf.new" && chmod 0644 "$vol/..policy.conf.new" &&
	mv -f "$vol/..policy.conf.new" "$vol/policy.conf"
within 40 eval 'pod_log | grep -q bogus'
note "after a bad file: $(pod_log | grep -i bogus | tail -n 1 | cut -c1-300)"
check "a bad ConfigMap is rejected with its reason, the policy stays" \
	eval 'pod_log | grep -q "bogus" && [ "$(policy_of "$probe_cg")" = audit ] && [ "$(probe)" = refused ]'
cp -a "$work/policy.good" "$vol/..policy.conf.new" && mv -f "$vol/..policy.conf.new" "$vol/policy.conf"

# The ConfigMap changed in the manifest and played again: the cgroup turned off.
awk '{ print } /^    path_read = on$/ && !done { print "    [cgroup \"nodefd-kube\"]"; print "    mode = off"; done = 1 }' \
	"$manifest" >"$work/changed.yaml"
note "changed ConfigMap: $(sed -n '/^data:/,/^---$/p' "$work/changed.yaml" | grep -v '^ *#' | tr '\n' '|')"
restart_check "podman kube play --replace with a changed ConfigMap" \
	podman kube play $play_opts --replace "$work/changed.yaml"
check "the changed ConfigMap applied: $probe_cg off, the attack there allowed, refused elsewhere" \
	eval '[ "$(policy_of "$probe_cg")" = off ] && [ "$(probe_in "$probe_cg")" = allowed ] && [ "$(probe)" = refused ]'

show_pod
printf '1..%d\n' "$tap_n"
