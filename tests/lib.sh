# SPDX-License-Identifier: GPL-2.0
#
# tests/lib.sh: TAP output for the shell tests (sourced). check NAME CMD... runs CMD and prints
# "ok N NAME" or "not ok N NAME" with CMD's output as "#" lines; done_testing prints the plan.

tap_n=0
tap_failed=0

# check NAME CMD...: pass when CMD exits 0.
check()
{
	local name=$1 out rc

	shift
	tap_n=$((tap_n + 1))
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		printf 'ok %d %s\n' "$tap_n" "$name"
	else
		printf 'not ok %d %s (exit %d)\n' "$tap_n" "$name" "$rc"
		tap_failed=$((tap_failed + 1))
	fi
	[ -z "$out" ] || printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
	return 0
}

# expect_status WANT CMD...: CMD exits with WANT.
expect_status()
{
	local want=$1 rc

	shift
	"$@"
	rc=$?
	[ "$rc" -eq "$want" ] || { echo "exit $rc, want $want"; return 1; }
}

# skip NAME WHY
skip()
{
	tap_n=$((tap_n + 1))
	printf 'ok %d %s # SKIP %s\n' "$tap_n" "$1" "$2"
}

done_testing()
{
	printf '1..%d\n' "$tap_n"
	[ "$tap_failed" -eq 0 ]
}
