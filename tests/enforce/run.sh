#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# enforce-run: the in-VM driver of the enforcement tests, for the kernel it runs on. Without
# nodefd: the attack matrix must show the hole, legit cases and the race must work; then
# `nodefdctl load`; with nodefd: every attack refused, every legit case still working, the race
# never wrong, the events reported; then `nodefdctl unload`. Prints each suite's TAP under a
# "### NAME" header and TAP lines of its own for load and unload; exits 1 if anything failed.
#
#   vmtest/run [--kernel=onode|debian12|debian13] -- enforce-run
set -u

status=0
n=0
log=$(mktemp /tmp/enforce-run.XXXXXX) || exit 1
trap 'rm -f "$log"' EXIT

# result NAME OK [WHY]: one TAP line of the driver's own.
result()
{
	n=$((n + 1))
	if [ "$2" = ok ]; then
		echo "ok $n - enforce-run: $1"
	else
		echo "not ok $n - enforce-run: $1${3:+ # $3}"
		status=1
	fi
}

# suite NAME COMMAND...: run one test program, show its TAP. A program that fails without a
# "not ok" of its own (a crash, no plan at all) gets one here, so that the failure is counted.
suite()
{
	name=$1
	shift
	echo "### $name"
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	echo "### exit $name $rc"
	if [ "$rc" -ne 0 ]; then
		status=1
		grep -q '^not ok ' "$log" || result "$name exits 0" fail "exit $rc, no failed case"
	fi
}

echo "# kernel $(uname -r), LSMs: $(cat /sys/kernel/security/lsm 2>/dev/null)"

suite "attack (hole)" env NODEFD_EXPECT=hole enforce_attack_test
suite "legit (plain)" enforce_legit_test
suite "race (hole)" env NODEFD_EXPECT=hole enforce_race_test
suite "relink (hole)" env NODEFD_EXPECT=hole enforce_relink_test
suite "emptypath (hole)" env NODEFD_EXPECT=hole enforce_emptypath_test
suite "disk (hole)" env NODEFD_EXPECT=hole enforce_disk_test
suite "limits (hole)" env NODEFD_EXPECT=hole enforce_limits_test
suite "pathops (hole)" env NODEFD_EXPECT=hole enforce_pathops_test
suite "userns (hole)" env NODEFD_EXPECT=hole enforce_userns_test
suite "model (hole)" env NODEFD_EXPECT=hole enforce_model_test
suite "jump (hole)" env NODEFD_EXPECT=hole enforce_jump_test
suite "steer (hole)" env NODEFD_EXPECT=hole enforce_steer_test
suite "doors (hole)" env NODEFD_EXPECT=hole enforce_doors_test
suite "mounts (hole)" env NODEFD_EXPECT=hole enforce_mounts_test

echo "### nodefdctl load"
if nodefdctl load; then
	result "nodefdctl load" ok
	# How a magic link's jump is judged: in the kernel's LSM hook at the jump where the kernel
	# has one (its BPF attach point is in kallsyms), else by the guard, and by the guard
	# wherever NODEFD_FORCE_JUMP=guard (make check runs the suite so on the test kernel as
	# well). The jump suite's expectations follow it.
	NODEFD_JUMP=$(nodefdctl -j status | sed -n 's/.*"jump":"\([a-z]*\)".*/\1/p')
	export NODEFD_JUMP
	want=guard why="this kernel allows"
	grep -q ' bpf_lsm_magiclink_jump$' /proc/kallsyms && want=hook
	if [ "$want" = hook ] && [ "${NODEFD_FORCE_JUMP:-}" = guard ]; then
		want=guard why="NODEFD_FORCE_JUMP asks"
	fi
	if [ "$NODEFD_JUMP" = "$want" ]; then
		result "the jump is judged by the $want, as $why" ok
	else
		result "the jump is judged by the $want, as $why" fail \
			"status says '${NODEFD_JUMP:-nothing}'"
	fi
	suite "attack (refused)" env NODEFD_EXPECT=refused enforce_attack_test
	# Strict: the fd's access is a ceiling, even where the name would give more.
	if nodefdctl policy set /sys/fs/cgroup enforce strict=on; then
		result "policy set: strict on the root cgroup" ok
		suite "attack (strict)" env NODEFD_EXPECT=refused NODEFD_STRICT=1 \
			enforce_attack_test
		nodefdctl policy unset /sys/fs/cgroup ||
			result "policy unset of the root cgroup" fail "exit $?"
	else
		result "policy set: strict on the root cgroup" fail "exit $?"
	fi
	suite "legit (loaded)" enforce_legit_test
	suite "race (refused)" env NODEFD_EXPECT=refused enforce_race_test
	suite "relink (refused)" env NODEFD_EXPECT=refused enforce_relink_test
	suite "emptypath (refused)" env NODEFD_EXPECT=refused enforce_emptypath_test
	suite "disk (refused)" env NODEFD_EXPECT=refused enforce_disk_test
	suite "limits (refused)" env NODEFD_EXPECT=refused enforce_limits_test
	suite "pathops (refused)" env NODEFD_EXPECT=refused enforce_pathops_test
	suite "userns (refused)" env NODEFD_EXPECT=refused enforce_userns_test
	suite "model (loaded)" env NODEFD_EXPECT=refused enforce_model_test
	suite "jump (refused)" env NODEFD_EXPECT=refused enforce_jump_test
	# Its walkers that could not take the holder's fds: the guard watches each one's jump
	# (counted); the hook at the jump judges where it lands, with nothing watched.
	watched=$(nodefdctl -j status | sed -n 's/.*"jump_watched":\([0-9]*\).*/\1/p')
	echo "# jump_watched after the jump suite: ${watched:-nothing} (the $NODEFD_JUMP)"
	if [ "$NODEFD_JUMP" = hook ]; then
		[ "${watched:-x}" = 0 ] && r=ok || r=fail
	else
		[ "${watched:-0}" -gt 0 ] && r=ok || r=fail
	fi
	result "jump_watched: the guard watches the jump suite's walks, the hook none" "$r" \
		"jump_watched '${watched:-nothing}' with the $NODEFD_JUMP"
	suite "steer (refused)" env NODEFD_EXPECT=refused enforce_steer_test
	suite "doors (refused)" env NODEFD_EXPECT=refused enforce_doors_test
	suite "mounts (refused)" env NODEFD_EXPECT=refused enforce_mounts_test
	suite "events" enforce_events_test
	echo "### nodefdctl status"
	nodefdctl status
	echo "### nodefdctl unload"
	if nodefdctl unload && [ ! -e /sys/fs/bpf/nodefd ]; then
		result "nodefdctl unload" ok
	else
		result "nodefdctl unload" fail "exit status or /sys/fs/bpf/nodefd left"
	fi
else
	result "nodefdctl load" fail "exit $?: nothing was tested with nodefd"
fi

echo "1..$n"
exit $status
