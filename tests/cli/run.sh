#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cli-run: the in-VM tests of nodefdctl's command line, on the kernel it runs on. Per-cgroup
# policies (enforce, audit, off, inheritance, a process moved between cgroups), the live switch,
# the daemon's life (kill -9, adoption, missed and dropped events, SIGHUP, SIGTERM, unload) and
# hostile input (bad verbs, arguments, cgroup paths and policy files, no privilege, a second
# daemon, pins of another ABI): each case checks the message, the exit status and, where
# something was refused, that the maps are exactly as they were. TAP on stdout; exits 1 if
# anything failed.
#
#   vmtest/run [--kernel=onode|debian12|debian13] -- cli-run
set -u
. "$(dirname "$0")/cli-lib.sh"

CG=/sys/fs/cgroup
PINS=/sys/fs/bpf/nodefd
T=$(mktemp -d /tmp/cli-run.XXXXXX) || exit 1
VICTIM=$T/victim
DAEMON_PID=

cleanup()
{
	[ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

echo "# kernel $(uname -r), LSMs: $(cat /sys/kernel/security/lsm 2>/dev/null)"

# ---- helpers -------------------------------------------------------------------------------

# The state a refused command must leave alone: every policy (and the map holding them) and the
# settings the status shows.
snap()
{
	nodefdctl -j policy show 2>&1
	nodefdctl -j status 2>&1 | grep -o '"enabled":[a-z]*\|"policy_map_id":[0-9]*\|"abi_version":[0-9]*'
}

# expect CODE TEXT CMD...: CMD exits with CODE, says TEXT (stdout or stderr), changes no map.
expect()
{
	local want=$1 text=$2 before after out rc

	shift 2
	before=$(snap)
	out=$("$@" 2>&1)
	rc=$?
	after=$(snap)
	printf '$ %s\n' "$*" | cut -c1-160
	printf '%s\n' "$out" | head -n 5 | cut -c1-400
	if [ "$rc" != "$want" ]; then
		echo "exit $rc, want $want"
		return 1
	fi
	if ! printf '%s\n' "$out" | grep -qF -- "$text"; then
		echo "no \"$text\" in the output"
		return 1
	fi
	if [ "$before" != "$after" ]; then
		printf 'the maps changed:\nbefore: %s\nafter:  %s\n' "$before" "$after"
		return 1
	fi
}

# expect_as_nobody CODE TEXT CMD ARG...: as expect, CMD (from PATH) run by nobody (uid 65534,
# no capabilities).
expect_as_nobody()
{
	local want=$1 text=$2 cmd

	cmd=$(command -v "$3") || return 1
	shift 3
	expect "$want" "$text" su -p -s /bin/sh nobody -c 'exec "$0" "$@"' "$cmd" "$@"
}

# Events waiting in the ring buffer, as JSON lines; drain drops them.
events_now() { nodefdctl -j events --timeout 0 2>/dev/null; }
drain() { events_now >/dev/null; }

# counter KIND RULE: denied or audited count of RULE, from status --json.
counter()
{
	nodefdctl -j status | sed -n "s/.*\"$1\":{[^}]*\"$2\":\([0-9]*\).*/\1/p"
}

# field KEY: the number value of KEY in a JSON line on stdin.
field() { sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" | head -n 1; }

# wait_for FILE TEXT [N]: until FILE holds TEXT at least N times (default 1), 20 s at most
# (WAIT_SECONDS, if set).
wait_for()
{
	local i=0 n

	while [ "$i" -lt $((${WAIT_SECONDS:-20} * 10)) ]; do
		n=$(grep -cF -- "$2" "$1" 2>/dev/null)
		[ "${n:-0}" -ge "${3:-1}" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "timed out waiting for \"$2\" in $1:"
	tail -n 5 "$1" 2>/dev/null
	return 1
}

# attack CGROUP WANT_STATUS ACTION: the reopen from CGROUP exits WANT_STATUS (0 allowed,
# 1 refused) and makes exactly one event of ACTION (enforce, audit; none: no event) that names
# CGROUP by id and path.
attack()
{
	local dir=$CG/$1 out rc pid id ev n

	drain
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$dir" try 2>&1)
	rc=$?
	printf '%s\n' "$out"
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	id=$(stat -c %i "$dir")
	if [ "$rc" != "$2" ]; then
		echo "reopen-probe exit $rc, want $2"
		return 1
	fi
	ev=$(events_now | grep "\"pid\":$pid,")
	printf '%s\n' "$ev" | cut -c1-400
	if [ "$3" = none ]; then
		[ -z "$ev" ] || { echo "an event, want none"; return 1; }
		return 0
	fi
	n=$(printf '%s\n' "$ev" | grep -c '"type":"event"')
	[ "$n" = 1 ] || { echo "$n events for pid $pid, want 1"; return 1; }
	for want in "\"action\":\"$3\"" '"rule":"upgrade"' "\"cgroup_id\":$id," \
		"\"cgroup_path\":\"$dir\""; do
		printf '%s\n' "$ev" | grep -qF -- "$want" || { echo "no $want in the event"; return 1; }
	done
}

# tries OUTPUT WANT...: the "try" lines of reopen-probe's OUTPUT have ok=/eacces= as WANT
# says, in order: "ok" (allowed) or "eacces" (refused), each followed by the cgroup.
tries()
{
	local out=$1 i=0 line want cg

	shift
	printf '%s\n' "$out"
	for want in "$@"; do
		i=$((i + 1))
		cg=${want#*@}
		line=$(printf '%s\n' "$out" | grep '^try ' | sed -n "${i}p")
		case "${want%@*}" in
		ok) printf '%s\n' "$line" | grep -q 'ok=1 eacces=0' ;;
		eacces) printf '%s\n' "$line" | grep -q 'ok=0 eacces=1' ;;
		esac || { echo "try $i: want ${want%@*}"; return 1; }
		printf '%s\n' "$line" | grep -qF "cgroup_id=$(stat -c %i "$CG/$cg") " ||
			{ echo "try $i: not in $cg"; return 1; }
	done
}

# start_daemon NAME ARGS...: a daemon in the background, its output in $T/NAME.out; waits for
# its "missed" record (it has started, applied the policy and caught up).
start_daemon()
{
	local name=$1

	shift
	# Made empty here, not by the child's redirection: a name used before would otherwise
	# show its old records to wait_for until the child got to truncate it.
	: >"$T/$name.out"
	nodefdctl daemon "$@" >"$T/$name.out" 2>&1 &
	DAEMON_PID=$!
	wait_for "$T/$name.out" '"type":"missed"' >/dev/null || true
}

stop_daemon()
{
	kill "-${1:-TERM}" "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_RC=$?
	DAEMON_PID=
}

# bad_file NAME TEXT REASON: `policy load` of a file holding TEXT fails with REASON, maps kept.
bad_file()
{
	printf '%b' "$2" >"$T/$1.conf"
	chmod 0644 "$T/$1.conf"
	expect 1 "$T/$1.conf:$3" nodefdctl policy load "$T/$1.conf"
}

policy_file()
{
	cat >"$1"
	chmod 0644 "$1"
}

# status_is CODE [ARGS...]: `nodefdctl status ARGS` exits CODE; with -q it prints nothing.
status_is()
{
	local want=$1 out rc

	shift
	out=$(nodefdctl status "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | head -n 3
	[ "$rc" = "$want" ] || { echo "exit $rc, want $want"; return 1; }
	case " $* " in
	*" -q "* | *" --quiet "*) [ -z "$out" ] || { echo "--quiet printed something"; return 1; } ;;
	esac
}

# json_schema_ok: every line of stdin that is a JSON record carries "schema":2 (and there is one).
json_schema_ok()
{
	local n=0 bad=0 line

	while IFS= read -r line; do
		case "$line" in
		'{'*) n=$((n + 1))
		      case "$line" in *'"schema":2'[,}]*) ;; *) bad=$((bad + 1)); echo "no schema: $line" | cut -c1-200 ;; esac ;;
		esac
	done
	echo "$n records, $bad without \"schema\":2"
	[ "$n" -gt 0 ] && [ "$bad" = 0 ]
}

# ---- setup -----------------------------------------------------------------------------------

# The article's victim: a file anyone may write, in a directory ($T, 0700 root) that the prober's
# uid cannot search. The prober opens it as root, read-only, and tries the reopen for writing as
# TRY_UID (its effective uid only): the kernel's check of the reopen (the file's mode) lets it
# through, and nodefd must refuse it, as TRY_UID could not open the file by name.
TRY_UID=65534
echo "the owner's data" >"$VICTIM"
chmod 0666 "$VICTIM"
chmod 0700 "$T"

if [ ! -e "$PINS" ]; then
	check "status --quiet when not loaded: exit 4, silent" status_is 4 --quiet
	check "status when not loaded: exit 4" status_is 4
	check "status --json when not loaded: state not_loaded, schema 2" \
		expect 4 '"state":"not_loaded"' nodefdctl -j status
else
	skip "status when not loaded" "$PINS exists before the tests"
fi
# A load from a PID namespace of its own (a container without the host's) is refused up front,
# by name: the programs' pids are the host's, and the load's proof would fail for no given reason.
check "load in a PID namespace of its own: refused, saying so, nothing loaded" \
	expect 1 "PID namespace of its own" unshare -p -f --mount-proc nodefdctl load
check "daemon in a PID namespace of its own: refused, saying so, nothing loaded" \
	expect 1 "PID namespace of its own" timeout 30 unshare -p -f --mount-proc nodefdctl daemon --no-policy
