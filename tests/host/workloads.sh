#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/workloads.sh: the real-workload suite (tests/system/workloads.sh) on a real Debian
# system, with nodefd on and off, compared case by case. One boot per (kernel, on/off): every
# case runs in it, and the unit's life (stop, start, reload, restart, kill -9, upgrade,
# removal) ends the "on" boot, nodefdctl load's timing the "off" one; the DaemonSet ends
# Debian 13's "off" boot and has one of its own on Debian 12's kernel (below). TAP on stdout;
# then a table of every case on and off, the boot times and the deny events each case caused.
#
# WORKLOAD_KERNELS="debian12 debian13" (the default) picks the kernels; NODEFD_DEB a package
# (default: make deb). Each boot takes 4-8 minutes under TCG.
#
#   tests/host/workloads.sh            every boot, one after another, then the report
#   tests/host/workloads.sh runs       the boots' names, one a line
#   tests/host/workloads.sh boot RUN   one boot (tests/run runs them side by side), its log in
#                                      WORKLOAD_LOGS (default build/test-logs)
#   tests/host/workloads.sh report     the TAP and the table of the boots whose logs are there
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodefd-workloads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${WORKLOAD_LOGS:-build/test-logs}
mkdir -p "$logdir"
kernels=${WORKLOAD_KERNELS:-debian12 debian13}

# all_runs: the boots, in the report's order. The DaemonSet under podman (tests/system/kube.sh)
# ends Debian 13's "off" boot, where no unit runs nodefd and the pod is the daemon. On Debian
# 12's kernel it has a boot of its own, of Debian 13's userland with Debian 12's kernel
# ("debian12-kube"): Debian 12's podman (4.3) plays no DaemonSet.
all_runs()
{
	local k

	for k in $kernels; do
		echo "$k-on"
		echo "$k-off"
		[ "$k" != debian12 ] || echo "$k-kube"
	done
}

# package: NODEFD_DEB, made when not given.
package()
{
	local deb

	deb=${NODEFD_DEB:-$(make --no-print-directory BUILD="${NODEFD_BUILD:-build}" deb | tail -n 1)}
	[ -f "$deb" ] || { echo "make deb: no package ($deb)" >&2; return 1; }
	export NODEFD_DEB=$deb
}

