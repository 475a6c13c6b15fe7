#!/usr/bin/env bash
# Runs a command in this source tree inside a Debian 13 (trixie) root file
# system, as root. Usage: bash scripts/trixie.sh <command...>
# The root is made with debootstrap (minbase) on first use and kept at
# $YOBX_TRIXIE_ROOT (default /var/cache/yobx/trixie, outside the clone) for the
# next run; the sources are copied to /src/yobx in it (its build/ kept, so a
# rerun builds incrementally). The command runs there with a clean
# environment but for CI, YOBX_SKIP, YOBX_ASAN_SCOPE and YOBX_FUZZ_SECONDS. scripts/test.sh
# uses it for its Debian 13 stage; scripts/deps.sh, run by the command,
# installs the packages inside the root.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "scripts/trixie.sh: debootstrap and chroot need root" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: bash scripts/trixie.sh <command...>" >&2; exit 2; }
root=${YOBX_TRIXIE_ROOT:-/var/cache/yobx/trixie}

if [ ! -e "$root/.yobx-root" ]; then
    if ! command -v debootstrap > /dev/null; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
    fi
    echo "yobx: creating a Debian 13 root at $root"
    rm -rf "$root.tmp"
    mkdir -p "$(dirname "$root")"
    debootstrap --variant=minbase trixie "$root.tmp" > "$root.debootstrap.log" 2>&1 ||
        { tail -30 "$root.debootstrap.log"; exit 1; }
    touch "$root.tmp/.yobx-root"
    rm -rf "$root"
    mv "$root.tmp" "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"

# The sources, without the host's build trees.
mkdir -p "$root/src/yobx"
find "$root/src/yobx" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$root/src/yobx"

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" || true; done
}
trap cleanup EXIT
for fs in proc dev dev/pts; do
    mountpoint -q "$root/$fs" && continue
    case $fs in
        proc) mount -t proc proc "$root/proc" ;;
        *) mount --bind "/$fs" "$root/$fs" ;;
    esac
    mounted+=("$root/$fs")
done
quoted=$(printf ' %q' "$@")
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 CI="${CI:-}" YOBX_SKIP="${YOBX_SKIP:-}" YOBX_ASAN_SCOPE="${YOBX_ASAN_SCOPE:-all}" YOBX_FUZZ_SECONDS="${YOBX_FUZZ_SECONDS:-20}" \
    /bin/bash -c "cd /src/yobx &&$quoted"
