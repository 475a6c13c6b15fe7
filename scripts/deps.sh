#!/usr/bin/env bash
# Installs the Debian packages yobx builds and tests with, when any is missing.
# Sourced by demo.sh and test.sh. Reads the release from /etc/os-release and
# runs apt-get update once, only if something is missing.
#   Debian 12 (bookworm): g++ 12, clang 14, Boost 1.81 (libboost1.81-dev: the
#                         default libboost-dev, 1.74, has no PFR), LibTorch 1.13
#   Debian 13 (trixie):   g++ 14, clang 19, Boost 1.83, LibTorch 2.6, and
#                         torchvision for the torch.export tests
# ccache is scripts/test.sh's compiler cache, kept outside the clone (a rerun compiles only what
# changed; a first run compiles everything, as without it).
# libclang-rt-dev is the sanitizer and libFuzzer runtime of the release's clang; llvm gives
# its llvm-symbolizer, which that runtime runs to name a report's frames (LeakSanitizer's
# suppressions match those names).
# libonnx-dev (ONNX's protobuf classes and its own shape inference),
# libprotobuf-dev and protobuf-compiler (ONNX's CMake package looks for protoc)
# and libonnx-testdata (ONNX's backend node tests and the data/light networks)
# are for the ONNX adapter, yobx/adapters/onnx/shapes.hpp; python3-onnxruntime on
# Debian 13 is the reference the ONNX models are checked against.
# python3-dev and pybind11-dev build the Python module yobx (python/); python3-dev,
# python3-setuptools and libomp-dev (Debian 13) are also what torch's AOTInductor
# needs to compile a .pt2 package (the package runner's test).
# YOBX_OS_RELEASE names another os-release file (tests/check_deps.sh).
set -euo pipefail
yobx_common_packages=(cmake make g++ clang libclang-rt-dev llvm doctest-dev libbenchmark-dev
                      libtorch-dev python3 python3-torch python3-sympy python3-onnx patch
                      libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-dev pybind11-dev ccache)

# Prints the release's codename, or fails with what to install by hand.
yobx_release() {
    local codename=""
    local file=${YOBX_OS_RELEASE:-/etc/os-release}
    [ -r "$file" ] && codename=$(. "$file" && echo "${VERSION_CODENAME:-}")
    case "$codename" in
        bookworm|trixie) echo "$codename" ;;
        *)
            echo "yobx: scripts/deps.sh knows Debian 12 (bookworm) and Debian 13 (trixie); this system is" \
                 "'${codename:-unknown}'. Install by hand: a C++20 compiler (g++ >= 12 or clang >= 14), cmake >= 3.21," \
                 "Boost >= 1.81 headers (PFR and Hana), doctest, Google Benchmark, LibTorch and Python's torch and onnx" \
                 "(optional), pybind11 and Python's headers (optional), clang's sanitizer and libFuzzer runtime; then run" \
                 "cmake --preset ci." >&2
            return 1 ;;
    esac
}

yobx_packages() {
    local release
    release=$(yobx_release) || return 1
    case "$release" in
        bookworm) echo "${yobx_common_packages[@]}" libboost1.81-dev ;;
        trixie) echo "${yobx_common_packages[@]}" libboost-dev python3-torchvision python3-onnxruntime \
                python3-setuptools libomp-dev ;;
    esac
}

yobx_install_deps() {
    local packages missing=()
    packages=$(yobx_packages) || return 1
    for p in $packages; do
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
