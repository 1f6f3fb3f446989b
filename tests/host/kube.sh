#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/kube.sh [debian13|debian12]: nodefd's image and DaemonSet under podman in a real
# Debian 13 system (tests/system/kube.sh in vmtest/system, the host's unit masked), on Debian
# 13's kernel (the default) or on Debian 12's (the same userland: Debian 12's podman 4.3 plays
# no DaemonSet). Makes the package (or takes NODEFD_DEB) and the image's local base
# (dist/image/base-tarball), adds them with the image's and the manifest's files, and streams
# the guest's TAP. One boot, 5-10 minutes under TCG. `make check` runs the same files through
# tests/host/workloads.sh: at the end of its Debian 13 "off" boot, and in a boot of its own on
# Debian 12's kernel.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
kernel=${1:-debian13}
case "$kernel" in
debian13 | debian12) ;;
*) echo "usage: tests/host/kube.sh [debian13|debian12]" >&2; exit 1 ;;
esac

deb=${NODEFD_DEB:-$(make --no-print-directory BUILD="${NODEFD_BUILD:-build}" deb | tail -n 1)}
[ -f "$deb" ] || { echo "not ok 1 make deb"; echo "1..1"; exit 1; }
base=$(dist/image/base-tarball) || { echo "not ok 1 dist/image/base-tarball"; echo "1..1"; exit 1; }
# vmtest/system copies each --add to /opt/add/<basename>: base.tar by that name.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodefd-kube.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ln -s "$base" "$tmp/base.tar"
export NODEFD_DEB=$deb
export NODEFD_VM_TIMEOUT=${NODEFD_VM_TIMEOUT:-2400}
vmtest/system --kernel="$kernel" --userland=trixie --nodefd=off \
	--add="$tmp/base.tar" \
	--add=dist/image/Containerfile --add=dist/image/build --add=dist/image/nodefd-policy-watch \
	--add=dist/kubernetes/nodefd-daemonset.yaml --add=tests/system/kube.sh \
	-- bash /opt/add/kube.sh | tee "$tmp/tap"
rc=${PIPESTATUS[0]}
# The guest's script ends with its plan whatever its checks said: the status is ours to make.
[ "$rc" -eq 0 ] && grep -q '^1\.\.[1-9]' "$tmp/tap" && ! grep -q '^not ok' "$tmp/tap"