# How a magic link's jump is judged: the kernel's hook where it has one (its BPF attach point is
# in kallsyms), else the guard; NODEFD_FORCE_JUMP=guard forces the guard, and nothing else is
# taken for it.
check "load with NODEFD_FORCE_JUMP=hook: refused, naming the one value, nothing loaded" \
	expect 1 'NODEFD_FORCE_JUMP=hook: the only value is "guard"' env NODEFD_FORCE_JUMP=hook nodefdctl load
check "nothing pinned after the refused load" test ! -e "$PINS"
check "load with NODEFD_FORCE_JUMP=guard" env NODEFD_FORCE_JUMP=guard nodefdctl load
check "status: the jump judged by the guard, as forced" \
	expect 0 '"jump":"guard"' nodefdctl -j status
check "unload after the forced guard" nodefdctl unload
jump_want=guard
grep -q ' bpf_lsm_magiclink_jump$' /proc/kallsyms && jump_want=hook
# The programs attached: 13, of which 8 only the guard needs (not loaded with the hook).
nprogs=13
[ "$jump_want" = guard ] || nprogs=5
check "nodefdctl load" nodefdctl load
check "status: the jump judged by the $jump_want, as this kernel allows" \
	expect 0 "\"jump\":\"$jump_want\"" nodefdctl -j status
check "status -q when loaded and enabled: exit 0, silent" status_is 0 -q
check "status --json: state enforcing" expect 0 '"state":"enforcing"' nodefdctl -j status
if [ ! -d "$PINS" ]; then
	echo "Bail out! nodefd did not load: nothing else can be tested"
	done_testing
	exit 1
fi
mkdir -p "$CG/cli/enf/child" "$CG/cli/aud" "$CG/cli/off" "$CG/cli/pr" "$CG/cli/st"

# ---- per-cgroup policies ---------------------------------------------------------------------

check "policy set: enforce on cli/enf" nodefdctl policy set cli/enf enforce
check "policy set: audit on cli/aud (absolute path)" nodefdctl policy set "$CG/cli/aud" audit
check "policy set: off on cli/off" nodefdctl policy set cli/off off
check "policy set: rules and path_read on cli/pr" \
	nodefdctl policy set cli/pr off upgrade=enforce path_read=on

t_show_all()
{
	local out

	out=$(nodefdctl -j policy show) || return 1
	echo "$out"
	for c in enf aud off pr; do
		printf '%s\n' "$out" | grep -qF "\"cgroup\":\"$CG/cli/$c\",\"cgroup_id\":$(stat -c %i $CG/cli/$c)," ||
			{ echo "no policy for cli/$c"; return 1; }
	done
	printf '%s\n' "$out" | grep -qF '"cgroup":"'"$CG"'/cli/pr","cgroup_id":'"$(stat -c %i $CG/cli/pr)"',"upgrade":"enforce","append":"off","ancestors":"off","reach":"off","path_read":true'
}
check "policy show --json lists every policy with its cgroup path and id" t_show_all

t_show_child()
{
	local out

	out=$(nodefdctl -j policy show cli/enf/child) || return 1
	echo "$out"
	printf '%s\n' "$out" | grep -qF '"source":"inherited","from":"'"$CG"'/cli/enf"' &&
		printf '%s\n' "$out" | grep -qF '"upgrade":"enforce"'
}
check "policy show: cli/enf/child inherits cli/enf's policy" t_show_child
check "policy show: the root has none (every rule enforced)" \
	expect 0 '"source":"none"' nodefdctl -j policy show /sys/fs/cgroup

check "attack from cli/enf: refused, one enforce event with its cgroup" attack cli/enf 1 enforce
check "attack from cli/enf/child: refused (inherited), event names the child" \
	attack cli/enf/child 1 enforce
# A delegated subtree may nest deeply; the nearest policy counts at any depth, not the root's.
deep=cli/enf
for i in $(seq 1 40); do
	deep=$deep/d$i
