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
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodefd-workloads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logdir=${WORKLOAD_LOGS:-build/test-logs}
mkdir -p "$logdir"

deb=${NODEFD_DEB:-$(make --no-print-directory BUILD="${NODEFD_BUILD:-build}" deb | tail -n 1)}
if [ ! -f "$deb" ]; then
	check "make deb" false
	done_testing
	exit
fi
export NODEFD_DEB=$deb
# A boot runs every case: give it more than vmtest/system's default on a busy machine.
export NODEFD_VM_TIMEOUT=${NODEFD_VM_TIMEOUT:-3000}

# The DaemonSet under podman (tests/system/kube.sh) ends Debian 13's "off" boot, where no unit
# runs nodefd and the pod is the daemon. On Debian 12's kernel it has a boot of its own, of
# Debian 13's userland with Debian 12's kernel ("debian12-kube"): Debian 12's podman (4.3)
# plays no DaemonSet. Its image is built in the guest from the package and a local base
# (dist/image/base-tarball).
kube_adds=()
if [[ " ${WORKLOAD_KERNELS:-debian12 debian13} " == *" debian1"[23]" "* ]]; then
	if base=$(dist/image/base-tarball); then
		ln -s "$base" "$tmp/base.tar"
		kube_adds=(--add="$tmp/base.tar" --add=dist/image/Containerfile --add=dist/image/build
			--add=dist/image/nodefd-policy-watch --add=dist/kubernetes/nodefd-daemonset.yaml
			--add=tests/system/kube.sh)
	else
		check "dist/image/base-tarball (the image's local base, for the DaemonSet)" false
	fi
fi

runs=()
for k in ${WORKLOAD_KERNELS:-debian12 debian13}; do
	modes=(on off)
	[ "$k" = debian12 ] && [ "${#kube_adds[@]}" -ne 0 ] && modes+=(kube)
	for mode in "${modes[@]}"; do
		run=$k-$mode
		runs+=("$run")
		out=$logdir/workloads-$run.log
		opts=(--kernel="$k" --nodefd="$mode")
		adds=(--add=tests/system/workloads.sh)
		cmd=(bash /opt/add/workloads.sh life)
		if [ "$run" = debian13-off ] && [ "${#kube_adds[@]}" -ne 0 ]; then
			adds+=("${kube_adds[@]}")
			cmd=(bash -c 'bash /opt/add/workloads.sh life; a=$?; bash /opt/add/kube.sh; b=$?; [ "$a" -eq 0 ] && [ "$b" -eq 0 ]')
		elif [ "$mode" = kube ]; then
			opts=(--kernel="$k" --userland=trixie --nodefd=off)
			adds=("${kube_adds[@]}")
			cmd=(bash /opt/add/kube.sh)
		fi
		echo "# $run: vmtest/system ${opts[*]} ${adds[*]} -- ${cmd[*]}"
		start=$SECONDS
		vmtest/system "${opts[@]}" "${adds[@]}" \
			-- "${cmd[@]}" >"$out" 2>"$tmp/$run.err"
		rc=$?
		echo "# $run: $((SECONDS - start)) s; $(grep '^vmtest: boot:' "$tmp/$run.err")"
		# The guest's TAP, numbered anew and named after the run.
		n_before=$tap_n
		while IFS= read -r line; do
			if [[ "$line" =~ ^(not\ )?ok\ [0-9]+\ (.*)$ ]]; then
				tap_n=$((tap_n + 1))
				[ -z "${BASH_REMATCH[1]}" ] || tap_failed=$((tap_failed + 1))
				printf '%sok %d %s: %s\n' "${BASH_REMATCH[1]}" "$tap_n" "$run" "${BASH_REMATCH[2]}"
			elif [[ "$line" == '#'* ]]; then
				printf '%s\n' "$line"
			fi
		done <"$out"
		if [ "$rc" -ne 0 ] || ! grep -q '^1\.\.[0-9]' "$out"; then
			check "$run: the suite ran to its end (exit $rc)" false
			tail -n 20 "$tmp/$run.err" | sed 's/^/# /'
		elif [ "$tap_n" -eq "$n_before" ]; then
			check "$run: the suite reported results" false
		fi
	done
done

# The table: each case's results, a column per run.
printf '#\n# %-52s' case
for run in "${runs[@]}"; do printf ' %-14s' "$run"; done
printf '\n'
for out in "${runs[@]/#/$logdir/workloads-}"; do
	sed -nE 's/^(not )?ok [0-9]+ ([^#]*[^ #]).*$/\2/p' "$out.log"
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
