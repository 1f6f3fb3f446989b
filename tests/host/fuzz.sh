#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/fuzz.sh: nodefdctl's parsers under libFuzzer, on the host (no BPF is involved). Builds
# the targets of tests/fuzz/ (`make fuzz`) and runs each for FUZZ_SECONDS (default 20) from the
# seeds in tests/fuzz/corpus/, on a copy, so that the tree is never written. A crash, a sanitizer
# report, a leak, a timeout or a broken promise of the target fails its case; the input that did
# it is kept in build/fuzz/artifacts/ (rerun: build/fuzz/fuzz_NAME FILE).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
artifacts=build/fuzz/artifacts
work=$(mktemp -d "${TMPDIR:-/tmp}/nodefd-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fuzz NAME: run build/fuzz/fuzz_NAME for FUZZ_SECONDS; say how far it got, or what it found.
fuzz()
{
	local name=$1 corpus=$work/$1 log=$work/$1.log rc

	mkdir -p "$corpus" "$artifacts"
	cp tests/fuzz/corpus/"$name"/* "$corpus"/
	"build/fuzz/fuzz_$name" -max_total_time="$FUZZ_SECONDS" -max_len=16384 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
		"$corpus" >"$log" 2>&1
	rc=$?
	grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log"
	echo "corpus: $(ls "$corpus" | wc -l) inputs (from $(ls tests/fuzz/corpus/"$name" | wc -l) seeds)"
	if [ "$rc" -ne 0 ]; then
		grep -E 'ERROR|WARNING|broken promise|SUMMARY|Test unit written|leak' "$log" | head -n 15
		echo "libFuzzer exit $rc; full log lost with $work, rerun: build/fuzz/fuzz_$name $artifacts/$name-*"
		return 1
	fi
	grep -q '^Done [0-9]* runs' "$log"
}

check "fuzz targets build (make fuzz)" make -s --no-print-directory fuzz
for t in policyfile args glob container; do
	if [ -x "build/fuzz/fuzz_$t" ]; then
		check "fuzz_$t: ${FUZZ_SECONDS} s without a crash, leak or broken promise" fuzz "$t"
	else
		check "fuzz_$t: built" false
	fi
done
done_testing
