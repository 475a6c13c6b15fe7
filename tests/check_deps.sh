#!/usr/bin/env bash
# scripts/deps.sh picks the packages of the release it runs on, and says what
# to install by hand on a release it does not know. Usage: bash tests/check_deps.sh <source root>
set -uo pipefail
source "$1/scripts/deps.sh"
set +e  # deps.sh sets -e; the failures are what is checked here
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
check() {  # name, expected, actual
    if [ "$2" == "$3" ]; then echo "ok: $1"; else echo "FAILED: $1"; echo "  expected: $2"; echo "  got:      $3"; failed=1; fi
}
common="cmake make g++ clang libclang-rt-dev llvm doctest-dev libbenchmark-dev libtorch-dev python3 python3-torch python3-sympy python3-onnx patch libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-dev pybind11-dev ccache"
printf 'ID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n' > "$dir/bookworm"
printf 'ID=debian\nVERSION_ID="13"\nVERSION_CODENAME=trixie\n' > "$dir/trixie"
printf 'ID=ubuntu\nVERSION_ID="24.04"\nVERSION_CODENAME=noble\n' > "$dir/noble"
check "Debian 12 packages" "$common libboost1.81-dev" "$(YOBX_OS_RELEASE=$dir/bookworm yobx_packages)"
check "Debian 13 packages" "$common libboost-dev python3-torchvision python3-onnxruntime python3-setuptools libomp-dev" "$(YOBX_OS_RELEASE=$dir/trixie yobx_packages)"
out=$(YOBX_OS_RELEASE=$dir/noble yobx_packages 2>&1); rc=$?
check "an unknown release fails" "1" "$rc"
check "an unknown release names what to install" \
    "yobx: scripts/deps.sh knows Debian 12 (bookworm) and Debian 13 (trixie); this system is 'noble'. Install by hand: a C++20 compiler (g++ >= 12 or clang >= 14), cmake >= 3.21, Boost >= 1.81 headers (PFR and Hana), doctest, Google Benchmark, LibTorch and Python's torch and onnx (optional), pybind11 and Python's headers (optional), clang's sanitizer and libFuzzer runtime; then run cmake --preset ci." \
    "$out"
out=$(YOBX_OS_RELEASE=$dir/missing yobx_packages 2>&1)
check "no os-release file" "unknown" "$(sed -n "s/.*this system is '\([a-z]*\)'.*/\1/p" <<< "$out")"
[ $failed -eq 0 ] && echo "deps check ok"
exit $failed