# boot RUN: one boot of a Debian system; the guest's output in workloads-RUN.log, vmtest's in
# workloads-RUN.err, "EXIT SECONDS" in workloads-RUN.rc. The DaemonSet's image is built in the
# guest from the package and a local base (dist/image/base-tarball).
boot()
{
	local run=$1 k=${1%-*} mode=${1##*-} out=$logdir/workloads-$1 base start rc
	local opts adds cmd kube_adds=()

	rm -f "$out.log" "$out.err" "$out.rc"
	package 2>"$out.err" || { echo "1 0" >"$out.rc"; return 1; }
	if [ "$run" = debian13-off ] || [ "$mode" = kube ]; then
		if ! base=$(dist/image/base-tarball 2>>"$out.err"); then
			echo "dist/image/base-tarball failed: no local base for the DaemonSet's image" >>"$out.err"
			echo "1 0" >"$out.rc"
			return 1
		fi
		ln -s "$base" "$tmp/base.tar"
		kube_adds=(--add="$tmp/base.tar" --add=dist/image/Containerfile --add=dist/image/build
			--add=dist/image/nodefd-policy-watch --add=dist/kubernetes/nodefd-daemonset.yaml
			--add=tests/system/kube.sh)
	fi
	opts=(--kernel="$k" --nodefd="$mode")
	adds=(--add=tests/system/workloads.sh)
	cmd=(bash /opt/add/workloads.sh life)
	if [ "$run" = debian13-off ]; then
		adds+=("${kube_adds[@]}")
		cmd=(bash -c 'bash /opt/add/workloads.sh life; a=$?; bash /opt/add/kube.sh; b=$?; [ "$a" -eq 0 ] && [ "$b" -eq 0 ]')
	elif [ "$mode" = kube ]; then
		opts=(--kernel="$k" --userland=trixie --nodefd=off)
		adds=("${kube_adds[@]}")
		cmd=(bash /opt/add/kube.sh)
	fi
	echo "# $run: vmtest/system ${opts[*]} ${adds[*]} -- ${cmd[*]}" >>"$out.err"
	start=$SECONDS
	vmtest/system "${opts[@]}" "${adds[@]}" -- "${cmd[@]}" >"$out.log" 2>>"$out.err"
	rc=$?
	echo "$rc $((SECONDS - start))" >"$out.rc"
	return "$rc"
}

# report: each boot's TAP, numbered anew and named after the run, then the table.
report()
{
	local run out rc secs line n_before runs=() name r

	for run in $(all_runs); do
		out=$logdir/workloads-$run
		runs+=("$run")
		if [ ! -f "$out.rc" ]; then
			check "$run: the boot ran (no record of it in $logdir)" false
			continue
		fi
		read -r rc secs <"$out.rc"
		echo "# $run: $secs s; $(grep '^vmtest: boot:' "$out.err")"
		n_before=$tap_n
		while IFS= read -r line; do
			if [[ "$line" =~ ^(not\ )?ok\ [0-9]+\ (.*)$ ]]; then
				tap_n=$((tap_n + 1))
				[ -z "${BASH_REMATCH[1]}" ] || tap_failed=$((tap_failed + 1))
				printf '%sok %d %s: %s\n' "${BASH_REMATCH[1]}" "$tap_n" "$run" "${BASH_REMATCH[2]}"
			elif [[ "$line" == '#'* ]]; then
				printf '%s\n' "$line"
			fi
		done < <(cat "$out.log" 2>/dev/null)
		if [ "$rc" -ne 0 ] || ! grep -q '^1\.\.[0-9]' "$out.log" 2>/dev/null; then
			check "$run: the suite ran to its end (exit $rc)" false
			tail -n 20 "$out.err" | sed 's/^/# /'
		elif [ "$tap_n" -eq "$n_before" ]; then
			check "$run: the suite reported results" false
		fi
	done

	# The table: each case's results, a column per run.
	printf '#\n# %-52s' case
	for run in "${runs[@]}"; do printf ' %-14s' "$run"; done
	printf '\n'
	for run in "${runs[@]}"; do
		sed -nE 's/^(not )?ok [0-9]+ ([^#]*[^ #]).*$/\2/p' "$logdir/workloads-$run.log" 2>/dev/null
	done | awk '!seen[$0]++' | while IFS= read -r name; do
		printf '# %-52s' "$name"
		for run in "${runs[@]}"; do
			r=$(awk -v n="$name" '{ l = $0; sub(/^(not )?ok [0-9]+ /, "", l); sub(/ *#.*$/, "", l)
				if (l == n) { print ($1 == "not" ? "FAIL" : ($0 ~ /# SKIP/ ? "skip" : "pass")); exit } }' \
				"$logdir/workloads-$run.log" 2>/dev/null)
			printf ' %-14s' "${r:--}"
		done
		printf '\n'
	done
	done_testing
}

# A boot runs every case: give it more than vmtest/system's default on a busy machine.
export NODEFD_VM_TIMEOUT=${NODEFD_VM_TIMEOUT:-3000}

case "${1:-}" in
runs) all_runs ;;
boot)
	[[ " $(all_runs | tr '\n' ' ') " == *" ${2:-} "* ]] ||
		{ echo "workloads.sh: boot ${2:-}: not one of: $(all_runs | tr '\n' ' ')" >&2; exit 2; }
	boot "$2"
	;;
report) report ;;
'')
	package || { check "make deb" false; done_testing; exit; }
	for run in $(all_runs); do
		echo "# $run: booting" >&2
		boot "$run"
	done
	report
	;;
*) echo "usage: tests/host/workloads.sh [runs | boot RUN | report]" >&2; exit 2 ;;
esac
