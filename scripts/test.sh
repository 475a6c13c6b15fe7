#!/usr/bin/env bash
# The whole test suite, as CI runs it. Usage: bash scripts/test.sh
#  1. installs missing Debian packages;
#  2. the CI preset (-Wall -Wextra -Wpedantic -Werror): build, ctest
#     (unit tests, compile-fail checks, consumer checks, examples, docs);
#  3. the sanitizer preset (ASan + UBSan): build, ctest;
#  4. the libFuzzer targets, each for a bounded time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
yobx_install_deps

jobs=$(nproc)
fuzz_seconds=${YOBX_FUZZ_SECONDS:-30}
total=0

run_preset() {
    local preset=$1 log
    echo "== preset $preset"
    mkdir -p build
    cmake --preset "$preset" > "build/$preset.configure.log" 2>&1 || { cat "build/$preset.configure.log"; exit 1; }
    cmake --build --preset "$preset" -j"$jobs"
    log=$(mktemp)
    ctest --preset "$preset" -j"$jobs" 2>&1 | tee "$log"
    local n
    n=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$log")
    [ -n "$n" ] || { echo "ctest ($preset) did not pass"; exit 1; }
    total=$((total + n))
    rm -f "$log"
}

run_preset ci
run_preset asan

echo "== fuzzing (${fuzz_seconds}s per target)"
mkdir -p build/fuzz
for target in tests/fuzz/fuzz_*.cpp; do
    name=$(basename "$target" .cpp)
    clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        -Iinclude "$target" -o "build/fuzz/$name"
    corpus="build/fuzz/$name.corpus"
    rm -rf "$corpus"
    cp -r "tests/fuzz/corpus/${name#fuzz_}" "$corpus"
    "./build/fuzz/$name" -max_total_time="$fuzz_seconds" -max_len=4096 -print_final_stats=0 "$corpus" \
        > "build/fuzz/$name.log" 2>&1 || { tail -50 "build/fuzz/$name.log"; echo "fuzzer $name found a crash"; exit 1; }
    echo "fuzzer $name: $(ls "$corpus" | wc -l) corpus entries, nothing found"
    total=$((total + 1))
done

echo "yobx: ${total} passed, 0 failed"
