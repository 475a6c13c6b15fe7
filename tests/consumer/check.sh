#!/usr/bin/env bash
# Builds the consumer project against yobx in one of three ways and runs it.
#   check.sh install|minimal|required|subdirectory|vendored <yobx source dir> <work dir>
# minimal: the README's two install commands, on a machine that has only CMake, a compiler and
# Boost (every other package hidden from find_package): the tests, examples and benchmarks are
# skipped with one line each. required: the same machine asked for the tests fails clearly.
set -euo pipefail
mode=$1 src=$(cd "$2" && pwd) work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
case "$mode" in
  install)
    # A fresh configure of yobx alone (no tests), installed into a private prefix.
    cmake -S "$src" -B "$work/yobx-build" -DYOBX_BUILD_TESTS=OFF -DYOBX_BUILD_EXAMPLES=OFF \
          -DYOBX_BUILD_BENCHMARKS=OFF -DCMAKE_INSTALL_PREFIX="$work/prefix" > "$work/log" 2>&1
    cmake --install "$work/yobx-build" >> "$work/log" 2>&1
    test -f "$work/prefix/share/cmake/yobx/yobxConfigVersion.cmake"
    # the Python step, installed with the headers
    test -x "$work/prefix/bin/yobx-export" || { echo "bin/yobx-export not installed"; exit 1; }
    "$work/prefix/bin/yobx-export" --help | grep -q -- "--observed" || { echo "yobx-export --help failed"; exit 1; }
    cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >> "$work/log" 2>&1
    ;;
  minimal|required)
    hidden=()
    for package in doctest benchmark Python3 Torch Protobuf ONNX; do hidden+=(-DCMAKE_DISABLE_FIND_PACKAGE_$package=ON); done
    if [ "$mode" = required ]; then
        if cmake -S "$src" -B "$work/yobx-build" "${hidden[@]}" -DYOBX_BUILD_TESTS=ON > "$work/log" 2>&1; then
            echo "the configure passed without doctest"; exit 1
        fi
        tr -s ' \n' ' ' < "$work/log" | grep -o 'yobx: YOBX_BUILD_TESTS=ON needs doctest[^,]*, not found'
        exit 0
    fi
    cmake -S "$src" -B "$work/yobx-build" "${hidden[@]}" > "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
    grep 'yobx: .* skipped' "$work/log"
    cmake --install "$work/yobx-build" --prefix "$work/prefix" >> "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
    cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >> "$work/log" 2>&1
    ;;
  subdirectory)
    cmake -S "$here" -B "$work/build" -DYOBX_CONSUMER_MODE=subdirectory -DYOBX_SOURCE_DIR="$src" > "$work/log" 2>&1
    # As a subproject, yobx must not add its tests, examples or benchmarks.
    if cmake --build "$work/build" --target help | grep -E 'yobx_tests|bench_pytree|pytree_kv_cache' ; then
        echo "yobx added its own targets to a parent project"; exit 1
    fi
    ;;
  vendored)
    # Only the copied headers and the system's Boost: no CMake, no yobx install.
    mkdir -p "$work/vendor"
    cp -r "$src/include/yobx" "$work/vendor/"
    "${CXX:-g++}" -std=c++20 -I"$work/vendor" "$here/main.cpp" -o "$work/consumer"
    "$work/consumer"
    exit 0
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
cmake --build "$work/build" >> "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
# nor build its tool in the parent's `all` (the target is there, built when asked for)
if [ "$mode" = subdirectory ] && grep -q 'yobx: ONNX adapter and yobx-onnx-shapes ON' "$work/log"; then
    grep -q 'yobx-onnx-shapes' <(cmake --build "$work/build" --target help) || { echo "no target yobx-onnx-shapes in the parent project"; exit 1; }
    [ ! -e "$work/build/yobx/yobx-onnx-shapes" ] || { echo "yobx built yobx-onnx-shapes in the parent project's all"; exit 1; }
fi
"$work/build/consumer"
