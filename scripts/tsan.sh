#!/usr/bin/env bash
# ThreadSanitizer run of the tests that use threads: the observer's recording and
# a runner that calls the observed wrapper from a thread of its own,
# the pytree and Value's flat trees, SymInt sharing and the patch registry.
# Usage: bash scripts/tsan.sh   (from the repository; scripts/test.sh runs it)
# Builds build/tsan/thread_tests from the test files that hold those tests,
# with clang++ -fsanitize=thread -D_GLIBCXX_ASSERTIONS at -O0 with line tables (every access
# instrumented; it compiles in under half of g++ -O1 -g's time: 12 s instead of 28 for the pytree
# tests here), and runs the test cases whose names contain "thread". Exit status: the tests'.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/tsan
files=(main observer/test_observer_recording observer/test_observer_fills pytree/test_pytree sym/test_sym pytree/test_value
       patches/test_patches)
flags=(-std=c++20 -O0 -gline-tables-only -fsanitize=thread -D_GLIBCXX_ASSERTIONS -Wall -Wextra -Wpedantic -Werror -Iinclude -Itests)
mkdir -p build/tsan/observer build/tsan/pytree build/tsan/sym build/tsan/patches
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -I{} clang++ "${flags[@]}" -c tests/{}.cpp -o build/tsan/{}.o
objects=()
for f in "${files[@]}"; do objects+=("build/tsan/$f.o"); done
clang++ -fsanitize=thread "${objects[@]}" -o build/tsan/thread_tests
# setarch -R: ThreadSanitizer's shadow memory needs the kernel's address layout without full randomisation
run=(./build/tsan/thread_tests -tc="*thread*")
if command -v setarch > /dev/null; then run=(setarch "$(uname -m)" -R "${run[@]}"); fi
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "${run[@]}"