done
mkdir -p "$CG/$deep"
t_deep()
{
	local rc=0

	nodefdctl policy set /sys/fs/cgroup off >/dev/null || return 1
	attack "$deep" 1 enforce || rc=1
	nodefdctl policy unset /sys/fs/cgroup >/dev/null || rc=1
	return $rc
}
check "attack from 40 levels below cli/enf, the root's policy off: refused (cli/enf's)" t_deep
rmdir_deep()
{
	local d=$deep

	while [ "$d" != cli/enf ]; do
		rmdir "$CG/$d" || return 1
		d=${d%/*}
	done
}
check "the deep cgroups are removed" rmdir_deep
check "attack from cli/aud: allowed and reported (audit)" attack cli/aud 0 audit
check "attack from cli/off: allowed, no event" attack cli/off 0 none

t_text_event()
{
	local out pid

	drain
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf/child" try)
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	out=$(nodefdctl events --timeout 0)
	echo "$out"
	printf '%s\n' "$out" | grep "pid=$pid " |
		grep -q "cgroup=$(stat -c %i $CG/cli/enf/child) cgroup_path=$CG/cli/enf/child "
}
check "events (text): cgroup id and path side by side" t_text_event

# The cgroup path is recorded at the event: a container's cgroup removed before the event is
# read is still named, and so is the container.
t_gone_container()
{
	local id=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	local dir="$CG/cli/enf/libpod-$id.scope" out pid cgid i=0

	drain
	mkdir "$dir" || return 1
	cgid=$(stat -c %i "$dir")
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$dir" try)
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	until rmdir "$dir" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 50 ] || { echo "cannot remove $dir"; return 1; }
		sleep 0.1
	done
	[ ! -e "$dir" ] || return 1
	out=$(events_now | grep "\"pid\":$pid,")
	printf '%s\n' "$out" | cut -c1-400
	printf '%s\n' "$out" | grep -qF "\"cgroup_id\":$cgid,\"cgroup_path\":\"$dir\",\"container\":{\"runtime\":\"podman\",\"id\":\"$id\",\"pod_uid\":null},\"unit\":\"libpod-$id.scope\","
}
check "events: a container's cgroup removed before the read is still named, with the container" \
	t_gone_container
t_text_container()
{
	local id=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
	local dir="$CG/cli/enf/docker-$id.scope" out pid

	drain
	mkdir "$dir" || return 1
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$dir" try)
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	out=$(nodefdctl events --timeout 0 | grep "pid=$pid ")
	rmdir "$dir"
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -qF " cgroup_path=$dir container=docker:$id unit=docker-$id.scope holder="
}
check "events (text): container=RUNTIME:ID and unit= beside the cgroup" t_text_container

t_path_read()
{
	local out

	out=$(reopen-probe -u "$TRY_UID" -P "$VICTIM" "move:$CG/cli/pr" try "move:$CG/cli/enf" try 2>&1)
	tries "$out" ok@cli/pr eacces@cli/enf
}
check "path_read=on: an O_PATH fd reopened read-only in cli/pr only" t_path_read

t_moved_self()
{
	local out

	drain
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/aud" try "move:$CG/cli/enf" try \
		"move:$CG/cli/aud" try 2>&1)
	tries "$out" ok@cli/aud eacces@cli/enf ok@cli/aud || return 1
	out=$(events_now | grep "\"pid\":$(printf '%s\n' "$out" | sed -n 's/^pid=//p'),")
	printf '%s\n' "$out" | cut -c1-200
	[ "$(printf '%s\n' "$out" | sed -n 's/.*"action":"\([a-z]*\)".*"cgroup_path":"\([^"]*\)".*/\1 \2/p' | tr '\n' ' ')" = \
		"audit $CG/cli/aud enforce $CG/cli/enf audit $CG/cli/aud " ]
}
check "a process that moves itself: audited, refused, audited, events follow it" t_moved_self

t_moved_outside()
{
	local out pid

	rm -f "$T/ready" "$T/go"
	reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try "touch:$T/ready" "wait:$T/go" try \
		>"$T/moved.out" 2>&1 &
	pid=$!
	i=0
	while [ ! -e "$T/ready" ] && [ "$i" -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "$pid" >"$CG/cli/aud/cgroup.procs"
	touch "$T/go"
	wait "$pid"
	out=$(cat "$T/moved.out")
	tries "$out" eacces@cli/enf ok@cli/aud
}
check "a process moved by someone else mid-run: refused in cli/enf, allowed in cli/aud" \
	t_moved_outside

t_counters()
{
	local d0 a0 d1 a1

	d0=$(counter denied upgrade)
	a0=$(counter audited upgrade)
	reopen-probe -u "$TRY_UID" -n 3 "$VICTIM" "move:$CG/cli/enf" try "move:$CG/cli/aud" try >/dev/null
	d1=$(counter denied upgrade)
	a1=$(counter audited upgrade)
	echo "denied upgrade $d0 -> $d1, audited upgrade $a0 -> $a1"
	drain
	[ "$d1" -eq $((d0 + 3)) ] && [ "$a1" -eq $((a0 + 3)) ]
}
check "status counters: per rule, refusals and audits counted apart" t_counters

# metrics: Prometheus' text format, the same counts as status, each metric with HELP and TYPE.
t_metrics()
{
	local out d m bad r0 r1

	r0=$(nodefdctl metrics | sed -n 's/^nodefd_refused_total{rule="upgrade",reason="rule"} //p')
	reopen-probe -u "$TRY_UID" -n 2 "$VICTIM" "move:$CG/cli/enf" try >/dev/null
	drain
	out=$(nodefdctl metrics) || return 1
	printf '%s\n' "$out" | grep -v '^#' | grep -v ' 0$' | head -n 30
	d=$(counter denied upgrade)
	# By rule and reason: a rule's sum over the reasons is what status counts for it.
	m=$(printf '%s\n' "$out" | awk -F' ' '/^nodefd_refused_total\{rule="upgrade",reason="[a-z_]+"\} / { s += $2; n++ }
		END { if (n == 12) print s }')
	r1=$(printf '%s\n' "$out" | sed -n 's/^nodefd_refused_total{rule="upgrade",reason="rule"} //p')
	echo "status: denied upgrade $d; metrics: $m over 12 reasons; reason rule $r0 -> $r1"
	[ -n "$m" ] && [ "$m" = "$d" ] && [ -n "$r0" ] && [ "$r1" -eq $((r0 + 2)) ] || return 1
	[ "$(printf '%s\n' "$out" | grep -c '^nodefd_refused_total{')" -eq 48 ] &&
		[ "$(printf '%s\n' "$out" | grep -c '^nodefd_audited_total{')" -eq 48 ] ||
		{ echo "not 4 rules x 12 reasons"; return 1; }
	printf '%s\n' "$out" | grep -qx 'nodefd_loaded 1' &&
		printf '%s\n' "$out" | grep -qx 'nodefd_bpf_lsm_active 1' &&
		printf '%s\n' "$out" | grep -qx "nodefd_programs_attached $nprogs" || return 1
	# Every sample: a name, optional labels, a number; every name declared by TYPE first.
	bad=$(printf '%s\n' "$out" | grep -v '^# \(HELP\|TYPE\) ' |
		grep -vE '^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9]+$')
	[ -z "$bad" ] || { echo "not the text format: $bad"; return 1; }
	for name in $(printf '%s\n' "$out" | grep -v '^#' | sed 's/[{ ].*//' | sort -u); do
		printf '%s\n' "$out" | grep -q "^# TYPE $name \(counter\|gauge\)$" ||
			{ echo "$name: no TYPE"; return 1; }
		case $name in *_total) printf '%s\n' "$out" | grep -q "^# TYPE $name counter$" ||
			{ echo "$name: a _total that is no counter"; return 1; } ;; esac
	done
}
check "metrics: Prometheus text format, refusals by rule and reason as status counts them" t_metrics

check "policy unset cli/off: it follows the root again (enforced)" \
	nodefdctl policy unset cli/off
check "attack from cli/off after unset: refused" attack cli/off 1 enforce

# ---- strict ------------------------------------------------------------------------------------

check "policy set strict=on" nodefdctl policy set cli/st enforce strict=on
t_strict_show()
{
	local out

	out=$(nodefdctl -j policy show cli/st) || return 1
	echo "$out"
	printf '%s\n' "$out" | grep -qF '"path_read":false,"strict":true' || return 1
	out=$(nodefdctl policy show cli/st) || return 1
	echo "$out"
	printf '%s\n' "$out" | grep -qF 'path_read=off strict=on' || return 1
	nodefdctl policy set cli/st enforce strict=off path_read=on || return 1
	out=$(nodefdctl -j policy show cli/st) || return 1
	echo "$out"
	printf '%s\n' "$out" | grep -qF '"path_read":true,"strict":false'
}
check "policy show: strict on and off, text and JSON" t_strict_show
check "strict takes on or off" expect 2 "strict takes on or off, not 'yes'" \
	nodefdctl policy set cli/st enforce strict=yes
check "strict given twice" expect 2 "'strict' given twice" \
	nodefdctl policy set cli/st enforce strict=on strict=off
t_strict_file()
{
	local out

	policy_file "$T/strict.conf" <<-EOF
	[cgroup "cli/st"]
	mode = audit
	strict = on
	EOF
	out=$(nodefdctl -j policy check "$T/strict.conf") || return 1
	echo "$out"
	printf '%s\n' "$out" | grep -qF '"upgrade":"audit","append":"audit","ancestors":"audit","reach":"audit","path_read":false,"strict":true'
}
check "policy file: strict = on" t_strict_file
check "policy file: strict takes on or off, with its line" \
	bad_file strict '[cgroup "cli/st"]\nmode = audit\nstrict = maybe\n' "3: strict takes on or off, not 'maybe'"
# Root can open the victim by name: without strict its reopen for writing is let through; with
# strict the fd's read-only access is the ceiling.
t_strict_enforced()
{
	local out

	nodefdctl policy set cli/st enforce strict=on >/dev/null || return 1
	drain
	out=$(reopen-probe "$VICTIM" "move:$CG/cli/st" try 2>&1)
	echo "$out"
	printf '%s\n' "$out" | grep -q 'ok=0 eacces=1' || { echo "strict=on: not refused"; return 1; }
	events_now | grep -F '"cgroup_path":"'"$CG"'/cli/st"' | cut -c1-200
	nodefdctl policy set cli/st enforce strict=off >/dev/null || return 1
	out=$(reopen-probe "$VICTIM" "move:$CG/cli/st" try 2>&1)
	echo "$out"
	printf '%s\n' "$out" | grep -q 'ok=1 eacces=0' || { echo "strict=off: refused"; return 1; }
}
check "strict=on refuses root's reopen beyond the fd's access; strict=off lets it (by name)" \
	t_strict_enforced
check "policy unset cli/st" nodefdctl policy unset cli/st

# ---- the live switch ---------------------------------------------------------------------------

t_switch()
{
	local before after d0 d1

	before=$(nodefdctl -j policy show)
	nodefdctl disable || return 1
	nodefdctl -j status | grep -q '"enabled":false' || { echo "status: not disabled"; return 1; }
	d0=$(counter denied upgrade)
	attack cli/enf 0 none || { echo "disabled, yet not let through"; return 1; }
	d1=$(counter denied upgrade)
	[ "$d0" = "$d1" ] || { echo "counted while disabled"; return 1; }
	nodefdctl enable || return 1
	attack cli/enf 1 enforce || { echo "enabled again, yet not refused"; return 1; }
	after=$(nodefdctl -j policy show)
	[ "$before" = "$after" ] || { echo "the policies changed"; return 1; }
	[ -e "$PINS/links/nodefd_file_open" ] && [ -e "$PINS/links/nodefd_inode_follow_link" ]
}
check "disable lets the attack through at once, enable stops it again, no reload" t_switch
check "enable when enabled: says so, exit 0" expect 0 "already enabled" nodefdctl enable
check "enable --json" expect 0 '"enabled":true,"changed":false' nodefdctl --json enable
t_status_disabled()
{
	nodefdctl disable >/dev/null || return 1
	status_is 3 --quiet || { nodefdctl enable; return 1; }
	status_is 3 || { nodefdctl enable; return 1; }
	expect 3 '"state":"disabled"' nodefdctl -j status || { nodefdctl enable; return 1; }
	nodefdctl enable >/dev/null || return 1
	status_is 0 --quiet
}
check "status when disabled: exit 3 (--quiet, text, JSON), 0 once enabled again" t_status_disabled

# ---- events filters ----------------------------------------------------------------------------

# two_events: one refused reopen from cli/enf and one audited from cli/aud, waiting unread;
# their pids in EPID and APID. A second apart from the last pair: events are rate-limited per
# source (8 a second), and these checks make the same two again and again.
two_events()
{
	sleep 1
	drain
	EPID=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try 2>&1 | sed -n 's/^pid=//p')
	APID=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/aud" try 2>&1 | sed -n 's/^pid=//p')
	[ -n "$EPID" ] && [ -n "$APID" ]
}

# filtered WANT FILTER...: of the two events, `events FILTER` prints exactly WANT: "e" (the
# refused one), "a" (the audited one), "ea" (both, in order) or "" (neither). In FILTER, @E and
# @A stand for the pids of the two, known only once the events are made.
filtered()
{
	local want=$1 out got= line arg n

	shift
	two_events || { echo "no pids"; return 1; }
	n=$#
	while [ "$n" -gt 0 ]; do
		arg=$1
		shift
		case "$arg" in
		@E) arg=$EPID ;;
		@A) arg=$APID ;;
		esac
		set -- "$@" "$arg"
		n=$((n - 1))
	done
	out=$(nodefdctl -j events --timeout 0 "$@") || { echo "events exit $?"; return 1; }
	printf '%s\n' "$out" | grep -E "\"pid\":($EPID|$APID)," | cut -c1-200
	for line in $(printf '%s\n' "$out" | sed -n 's/.*"pid":\([0-9]*\),.*/\1/p'); do
		[ "$line" = "$EPID" ] && got=${got}e
		[ "$line" = "$APID" ] && got=${got}a
	done
	[ "$got" = "$want" ] || { echo "events $*: got '$got', want '$want'"; return 1; }
}
check "events unfiltered: both" filtered ea
check "events --action enforce: the refused one" filtered e --action enforce
check "events --action audit: the audited one" filtered a --action audit
check "events --action audit,enforce: both" filtered ea --action audit,enforce
check "events --rule append: neither (both are upgrade)" filtered "" --rule append
check "events --rule append,upgrade: both" filtered ea --rule append,upgrade
check "events --cgroup cli/enf: the refused one" filtered e --cgroup cli/enf
check "events --cgroup /sys/fs/cgroup/cli/aud: the audited one" filtered a --cgroup "$CG/cli/aud"
check "events --cgroup 'cli/a*' (a pattern): the audited one" filtered a --cgroup 'cli/a*'
check "events --cgroup 'cli/*': both" filtered ea --cgroup 'cli/*'
check "events --cgroup cli: neither (not below it)" filtered "" --cgroup cli
check "events --pid: the refused process's only" filtered e --pid @E
check "events --pid: the audited process's only" filtered a --pid @A
check "events --uid 0: both" filtered ea --uid 0
check "events --uid 65534: neither" filtered "" --uid 65534
check "events filters AND: --action enforce --cgroup cli/aud: neither" \
	filtered "" --action enforce --cgroup cli/aud
check "events filters AND: --action audit --cgroup 'cli/*' --uid 0: the audited one" \
	filtered a --action audit --cgroup 'cli/*' --uid 0
check "events --action deny: not a mode" expect 2 "--action: unknown 'deny' (enforce, audit)" \
	nodefdctl events --action deny
