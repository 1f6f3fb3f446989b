#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/layers.sh: the files of src/ import downward only (issue 11). The graph is read from
# the linker's point of view, not from #include lines: file A imports file B when A's object
# uses a symbol that B's object defines. It must have no cycle; the pure helpers (text.c,
# glob.c, container.c, policyfile.c, which the fuzz targets link alone) must import nothing
# above them; main.c is imported by nobody. Prints the graph, each file with its layer (0 = imports nothing).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/lib.sh

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

check "nodefdctl builds (with -Wshadow -Wconversion, -Werror)" \
	sh -c 'make -s BUILD="$1" all >"$1/make.log" 2>&1 || { cat "$1/make.log"; exit 1; }' sh "$build"

# edges: "A B" per line, A imports B (object names without .o).
edges=$build/edges
: >"$edges"
if [ -d "$build/src" ]; then
	for o in "$build"/src/*.o; do
		nm --defined-only -g "$o" | awk -v f="$(basename "$o" .o)" 'NF == 3 { print $3, f }'
	done | sort -u >"$build/defs"
	for o in "$build"/src/*.o; do
		a=$(basename "$o" .o)
		nm -u "$o" | awk '{ print $2 }' | sort -u |
			join - "$build/defs" | awk -v a="$a" '$2 != a { print a, $2 }'
	done | sort -u >"$edges"
fi

imports() { awk -v a="$1" '$1 == a { print $2 }' "$edges" | tr '\n' ' '; }

check "the graph has edges (the objects were read)" test -s "$edges"
check "the import graph of src/ has no cycle" sh -c 'tsort "$1" >/dev/null' sh "$edges"
check "text.c imports nothing" test -z "$(imports text)"
# pure A B...: A imports nothing but the pure files B... (the fuzz targets link them alone).
pure()
{
	local a=$1 b

	shift
	for b in $(imports "$a"); do
		case " $* " in *" $b "*) ;; *) echo "$a imports $b"; return 1 ;; esac
	done
}
check "glob.c imports only text.c" pure glob text
check "container.c imports nothing" pure container
check "policyfile.c imports only text.c and glob.c" pure policyfile text glob
check "nothing imports main.c" sh -c '! awk '\''$2 == "main"'\'' "$1" | grep .' sh "$edges"

# The layers, for the reader: a file's layer is one above the highest it imports.
if tsort "$edges" >/dev/null 2>&1; then
	declare -A layer
	for f in $(tsort "$edges" | tac); do
		l=0
		for b in $(imports "$f"); do
			[ "${layer[$b]:-0}" -lt "$l" ] || l=$((${layer[$b]:-0} + 1))
		done
		layer[$f]=$l
	done
	for f in "${!layer[@]}"; do
		printf '# layer %d  %-11s -> %s\n' "${layer[$f]}" "$f.c" "$(imports "$f")"
	done | sort -k2,2n -k3
fi
done_testing
