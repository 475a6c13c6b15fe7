#!/usr/bin/env bash
# Installs the Debian packages yobx builds and tests with, when any is missing.
# Sourced by demo.sh and test.sh. Runs apt-get update once, only if needed.
set -euo pipefail
YOBX_PACKAGES=(cmake g++ clang libclang-rt-14-dev libboost1.81-dev doctest-dev libbenchmark-dev
               libtorch-dev python3 python3-torch python3-sympy)
yobx_install_deps() {
    local missing=()
    for p in "${YOBX_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    echo "yobx: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}