check "events --rule: unknown rule" expect 2 "--rule: unknown 'frob'" nodefdctl events --rule frob
check "events --cgroup with ..: refused" expect 2 "'..' is not allowed" nodefdctl events --cgroup ../x
check "events --pid that is no number" expect 2 "--pid 'x': not a number" nodefdctl events --pid x

# ---- JSON records: "schema" --------------------------------------------------------------------

t_schema()
{
	two_events || return 1
	{
		nodefdctl -j status
		nodefdctl -j policy show
		nodefdctl -j policy show cli/enf
		nodefdctl -j --version
		nodefdctl -j enable
		nodefdctl -j policy set cli/enf enforced
		nodefdctl -j events --timeout 0
		nodefdctl -p status
	} 2>&1 | tr -d '\n ' | sed 's/}{/}\n{/g' | json_schema_ok
}
check "every JSON record carries \"schema\":2 (status, policy, version, enable, errors, events)" t_schema

# ---- hostile input: verbs and arguments --------------------------------------------------------

check "unknown verb" expect 2 "unknown command 'frobnicate'" nodefdctl frobnicate
check "unknown policy verb" expect 2 "unknown command 'frob'; try 'nodefdctl policy help'" \
	nodefdctl policy frob
check "policy without a verb" expect 2 "policy: missing command" nodefdctl policy
check "policy set without arguments" expect 2 "missing CGROUP and MODE" nodefdctl policy set
check "policy set without MODE" expect 2 "missing MODE" nodefdctl policy set cli/enf
check "policy set with a stray word" expect 2 "'extra': not RULE=MODE" \
	nodefdctl policy set cli/enf enforce extra
check "policy unset with an extra argument" expect 2 "unexpected argument 'more'" \
	nodefdctl policy unset cli/enf more
check "policy show with an extra argument" expect 2 "unexpected argument 'b'" \
	nodefdctl policy show cli/enf b
check "enable with an argument" expect 2 "enable: unexpected argument 'now'" nodefdctl enable now
check "unknown option" expect 2 "unknown option '--bogus'" \
	nodefdctl policy set --bogus cli/enf enforce
check "daemon: unknown --output" expect 2 "--output 'xml': unknown" nodefdctl daemon --output xml
check "daemon: --policy and --no-policy" expect 2 "--policy and --no-policy" \
	nodefdctl daemon --policy /x --no-policy
check "unknown mode" expect 2 "unknown mode 'enforced' (enforce, audit or off)" \
	nodefdctl policy set cli/enf enforced
check "unknown mode for a rule" expect 2 "upgrade: unknown mode 'maybe'" \
	nodefdctl policy set cli/enf audit upgrade=maybe
check "unknown rule" expect 2 "unknown rule 'frob'" nodefdctl policy set cli/enf audit frob=off
check "path_read takes on or off" expect 2 "path_read takes on or off, not 'audit'" \
	nodefdctl policy set cli/enf audit path_read=audit
check "a rule given twice" expect 2 "'upgrade' given twice" \
	nodefdctl policy set cli/enf audit upgrade=off upgrade=enforce
check "errors are JSON under --json" expect 2 '{"error":"policy set: unknown mode' \
	nodefdctl -j policy set cli/enf enforced

long=$(head -c 5000 /dev/zero | tr '\0' a)
longname=$(head -c 300 /dev/zero | tr '\0' b)
check "an over-long cgroup path" expect 2 "cgroup path longer than 4095 bytes" \
	nodefdctl policy set "$long" enforce
check "an over-long path component" expect 2 "a component longer than 255 bytes" \
	nodefdctl policy set "cli/$longname" enforce
t_long_mode()
{
	local out

	expect 2 "unknown mode 'aaaa" nodefdctl policy set cli/enf "$long" || return 1
	out=$(nodefdctl policy set cli/enf "$long" 2>&1)
	[ "${#out}" -lt 300 ] || { echo "a message of ${#out} bytes"; return 1; }
}
check "an over-long mode: refused, quoted short" t_long_mode
check "a control character is quoted, not printed" expect 2 "unknown mode 'a\\x1bb'" \
	nodefdctl policy set cli/enf "$(printf 'a\033b')"

# ---- hostile input: cgroup paths ---------------------------------------------------------------

check "not under /sys/fs/cgroup" expect 2 "'/tmp': not under /sys/fs/cgroup" \
	nodefdctl policy set /tmp enforce
check "'..' in a cgroup path" expect 2 "'..' is not allowed" \
	nodefdctl policy set "$CG/cli/../cli/enf" enforce
check "an empty cgroup path" expect 2 "empty cgroup path" nodefdctl policy set "" enforce
check "a file, not a cgroup directory" expect 1 "not a cgroup (a cgroup is a directory)" \
	nodefdctl policy set cli/enf/cgroup.procs enforce
check "no such cgroup" expect 1 "$CG/cli/nope: no such cgroup; nothing changed" \
	nodefdctl policy set cli/nope enforce
mkdir "$CG/cli/gone" && rmdir "$CG/cli/gone"
check "a cgroup that vanished" expect 1 "$CG/cli/gone: no such cgroup" \
	nodefdctl policy set cli/gone audit
ln -s "$CG/cli/enf" "$T/cglink"
check "a symbolic link to a cgroup" expect 2 "not under /sys/fs/cgroup" \
	nodefdctl policy set "$T/cglink" audit
mkdir -p "$CG/cli/mnt"
if mount -t tmpfs none "$CG/cli/mnt" 2>/dev/null; then
	mkdir "$CG/cli/mnt/sub"
	ln -s "$CG/cli/enf" "$CG/cli/mnt/link"
	check "a path through a mount on a cgroup" expect 1 "crosses a mount point" \
		nodefdctl policy set cli/mnt/sub audit
	check "a symbolic link under a mount on a cgroup" expect 1 "$CG/cli/mnt/link: crosses a mount point" \
		nodefdctl policy set cli/mnt/link audit
	check "policy file: a section through a mount on a cgroup: rejected whole" \
		bad_file mnt '[default]\nmode = off\n[cgroup "cli/mnt/sub"]\nmode = off\n' \
		"3: $CG/cli/mnt/sub: crosses a mount point"
	umount "$CG/cli/mnt"
else
	skip "a path through a mount on a cgroup" "cannot mount tmpfs on a cgroup directory"
	skip "a symbolic link under a mount on a cgroup" "cannot mount tmpfs on a cgroup directory"
	skip "policy file: a section through a mount on a cgroup" "cannot mount tmpfs on a cgroup directory"
fi
rmdir "$CG/cli/mnt"
check "unset of a cgroup without a policy of its own" \
	expect 1 "has no policy of its own; nothing changed" nodefdctl policy unset cli/enf/child
check "unset --id of an id without a policy" expect 1 "has no policy of its own" \
	nodefdctl policy unset --id 999999999
check "unset --id that is no number" expect 2 "--id 'x1': not a cgroup id" \
	nodefdctl policy unset --id x1

# ---- hostile input: policy files ---------------------------------------------------------------

check "policy file: unknown key, with its line" \
	bad_file key '[cgroup "cli/enf"]\nmode = audit\nmod = enforce\n' "3: unknown key 'mod'"
check "policy file: unknown mode" \
	bad_file mode '[default]\nmode = enforced\n' "2: mode: unknown mode 'enforced'"
check "policy file: not KEY = VALUE" \
	bad_file syntax '[default]\nmode = audit\n\njust words\n' "4: not a [section], a KEY = VALUE line or a comment"
check "policy file: section without ']'" \
	bad_file bracket '[default\nmode = audit\n' "1: section header without ']'"
check "policy file: unknown section" \
	bad_file section '[foo]\nmode = audit\n' "1: unknown section '[foo]'"
check "policy file: a section twice" \
	bad_file twice '[cgroup "cli/aud"]\nmode = audit\n[cgroup "/sys/fs/cgroup/cli/aud/"]\nmode = off\n' \
	"3: cgroup 'cli/aud' already has a section at line 1"
check "policy file: a section without mode" \
	bad_file nomode '[cgroup "cli/aud"]\nupgrade = audit\n' "1: section without 'mode'"
check "policy file: a section without keys" \
	bad_file empty '[default]\n[cgroup "cli/aud"]\nmode = off\n' "1: section without keys"
check "policy file: a key outside a section" \
	bad_file outside 'mode = audit\n' "1: 'mode' outside a section"
check "policy file: a key twice" \
	bad_file keytwice '[default]\nmode = audit\nmode = off\n' "3: 'mode' given twice in this section (first at line 2)"
t_file_pending()
{
	printf '[default]\nmode = audit\n\n[cgroup "cli/nope"]\nmode = off\n' >"$T/nocg.conf"
	chmod 0644 "$T/nocg.conf"
	expect 0 "$CG/cli/nope (line 4, no such cgroup yet): upgrade=off" \
		nodefdctl policy check "$T/nocg.conf"
}
check "policy file: a cgroup that does not exist yet is valid, shown as pending" t_file_pending
check "policy file: '..' in a section" \
	bad_file dotdot '[cgroup "cli/../cli/enf"]\nmode = off\n' "1: 'cli/../cli/enf': '..' is not allowed"
# inih keeps 49 bytes of a section name: a cut "X/sub" would be X, which exists.
t_cut_section()
{
	local x=cli/x123456789x123456789x123456789x123456789x1234

	mkdir "$CG/$x" || return 1
	printf '[cgroup "%s/sub"]\nmode = off\n' "$x" >"$T/cut.conf"
	chmod 0644 "$T/cut.conf"
	expect 0 "$CG/$x/sub (line 1, no such cgroup yet)" nodefdctl policy check "$T/cut.conf"
	rc=$?
	rmdir "$CG/$x"
	return $rc
}
check "policy file: a long cgroup path is not cut where inih cuts it (49 bytes)" t_cut_section
check "policy file: an over-long path component" \
	bad_file longsec "[cgroup \"cli/enf/$longname\"]\nmode = off\n" "1: 'bbbbbbbb"

