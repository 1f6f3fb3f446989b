#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/bench.sh: the benchmark's parts that run on the host, cheaply (make bench itself
# is not a test): nodefd_bench's command line, vmtest/run's NODEFD_VM_ICOUNT checks, and the
# plot from a sample of nodefd_bench --csv.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench=$tmp/nodefd_bench

# out_has TEXT CMD...: CMD exits 0 and prints TEXT.
out_has()
{
	local text=$1 out

	shift
	out=$("$@" 2>&1) || { echo "exit $?: $out"; return 1; }
	echo "$out"
	grep -qF -- "$text" <<<"$out"
}

# As make builds it (with the floor programs' skeleton), in a build directory of its own.
check "nodefd_bench builds" make -s BUILD="$tmp/build" "$tmp/build/bin/nodefd_bench"
cp "$tmp/build/bin/nodefd_bench" "$bench" 2>/dev/null
check "nodefd_bench --dry-run takes its options" \
	out_has "3 rounds x 50 operations, clock icount, kernel k1" \
	"$bench" --dry-run -r 3 -n 50 --clock=icount --kernel=k1 --csv --no-events
check "nodefd_bench --help exits 0" expect_status 0 "$bench" --help
for bad in "-r 0" "-r 32" "-n 0" "-n 12x" "--clock=tsc" "--bogus" "extra"; do
	# shellcheck disable=SC2086
	check "nodefd_bench $bad is a usage error (exit 2)" expect_status 2 "$bench" --dry-run $bad
done

# Refused before any boot, so these cost nothing.
check "NODEFD_VM_ICOUNT with a bad option is refused" \
	expect_status 125 env NODEFD_VM_ICOUNT='shift=0;x' vmtest/run -- true
check "NODEFD_VM_ICOUNT with multi-threaded TCG is refused" \
	expect_status 125 env NODEFD_VM_ICOUNT=shift=0 NODEFD_VM_TCG_THREAD=multi vmtest/run -- true
check "NODEFD_VM_ICOUNT with KVM is refused" \
	expect_status 125 env NODEFD_VM_ICOUNT=shift=0 NODEFD_VM_ACCEL=kvm vmtest/run -- true

if command -v gnuplot >/dev/null; then
	for k in k1 k2; do
		for w in 0 1 2 3 4 5 6; do
			d=$((w < 2 ? 2 : w == 2 ? 1 : w == 3 ? 8 : w == 4 ? 32 : w == 5 ? 64 : 8))
			echo "$k icount $w $d 0 0 7000 $((7000 + d * 500)) 1.5 1.4 1.6"
		done >"$tmp/$k.csv"
	done
	check "tests/bench/plot draws PNG and SVG from nodefd_bench --csv" \
		sh -c "tests/bench/plot '$tmp/p' '$tmp/k1.csv' '$tmp/k2.csv' &&
			file '$tmp/p.png' | grep -q 'PNG image' && grep -q '<svg' '$tmp/p.svg'"
	check "tests/bench/plot refuses a CSV with no reopen rows" \
		expect_status 1 tests/bench/plot "$tmp/q" /dev/null
else
	skip "tests/bench/plot draws PNG and SVG" "gnuplot is not installed (make bench installs it)"
fi
done_testing