t_long_section_ok()
{
	local name=cli/enf/a-cgroup-name-well-beyond-the-forty-nine-bytes-inih-keeps

	mkdir -p "$CG/$name" || return 1
	printf '[cgroup "%s"]\nmode = audit\n' "$name" >"$T/longok.conf"
	chmod 0644 "$T/longok.conf"
	out=$(nodefdctl -j policy check "$T/longok.conf")
	echo "$out"
	printf '%s\n' "$out" |
		grep -qF "\"cgroup\":\"$CG/$name\",\"cgroup_id\":$(stat -c %i "$CG/$name"),"
	rc=$?
	rmdir "$CG/$name"
	return $rc
}
check "policy file: a long cgroup path is applied whole" t_long_section_ok
check "policy file: text after ']'" \
	bad_file after '[default] mode = audit\n' "1: text after the section header's ']'"
t_huge()
{
	head -c 2000000 /dev/zero | tr '\0' '#' >"$T/huge.conf"
	chmod 0644 "$T/huge.conf"
	expect 1 "huge.conf: larger than 1048576 bytes" nodefdctl policy load "$T/huge.conf"
}
check "policy file: huge" t_huge
t_long_line()
{
	{ printf '[default]\nmode = audit\n# '; head -c 5000 /dev/zero | tr '\0' x; echo; } >"$T/line.conf"
	chmod 0644 "$T/line.conf"
	expect 1 "line.conf:3: line longer than 4160 bytes" nodefdctl policy load "$T/line.conf"
}
check "policy file: an over-long line" t_long_line
check "policy file: a NUL byte" bad_file nul '[default]\nmode = au\0dit\n' "2: NUL byte"
t_writable()
{
	printf '[default]\nmode = off\n' >"$T/open.conf"
	chmod 0666 "$T/open.conf"
	expect 1 "writable by group or others (mode 0666)" nodefdctl policy load "$T/open.conf"
}
check "policy file: writable by others" t_writable
t_not_owned()
{
	printf '[default]\nmode = off\n' >"$T/owned.conf"
	chmod 0644 "$T/owned.conf"
	chown 65534 "$T/owned.conf"
	expect 1 "owned by uid 65534, not root" nodefdctl policy load "$T/owned.conf"
}
check "policy file: not root's" t_not_owned
check "policy file: a directory" expect 1 "$T: not a regular file" nodefdctl policy load "$T"
check "policy file: missing" expect 1 "$T/none.conf: no such file or directory" \
	nodefdctl policy load "$T/none.conf"
check "daemon: a bad policy file at start: exit 6, maps kept" \
	expect 6 "key.conf:3: unknown key 'mod'" nodefdctl daemon --policy "$T/key.conf"
# The daemon's settings (nodefd.conf(5)): rejected at start, exit 6, with file, line and reason.
daemon_conf()
{
	printf '%b' "$2" >"$T/$1.conf"
	chmod "${3:-0644}" "$T/$1.conf"
}
daemon_conf lisen '[metrics]\nlisen = 127.0.0.1:9847\n'
check "daemon settings: an unknown key: exit 6" expect 6 \
	"lisen.conf:2: unknown key 'lisen' in [metrics] (there is listen)" \
	nodefdctl daemon --no-policy --config "$T/lisen.conf"
daemon_conf sect '[metric]\nlisten = 127.0.0.1:9847\n'
check "daemon settings: an unknown section: exit 6" expect 6 \
	"sect.conf:2: unknown section [metric] (there is [metrics])" \
	nodefdctl daemon --no-policy --config "$T/sect.conf"
daemon_conf addr '[metrics]\nlisten = localhost:9847\n'
check "daemon settings: a listen address not numeric: exit 6" expect 6 \
	"[metrics] listen: 'localhost:9847': not ADDRESS:PORT" \
	nodefdctl daemon --no-policy --config "$T/addr.conf"
daemon_conf port '[metrics]\nlisten = 127.0.0.1:65536\n'
check "daemon settings: a port out of range: exit 6" expect 6 \
	"'127.0.0.1:65536': not ADDRESS:PORT" nodefdctl daemon --no-policy --config "$T/port.conf"
daemon_conf static '[metrics]\nlisten = [::1]:9847\n'
check "daemon settings: an endpoint this static build has not: exit 6, said" expect 6 \
	"built without the HTTP endpoint" nodefdctl daemon --no-policy --config "$T/static.conf"
daemon_conf open '[metrics]\n' 0666
check "daemon settings: writable by others: exit 6" expect 6 \
	"open.conf: writable by group or others (mode 0666)" \
	nodefdctl daemon --no-policy --config "$T/open.conf"
check "daemon settings: a named file missing: exit 6" expect 6 \
	"none.conf: no such file or directory" nodefdctl daemon --no-policy --config "$T/none.conf"
t_check_good()
{
	printf '[default]\nmode = audit\n[cgroup "cli/aud"]\nmode = off\nupgrade = audit\n' \
		>"$T/good.conf"
	chmod 0644 "$T/good.conf"
	expect 0 "good.conf: 2 policies, valid (nothing changed)" nodefdctl policy check "$T/good.conf"
}
check "policy check: a good file changes nothing" t_check_good

# ---- hostile input: privilege, ABI -----------------------------------------------------------

check "policy set without privilege" expect_as_nobody 1 "policy set: permission denied: needs root" \
	nodefdctl policy set cli/enf off
check "policy load without privilege" expect_as_nobody 1 "permission denied: needs root" \
	nodefdctl policy load "$T/key.conf"
check "disable without privilege" expect_as_nobody 1 "disable: permission denied: needs root" \
	nodefdctl disable
check "daemon without privilege" expect_as_nobody 1 "daemon: permission denied: needs root" \
	nodefdctl daemon
check "unload without privilege" expect_as_nobody 1 "permission denied" nodefdctl unload
check "status without privilege: exit 5" expect_as_nobody 5 "status: $PINS: permission denied" \
	nodefdctl status
t_status_quiet_nobody()
{
	local out rc

	out=$(su -p -s /bin/sh nobody -c 'exec "$0" status --quiet' "$(command -v nodefdctl)" 2>&1)
	rc=$?
	[ "$rc" = 5 ] && [ -z "$out" ] || { echo "exit $rc, want 5; output: $out"; return 1; }
}
check "status --quiet without privilege: exit 5, silent" t_status_quiet_nobody

t_abi()
{
	local before after rc=0

	before=$(snap)
	rm "$PINS/abi_version" && ln -s 999 "$PINS/abi_version" || return 1
	# Not the daemon: it replaces such pins (t_replace).
	for verb in "status" "policy show" "policy set cli/enf off" "enable" "disable" "events"; do
		# shellcheck disable=SC2086
		out=$(nodefdctl $verb 2>&1)
		r=$?
		echo "$verb: exit $r: $out" | cut -c1-200
		[ "$r" = 1 ] && printf '%s\n' "$out" | grep -qF "was made for abi 999, this nodefdctl reads abi" ||
			rc=1
	done
	rm "$PINS/abi_version"
	out=$(nodefdctl policy set cli/enf off 2>&1)
	r=$?
	echo "no abi_version: exit $r: $out"
	[ "$r" = 1 ] && printf '%s\n' "$out" | grep -qF "abi_version: missing" || rc=1
	ln -s "$(nodefdctl -j --version | sed -n 's/.*"abi_version":\([0-9]*\).*/\1/p')" \
		"$PINS/abi_version"
	after=$(snap)
	[ "$before" = "$after" ] || { printf 'changed:\n%s\n%s\n' "$before" "$after"; rc=1; }
	return $rc
}
check "pins of another ABI: every verb refuses them, nothing touched" t_abi

# ---- the daemon --------------------------------------------------------------------------------

policy_file "$T/policy.conf" <<EOF
# nodefd policy for the CLI tests
[default]
mode = enforce

[cgroup "cli/enf"]
mode = enforce

[cgroup "$CG/cli/aud"]
mode = audit

[cgroup "cli/off"]
mode = off

# not there yet: applied when it is made
[cgroup "cli/later"]
mode = audit
EOF

drain
nodefdctl policy set cli/aud enforce >/dev/null
start_daemon d1 --policy "$T/policy.conf"
check "daemon: adopts the pins, applies the file, says what it missed" sh -c "
	cat '$T/d1.out'
	grep -qF '\"type\":\"start\"' '$T/d1.out' &&
	grep -qF '\"pins\":\"adopted\"' '$T/d1.out' &&
	grep -qF '\"type\":\"policy\",\"file\":\"$T/policy.conf\",\"result\":\"applied\",\"policies\":4,\"pending\":1,\"pending_cgroups\":[\"$CG/cli/later\"]' '$T/d1.out' &&
	grep -qF '\"type\":\"missed\",\"events_waiting\":0,\"events_dropped\":0' '$T/d1.out'"
check "daemon: the file replaced the policy set by hand (cli/aud audits)" \
	expect 0 '"source":"own","from":"'"$CG"'/cli/aud","from_id":'"$(stat -c %i $CG/cli/aud)"',"upgrade":"audit"' \
	nodefdctl -j policy show cli/aud
t_later()
{
	local id1 id2 out pid

	mkdir "$CG/cli/later" || return 1
	wait_for "$T/d1.out" '"result":"reapplied"' || return 1
	grep -F '"result":"reapplied"' "$T/d1.out" | tail -n 1
	id1=$(stat -c %i "$CG/cli/later")
	nodefdctl -j policy show cli/later | grep -qF '"source":"own","from":"'"$CG/cli/later\",\"from_id\":$id1," ||
		{ echo "cli/later has no policy of its own"; return 1; }
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/later" try)
	printf '%s\n' "$out" | grep -q 'ok=1 eacces=0' || { echo "refused in cli/later"; return 1; }
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	wait_for "$T/d1.out" "\"pid\":$pid," || return 1
	grep -F "\"pid\":$pid," "$T/d1.out" | grep -qF '"action":"audit"' ||
		{ echo "cli/later does not audit"; return 1; }
	# Made again, it is another cgroup, with another id.
	rmdir "$CG/cli/later" && mkdir "$CG/cli/later" || return 1
	id2=$(stat -c %i "$CG/cli/later")
	echo "cli/later: id $id1, made again: id $id2"
	i=0
	until nodefdctl -j policy show cli/later |
		grep -qF "\"source\":\"own\",\"from\":\"$CG/cli/later\",\"from_id\":$id2,"; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || { echo "id $id2 never got the policy"; return 1; }
		sleep 0.1
	done
	grep -F '"result":"reapplied"' "$T/d1.out" | tail -n 1
	! nodefdctl -j policy show | grep -q "\"cgroup_id\":$id1," || { echo "the dead id stays"; return 1; }
}
check "daemon: a section's cgroup made later, and made again, gets its policy" t_later
check "daemon: a second daemon is refused" expect 1 "daemon: already running as pid $DAEMON_PID" \
	nodefdctl daemon --policy "$T/policy.conf"
check "status: the daemon runs" expect 0 "\"daemon_pid\":$DAEMON_PID," nodefdctl -j status

t_daemon_event()
{
	local out pid

	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try)
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	wait_for "$T/d1.out" "\"pid\":$pid," || return 1
	grep -F "\"pid\":$pid," "$T/d1.out" |
		grep -qF "\"action\":\"enforce\",\"rule\":\"upgrade\"" &&
		grep -F "\"pid\":$pid," "$T/d1.out" | grep -qF "\"cgroup_path\":\"$CG/cli/enf\""
}
check "daemon: streams the event as JSON with the cgroup path" t_daemon_event

stop_daemon KILL
t_away()
{
	local out

	out=$(reopen-probe -u "$TRY_UID" -n 3 "$VICTIM" "move:$CG/cli/enf" try)
	echo "$out"
	printf '%s\n' "$out" | grep -q 'ok=0 eacces=3' || return 1
	printf '%s\n' "$out" | sed -n 's/^pid=//p' >"$T/away.pid"
}
check "daemon killed with -9: the attack is still refused" t_away
before_restart=$(counter denied upgrade)
start_daemon d2 --policy "$T/policy.conf"
t_adopt()
{
	local pid n after

	pid=$(cat "$T/away.pid")
	cut -c1-300 "$T/d2.out"
	grep -qF '"pins":"adopted"' "$T/d2.out" || { echo "did not adopt"; return 1; }
	n=$(grep -F "\"pid\":$pid," "$T/d2.out" | grep -cF '"backlog":true')
	[ "$n" = 3 ] || { echo "$n backlog events of pid $pid, want 3"; return 1; }
	grep -qF '"type":"missed","events_waiting":3,"events_dropped":0' "$T/d2.out" ||
		{ echo "no missed record of 3"; return 1; }
	after=$(counter denied upgrade)
	echo "denied upgrade before the restart $before_restart, after $after"
	[ "$before_restart" -gt 0 ] && [ "$after" = "$before_restart" ]
}
check "daemon restarted: adopts, prints the 3 events it missed and says so, counters go on" t_adopt

t_hup()
{
	sed 's/mode = audit/mode = enforce/' "$T/policy.conf" >"$T/policy.new"
	cat "$T/policy.new" >"$T/policy.conf"
	kill -HUP "$DAEMON_PID"
	wait_for "$T/d2.out" '"result":"applied"' 2 || return 1
	nodefdctl -j policy show cli/aud | grep -qF '"upgrade":"enforce"'
}
check "daemon: SIGHUP applies the changed file (cli/aud now enforced)" t_hup
t_hup_bad()
{
	local before after

	before=$(snap)
	printf '[default]\nmode = audit\nbogus = 1\n' >"$T/policy.conf"
	kill -HUP "$DAEMON_PID"
	wait_for "$T/d2.out" '"result":"rejected"' || return 1
	grep -F '"result":"rejected"' "$T/d2.out"
	grep -F '"result":"rejected"' "$T/d2.out" | grep -qF "policy.conf:3: unknown key 'bogus'" ||
		return 1
	after=$(snap)
	[ "$before" = "$after" ] || { echo "the maps changed"; return 1; }
	kill -0 "$DAEMON_PID" || { echo "the daemon died"; return 1; }
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/aud" try)
	printf '%s\n' "$out" | grep -q 'eacces=1'
}
check "daemon: SIGHUP with a bad file: rejected with file and line, policy kept" t_hup_bad
# What the daemon did with its file, for Prometheus: its start's and SIGHUP's reads, the last rejected.
t_policy_metrics()
{
	local out ok bad gen ref

	out=$(nodefdctl metrics) || return 1
	printf '%s\n' "$out" | grep '^nodefd_policy_'
	ok=$(printf '%s\n' "$out" | sed -n 's/^nodefd_policy_loads_total{result="applied"} //p')
	bad=$(printf '%s\n' "$out" | sed -n 's/^nodefd_policy_loads_total{result="rejected"} //p')
	gen=$(printf '%s\n' "$out" | sed -n 's/^nodefd_policy_generation //p')
	ref=$(printf '%s\n' "$out" | sed -n 's/^nodefd_policy_refreshes_total //p')
	[ "$ok" = 2 ] && [ "$bad" = 1 ] && [ -n "$ref" ] && [ "$gen" = $((ok + ref)) ] &&
		printf '%s\n' "$out" | grep -qx 'nodefd_policy_last_load_successful 0' &&
		printf '%s\n' "$out" | grep -q '^nodefd_policy_last_applied_timestamp_seconds [1-9]'
}
check "metrics: the daemon's policy loads (2 applied, 1 rejected, the last), generation" t_policy_metrics
cat "$T/policy.new" >"$T/policy.conf"

# A ring buffer filled while no daemon reads: what waited plus what was dropped is every event.
# Events are rate-limited per source (uid, cgroup, what was decided), and the first of each
# source in a second is always sent: FLOOD sources of one refusal each fill the ring (about 650
# events), from FLOOD cgroups below cli/enf.
FLOOD=800
flood_cgroups() { for i in $(seq "$FLOOD"); do mkdir -p "$CG/cli/enf/f$i" || return 1; done; }
# flood: one refused reopen from each of the FLOOD cgroups, in one process.
flood()
{
	local i

	set --
	for i in $(seq "$FLOOD"); do
		set -- "$@" "move:$CG/cli/enf/f$i" try
	done
	reopen-probe -u "$TRY_UID" "$VICTIM" "$@" | grep -c 'ok=0 eacces=1 '
}
stop_daemon KILL
t_flood()
{
	local n

	flood_cgroups || return 1
	n=$(flood)
	echo "$n of $FLOOD refused"
	[ "$n" = "$FLOOD" ]
}
check "daemon away: $FLOOD refused reopens, from as many cgroups" t_flood
drop0=$(nodefdctl -j status | field events_dropped_unreported)
start_daemon d3 --policy "$T/policy.conf"
t_dropped()
{
	local line w d

	line=$(grep -F '"type":"missed"' "$T/d3.out")
	echo "$line"
	w=$(printf '%s\n' "$line" | field events_waiting)
	d=$(printf '%s\n' "$line" | field events_dropped)
	echo "waiting $w + dropped $d, unreported before $drop0"
	[ "$d" -gt 0 ] && [ $((w + d)) -ge "$FLOOD" ] && [ "$d" = "$drop0" ] || return 1
	nodefdctl -j status | grep -qF '"events_dropped_unreported":0'
}
check "daemon restarted: reports the events waiting and those dropped (sum $FLOOD)" t_dropped
t_dropped_live()
{
	local line d

	kill -STOP "$DAEMON_PID"
	sleep 1	# a new second: each source's first event is sent again
	flood >/dev/null
	kill -CONT "$DAEMON_PID"
	wait_for "$T/d3.out" '"type":"dropped"' || return 1
	line=$(grep -F '"type":"dropped"' "$T/d3.out")
	echo "$line"
	d=$(printf '%s\n' "$line" | field events_dropped)
	[ "$d" -gt 0 ] && nodefdctl -j status | grep -qF '"events_dropped_unreported":0'
}
check "daemon: reports drops as they happen while it runs" t_dropped_live

# 20 refusals of one source in a second: 8 events sent, the rest held back by the rate limit.
# The source sends nothing more, yet the daemon reports them: a summary record within a tick.
t_heldback_live()
{
	local start out pid id sent held i

	sleep 1	# a new second
	start=$(wc -l <"$T/d3.out")
	set --
	for i in $(seq 20); do
		set -- "$@" try
	done
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" "$@" 2>&1)
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	id=$(stat -c %i "$CG/cli/enf")
	wait_for "$T/d3.out" '"type":"suppressed"' || return 1
	sleep 1.2	# one more tick: nothing is said twice
	tail -n +"$((start + 1))" "$T/d3.out" >"$T/d3.new"
	grep -F '"type":"suppressed"' "$T/d3.new"
	sent=$(grep -F '"type":"event"' "$T/d3.new" | grep -cF "\"pid\":$pid,")
	held=0
	for i in $(grep -F '"type":"suppressed"' "$T/d3.new" | grep -F "\"cgroup_id\":$id," |
		   field count); do
		held=$((held + i))
	done
	echo "pid $pid: $sent events sent, $held in summary records"
	[ "$sent" -ge 1 ] && [ "$sent" -lt 20 ] && [ $((sent + held)) = 20 ]
}
check "daemon: what the rate limit held back comes in a summary record, once" t_heldback_live

stop_daemon TERM
t_term()
{
	echo "daemon exit $DAEMON_RC"
	tail -n 1 "$T/d3.out"
	[ "$DAEMON_RC" = 0 ] && tail -n 1 "$T/d3.out" | grep -qF '"type":"stop"' &&
		[ -d "$PINS/links" ] && attack cli/enf 1 enforce
}
check "daemon: SIGTERM ends it with exit 0, enforcement stays" t_term

t_text_output()
{
	nodefdctl daemon --no-policy --output text >"$T/d4.out" 2>&1 &
	DAEMON_PID=$!
	wait_for "$T/d4.out" "while no daemon ran" || return 1
	reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try >/dev/null
	wait_for "$T/d4.out" " enforce upgrade fd " || return 1
	stop_daemon INT
	cat "$T/d4.out"
	[ "$DAEMON_RC" = 0 ] && grep -q "cgroup_path=$CG/cli/enf " "$T/d4.out"
}
check "daemon --output text: readable lines, SIGINT ends it" t_text_output

t_syslog_output()
{
	local slog

	syslogd -n -O "$T/syslog" >/dev/null 2>&1 &
	slog=$!
	sleep 0.5
	nodefdctl daemon --no-policy --output syslog >"$T/d7.out" 2>&1 &
	DAEMON_PID=$!
	wait_for "$T/syslog" "while no daemon ran" || { kill "$slog"; return 1; }
	reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try >/dev/null
	wait_for "$T/syslog" " enforce upgrade fd " || { kill "$slog"; return 1; }
	stop_daemon TERM
	kill "$slog"
	wait "$slog" 2>/dev/null
	cat "$T/syslog" "$T/d7.out" | cut -c1-200
	[ "$DAEMON_RC" = 0 ] && grep -q "nodefd\[[0-9]*\]: .* enforce upgrade fd .* cgroup_path=$CG/cli/enf " "$T/syslog" &&
		[ ! -s "$T/d7.out" ]
}
if command -v syslogd >/dev/null; then
	check "daemon --output syslog: the lines go to syslog, nothing to stdout" t_syslog_output
else
	skip "daemon --output syslog" "no syslogd in the guest"
fi

# ---- policy by pattern ---------------------------------------------------------------------

mkdir -p "$CG/cli/pat/app-1.scope"
policy_file "$T/pat.conf" <<EOF
[cgroup "cli/pat"]
mode = enforce

[cgroup "cli/pat/app-*.scope"]
mode = audit

# more literal characters than the one above: wins where both match
[cgroup "cli/pat/app-special-*.scope"]
mode = off

[cgroup "cli/pat/**/leaf-[0-9]"]
mode = audit
upgrade = off

# exact beats every pattern
[cgroup "cli/pat/app-exact.scope"]
mode = enforce
EOF
check "policy check: a pattern says how many cgroups it rules now" \
	expect 0 "$CG/cli/pat/app-*.scope (line 4, pattern, 1 cgroup now): upgrade=audit" \
	nodefdctl policy check "$T/pat.conf"
check "policy check --json: a pattern's entry" \
	expect 0 '"cgroup":"'"$CG"'/cli/pat/**/leaf-[0-9]","cgroup_id":null,"line":11,"upgrade":"off","append":"audit","ancestors":"audit","reach":"audit","path_read":false,"strict":false,"pattern":true,"cgroups":0}' \
	nodefdctl -j policy check "$T/pat.conf"
t_typo_warned()
{
	local out

	printf '[cgroup "cli/pat/app-*.scope"]\nmode = audit\n[cgroup "cli/pat/app-9.scope"]\nmode = off\n[cgroup "cli/pat/aap-1.scope"]\nmode = off\n' >"$T/typo.conf"
	chmod 0644 "$T/typo.conf"
	out=$(nodefdctl policy check "$T/typo.conf" 2>&1) || return 1
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -qF "typo.conf:5: $CG/cli/pat/aap-1.scope: no such cgroup, and no pattern of the file matches it" &&
		! printf '%s\n' "$out" | grep -qF "typo.conf:3:"
}
check "policy check: warns of a missing cgroup no pattern matches (a typo), not of one a pattern expects" \
	t_typo_warned
check "policy file: '**' inside a component" \
	bad_file dstar '[cgroup "cli/a**"]\nmode = audit\n' "1: 'cli/a**': '**' must be a component of its own"
check "policy file: a '[' never closed" \
	bad_file bracket '[cgroup "cli/[ab"]\nmode = audit\n' "1: 'cli/[ab': a '[' without its ']'"

start_daemon d8 --policy "$T/pat.conf"
# show_own CGROUP MODE: CGROUP gets a policy of its own, whose upgrade rule is MODE, within 20 s.
show_own()
{
	local i=0 id

	id=$(stat -c %i "$CG/$1") || return 1
	until nodefdctl -j policy show "$1" |
		grep -qF "\"source\":\"own\",\"from\":\"$CG/$1\",\"from_id\":$id,\"upgrade\":\"$2\""; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || { nodefdctl -j policy show "$1"; echo "$1: no own policy upgrade=$2"; return 1; }
		sleep 0.1
	done
}
t_pattern_later()
{
	local out pid

	mkdir "$CG/cli/pat/app-2.scope" || return 1
	show_own cli/pat/app-2.scope audit || return 1
	grep -F '"result":"reapplied"' "$T/d8.out" | tail -n 1 | cut -c1-300
	out=$(nodefdctl policy show --file "$T/pat.conf" cli/pat/app-2.scope)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -qF "section: [cgroup \"cli/pat/app-*.scope\"] at $T/pat.conf:4: the one pattern matching it" ||
		return 1
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/pat/app-2.scope" try)
	printf '%s\n' "$out" | grep -q 'ok=1 eacces=0' || { echo "refused in app-2.scope"; return 1; }
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	wait_for "$T/d8.out" "\"pid\":$pid," || return 1
	grep -F "\"pid\":$pid," "$T/d8.out" | grep -qF '"action":"audit"'
}
check "daemon: a cgroup made after the start that a pattern matches gets its policy, and audits" \
	t_pattern_later
t_pattern_specific()
{
	local out

	mkdir "$CG/cli/pat/app-special-1.scope" "$CG/cli/pat/app-exact.scope" || return 1
	show_own cli/pat/app-special-1.scope off || return 1
	show_own cli/pat/app-exact.scope enforce || return 1
	out=$(nodefdctl policy show --file "$T/pat.conf" cli/pat/app-special-1.scope)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -qF "at $T/pat.conf:8: the most specific of the patterns matching it" ||
		return 1
	out=$(nodefdctl -j policy show --file "$T/pat.conf" cli/pat/app-exact.scope)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -qF '"section":{"file":"'"$T"'/pat.conf","line":16,"path":"cli/pat/app-exact.scope","pattern":false,"matching":2,"in_effect":true}'
}
check "daemon: the most specific pattern wins, and a section naming the cgroup beats them all" \
	t_pattern_specific
t_pattern_deep()
{
	mkdir -p "$CG/cli/pat/x/y" || return 1
	sleep 0.3
	mkdir "$CG/cli/pat/x/y/leaf-7" "$CG/cli/pat/x/leaf-x" || return 1
	show_own cli/pat/x/y/leaf-7 off || return 1
	# leaf-x is no match: it follows cli/pat's
	nodefdctl -j policy show cli/pat/x/leaf-x |
		grep -qF "\"source\":\"inherited\",\"from\":\"$CG/cli/pat\","
}
check "daemon: '**' matches at any depth, in directories made after the start" t_pattern_deep
t_pattern_gone()
{
	local id i=0

	id=$(stat -c %i "$CG/cli/pat/app-2.scope")
	rmdir "$CG/cli/pat/app-2.scope" || return 1
	while nodefdctl -j policy show | grep -q "\"cgroup_id\":$id,"; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || { echo "the dead id $id stays"; return 1; }
		sleep 0.1
	done
}
check "daemon: a matched cgroup removed: its id leaves the map" t_pattern_gone
stop_daemon TERM
rmdir "$CG/cli/pat/x/y/leaf-7" "$CG/cli/pat/x/y" "$CG/cli/pat/x/leaf-x" "$CG/cli/pat/x" \
	"$CG/cli/pat/app-special-1.scope" "$CG/cli/pat/app-exact.scope" "$CG/cli/pat/app-1.scope" \
	"$CG/cli/pat" 2>/dev/null

# ---- events while the daemon runs ----------------------------------------------------------

start_daemon d9 --no-policy
t_feed_readers()
{
	local out pid r1 r2 r3 rc1 rc2 rc3

	nodefdctl -j events --count 1 --timeout 60 --cgroup cli/enf >"$T/r1.out" 2>&1 &
	r1=$!
	nodefdctl events --count 1 --timeout 60 --action enforce >"$T/r2.out" 2>&1 &
	r2=$!
	nodefdctl events --count 1 --timeout 8 --cgroup cli/aud >"$T/r3.out" 2>&1 &
	r3=$!
	sleep 2	# each is taken once the daemon's hello came: before the attack
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try)
	pid=$(printf '%s\n' "$out" | sed -n 's/^pid=//p')
	wait "$r1"
	rc1=$?
	wait "$r2"
	rc2=$?
	wait "$r3"
	rc3=$?
	wait_for "$T/d9.out" "\"pid\":$pid," || return 1
	echo "readers: exit $rc1 $rc2 $rc3"
	cut -c1-200 "$T/r1.out" "$T/r2.out" "$T/r3.out"
	[ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ "$rc3" = 1 ] &&
		grep -qF "\"pid\":$pid," "$T/r1.out" && grep -q "pid=$pid " "$T/r2.out" &&
		! grep -q "pid=$pid " "$T/r3.out" && ! grep -q "one of you only" "$T/r1.out" "$T/r2.out"
}
check "events while the daemon runs: two readers and the daemon all get the event, filters apply" \
	t_feed_readers
t_feed_root_only()
{
	ls -l /run/nodefd/events.sock
	[ "$(stat -c '%a %u %F' /run/nodefd/events.sock)" = "600 0 socket" ]
}
check "events while the daemon runs: the feed is root's alone (mode 0600)" t_feed_root_only
t_feed_full()
{
	local pids= i out rc

	for i in $(seq 16); do
		nodefdctl events --timeout 60 >/dev/null 2>&1 &
		pids="$pids $!"
	done
	sleep 3
	out=$(nodefdctl events --timeout 1 2>&1)
	rc=$?
	echo "the 17th reader: exit $rc: $out"
	kill $pids 2>/dev/null
	wait $pids 2>/dev/null
	[ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q "did not take this reader" || return 1
	# The places of readers gone are taken again.
	out=$(nodefdctl events --timeout 1 2>&1)
	rc=$?
	echo "a reader after they left: exit $rc $out"
	[ "$rc" = 0 ]
}
check "events while the daemon runs: a 17th reader is refused, never reads the ring buffer beside the daemon" \
	t_feed_full
stop_daemon TERM
check "the daemon stopped: its feed socket is gone" test ! -e /run/nodefd/events.sock

t_daemon_schema()
{
	cat "$T"/d*.out 2>/dev/null | json_schema_ok
}
check "every JSON record of the daemons carries \"schema\":2" t_daemon_schema

t_unload_under_daemon()
{
	start_daemon d5 --no-policy
	nodefdctl unload || return 1
	wait "$DAEMON_PID"
	DAEMON_RC=$?
	DAEMON_PID=
	tail -n 2 "$T/d5.out"
	[ "$DAEMON_RC" = 0 ] && grep -qF '"reason":"unloaded"' "$T/d5.out"
}
check "unload while the daemon runs: the daemon sees it and exits 0" t_unload_under_daemon

t_daemon_loads()
{
	local out

	[ ! -e "$PINS" ] || { echo "$PINS is there"; return 1; }
	# This daemon loads the programs, canary and all: as long as `nodefdctl load` takes, which
	# under TCG on a busy host can be most of a minute.
	WAIT_SECONDS=300
	start_daemon d6 --policy "$T/policy.conf"
	WAIT_SECONDS=
	head -n 3 "$T/d6.out"
	grep -qF '"pins":"loaded"' "$T/d6.out" || return 1
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try)
	printf '%s\n' "$out" | grep -q 'eacces=1' || return 1
	stop_daemon KILL
	out=$(reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try)
	printf '%s\n' "$out" | grep -q 'eacces=1'
}
check "daemon with nothing loaded: loads, and enforcement outlives it" t_daemon_loads

# An upgrade: pins of another ABI and object, as an older package leaves them (made so by
# rewriting the pins' record of what made them). The daemon puts its own programs in their
# place: a reopen tried all along is never allowed, every old program goes, the policy file's
# policies and the switch's state come across.
fake_old_pins()
{
	ln -sfn 7 "$PINS/abi_version" && ln -sfn fnv1a64-0123456789abcdef "$PINS/object"
}
prog_ids()
{
	nodefdctl -j status | grep -o '"prog_id":[0-9]*' | sort | paste -sd ' '
}
replace_run()
{
	local ids0 ids1 pol0 pol1 n lapses probes

	ids0=$(prog_ids)
	pol0=$(nodefdctl -j policy show | sed 's/"map_id":[0-9]*//')
	fake_old_pins || return 1
	rm -f "$T/replace.stop"
	(while [ ! -e "$T/replace.stop" ]; do
		reopen-probe -u "$TRY_UID" "$VICTIM" "move:$CG/cli/enf" try | grep '^try'
	done) >"$T/replace.probe" 2>&1 &
	probes=$!
	WAIT_SECONDS=300
	start_daemon d7 --policy "$T/policy.conf"
	WAIT_SECONDS=
	touch "$T/replace.stop"
	wait "$probes"
	ids1=$(prog_ids)
	pol1=$(nodefdctl -j policy show | sed 's/"map_id":[0-9]*//')
	n=$(grep -c . "$T/replace.probe")
	lapses=$(grep -vc 'ok=0 eacces=1' "$T/replace.probe")
	head -n 1 "$T/d7.out" | cut -c1-400
	echo "probes during the replacement: $n, not refused: $lapses; programs $ids0 -> $ids1"
	# Every old program goes: as many as were attached (fewer where the hook at the jump
	# leaves the guard's programs out).
	grep -qF "\"pins\":\"replaced\",\"replaced\":{\"abi_version\":7,\"object\":\"fnv1a64-0123456789abcdef\",\"programs_gone\":$(echo $ids0 | wc -w)," "$T/d7.out" ||
		return 1
	[ "$n" -gt 0 ] && [ "$lapses" -eq 0 ] || return 1
	for id in $ids0; do
		case " $ids1 " in *" $id "*) echo "old $id still attached"; return 1 ;; esac
	done
	[ "$pol0" = "$pol1" ] || { printf 'policies before: %s\nafter: %s\n' "$pol0" "$pol1"; return 1; }
	nodefdctl status -q
}
# check runs each test in a subshell: the daemon ends with the test that started it.
t_replace()
{
	local rc

	replace_run
	rc=$?
	stop_daemon TERM
	[ "$rc" = 0 ] && [ "$DAEMON_RC" = 0 ]
}
check "daemon over pins of another ABI: replaces them, no reopen allowed meanwhile, policies kept" t_replace
t_replace_disabled()
{
	nodefdctl disable >/dev/null || { echo "disable failed"; return 1; }
	fake_old_pins || { echo "cannot relabel the pins"; return 1; }
	WAIT_SECONDS=300
	start_daemon d10 --policy "$T/policy.conf"
	WAIT_SECONDS=
	grep -qF '"pins":"replaced"' "$T/d10.out" || {
		echo "no replacement in d10.out ($(wc -c <"$T/d10.out") bytes):"
		head -n 5 "$T/d10.out"
		kill -0 "$DAEMON_PID" 2>/dev/null && echo "the daemon runs" || echo "the daemon is gone"
		stop_daemon
		echo "its exit status: $DAEMON_RC"
		return 1
	}
	status_is 3 || { stop_daemon; return 1; }
	nodefdctl enable >/dev/null || { stop_daemon; return 1; }
	stop_daemon TERM
	status_is 0
}
check "daemon over pins of another ABI, disabled: the new programs stay disabled" t_replace_disabled

t_unload()
{
	nodefdctl unload || return 1
	ls /sys/fs/bpf
	[ ! -e "$PINS" ] || return 1
	for p in /sys/fs/bpf/nodefd*; do
		[ -e "$p" ] && { echo "left behind: $p"; return 1; }
	done
	return 0
}
check "unload leaves no pin behind" t_unload
check "unload again: not loaded" expect 1 "unload: not loaded" nodefdctl unload
check "policy show when not loaded" expect 1 "not loaded (no $PINS)" nodefdctl policy show
check "status --quiet after unload: exit 4" status_is 4 --quiet
check "metrics after unload: nodefd_loaded 0, exit 0" \
	sh -c 'out=$(nodefdctl metrics) && printf "%s\n" "$out" | grep -qx "nodefd_loaded 0" && ! printf "%s\n" "$out" | grep -q "^nodefd_checked_total"'
t_variant()
{
	local want=nodefd_inode_follow_link out

	# bpf_rdonly_cast() came with 6.2.
	case $(uname -r) in 5.* | 6.[01].*) ;; *) want=nodefd_inode_follow_link___cast ;; esac
	out=$(nodefdctl -j load) || return 1
	nodefdctl unload >/dev/null || return 1
	printf '%s\n' "$out" |
		grep -qF "\"name\":\"nodefd_inode_follow_link\",\"program\":\"$want\"" ||
		{ echo "$out"; return 1; }
	[ "$(printf '%s\n' "$out" | grep -o '"program":' | wc -l)" = "$nprogs" ]
}
check "load --json: the link hook's program for this kernel, $nprogs links" t_variant

# The verifier gives up at 1 000 000 instructions walked (BPF_COMPLEXITY_LIMIT_INSNS); each
# program keeps half of that in hand on this kernel, so that a kernel whose verifier walks
# further fails here first, not at a user's load.
t_verifier_headroom()
{
	local out n name insns over=0

	out=$(nodefdctl -j load) || return 1
	nodefdctl unload >/dev/null || return 1
	n=0
	for p in $(printf '%s\n' "$out" | grep -o '"program":"[a-z_]*"[^}]*"verified_insns":[0-9]*' |
		sed 's/"program":"\([a-z_]*\)".*"verified_insns":\([0-9]*\)/\1=\2/'); do
		name=${p%=*} insns=${p#*=}
		n=$((n + 1))
		echo "# $name: $insns instructions verified"
		[ "$insns" -le 500000 ] || { echo "$name: $insns > 500000"; over=1; }
	done
	[ "$n" = "$nprogs" ] || { echo "verified_insns for $n programs, want $nprogs"; return 1; }
	[ "$over" = 0 ]
}
check "load --json: every program verified in at most half the verifier's limit" t_verifier_headroom

for i in $(seq "$FLOOD"); do rmdir "$CG/cli/enf/f$i" 2>/dev/null; done
rmdir "$CG/cli/enf/child" "$CG/cli/enf" "$CG/cli/aud" "$CG/cli/off" "$CG/cli/pr" "$CG/cli/st" "$CG/cli/later" \
	"$CG/cli" 2>/dev/null
done_testing
