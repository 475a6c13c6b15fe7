#!/usr/bin/env bash
# The whole test suite, as CI runs it. Usage: bash scripts/test.sh
#  1. installs missing Debian packages (scripts/deps.sh, for Debian 12 or 13);
#  2. the CI preset (-Wall -Wextra -Wpedantic -Werror, Release: the test programs and
#     examples at -O2 on Debian 13, -O1 on Debian 12, what is measured at -O3; each release's
#     choices are CMakePresets.json's ci-bookworm and ci-trixie): build, ctest (unit
#     tests, compile-fail checks, consumer checks, examples, docs and, on
#     Debian 13, the end-to-end tests with the real torch.export);
#  3. clang's front end (Debian 13): clang++ 19 with the ci preset's warnings on every translation
#     unit, the Python module and the benchmarks included, through -fsyntax-only
#     (scripts/clang_front_end.py; the units the sanitizer step compiles with the same clang
#     are left to it), and the compile-fail checks with clang;
#  4. the sanitizer preset (ASan + UBSan + _GLIBCXX_ASSERTIONS, with clang++: it compiles
#     the sanitized build in under half of g++'s time, and with -Werror it is also the
#     clang build of Debian 12, whose clang 14 does not compile LibTorch 1.13's headers in
#     C++20 mode: there it is without the LibTorch parts, which Debian 13's runs with
#     LibTorch 2.6): build, ctest (which replays every fuzz target's checks on generated
#     inputs; without the compile-fail and consumer checks, which the ci preset runs with
#     the machine's g++, and without the Python module, which cannot load into an
#     uninstrumented python);
#  4b. ThreadSanitizer (clang++) on the tests that use threads (scripts/tsan.sh);
#  5. the libFuzzer targets (tests/fuzz/fuzz_*.cpp), each for a bounded time;
#  6. on a Debian 12 host only: this same script inside a Debian 13 root file
#     system (created with debootstrap on first use, made ready in the background
#     from the start of the run, cached outside the clone
#     at $YOBX_TRIXIE_ROOT, default /var/cache/yobx/trixie), so that both
#     releases are tested by one script; its sanitizer step runs the tests that
#     exist only on Debian 13 (YOBX_ASAN_SCOPE=debian13). On a Debian 13 host
#     step 6 is not needed: steps 1-5 are the Debian 13 suite.
# Options (environment):
#  YOBX_FUZZ_SECONDS  seconds per fuzzer (default 20)
#  YOBX_SKIP          comma-separated steps to leave out: clang (Debian 13), asan, tsan, fuzz, trixie
#  YOBX_TRIXIE_SKIP   what step 6 leaves out (default tsan,fuzz: the Debian 12
#                     run covers ThreadSanitizer and the fuzzers; CI's budget)
#  YOBX_ASAN_SCOPE    all (default): the whole sanitizer build and ctest; debian13:
#                     only what runs the C++ of the tests that exist only on Debian 13
#                     (the AOTInductor package checks, the scripted models observed
#                     for torch.export, the ONNX models checked against onnxruntime)
#                     and the LibTorch adapter's tests (Debian 12's is without LibTorch),
#                     what step 6 runs, the rest being the Debian 12 run's
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
yobx_install_deps
release=$(yobx_release)

# the compiler cache (ccache, outside the clone: YOBX_CCACHE_DIR, default /var/cache/yobx/ccache, which
# inside the Debian 13 root is that root's own): a rerun from a clone at the same path (the Debian 13
# stage's is always /src/yobx) compiles only what changed; a first run compiles everything. No
# CCACHE_BASEDIR: it would make the paths on the command line relative, and with them __FILE__,
# which the patches' reports and the examples print from the source root
if command -v ccache > /dev/null; then
    export CCACHE_DIR=${YOBX_CCACHE_DIR:-/var/cache/yobx/ccache} CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
    mkdir -p "$CCACHE_DIR"
    ccache --zero-stats > /dev/null
fi
jobs=$(nproc)
fuzz_seconds=${YOBX_FUZZ_SECONDS:-20}
skip=",${YOBX_SKIP:-},"
total=0
skipped() { [[ "$skip" == *",$1,"* ]]; }
# each step's line says when it starts, in seconds from the start of the run (CI's budget is per run)
started=$(date +%s)
at() { echo "[at $(( $(date +%s) - started )) s]"; }

# On a Debian 12 host the Debian 13 root (debootstrap, then its packages: 2.6 min on a fresh machine
# here, of which 2.5 min of CPU that the build shares) is made ready in the background while Debian
# 12's presets build; step 6 waits for it. Its log: build/trixie-prepare.log.
trixie_prepare=""
if [ "$release" = bookworm ] && ! skipped trixie; then
    mkdir -p build
    bash scripts/trixie.sh bash -c 'source scripts/deps.sh && yobx_install_deps' > build/trixie-prepare.log 2>&1 &
    trixie_prepare=$!
fi

# The sanitizer step on Debian 13 within CI (YOBX_ASAN_SCOPE=debian13): the targets of the tests that
# run yobx's C++ only there; ctest adds the fixtures they need (the models scripted by Python, the
# packages copied from the ci preset's build).
debian13_targets=(yobx-onnx-shapes observe_scripted treespec_roundtrip tiny_llm_generate tiny_llm_package yobx_libtorch_tests)
# the ONNX models of onnx.models there: one of each kind (a CNN, a detector with its loops and
# NonMaxSuppression, a transformer fused by onnxruntime, quantized ones, scripted control flow)
debian13_models="resnet18;ssdlite;hf_bert+fused;tiny_llm+q4;resnet18+qdq;scripted_control;lstm"
# the tests it runs are those labelled asan_debian13 (tests/CMakeLists.txt: every model observed; the
# packages checked of the kinds the runner treats apart, the others' compilation left to the ci preset)
# and libtorch (the LibTorch adapter's unit tests: Debian 12's sanitizer build is without LibTorch)

# scope_of PRESET: what of the preset runs, all or debian13 (YOBX_ASAN_SCOPE, for the sanitizer preset)
scope_of() {
    if [ "$1" = asan ]; then echo "${YOBX_ASAN_SCOPE:-all}"; else echo all; fi
}

# configure_preset PRESET [CMAKE ARGUMENTS]: prints the step's line and configures build/PRESET with
# CMakePresets.json's PRESET-RELEASE (ci-bookworm, asan-trixie...), which holds the per-release choices
# (which preset builds the benchmarks, the test programs' optimization level, torch.export required)
configure_preset() {
    local preset=$1 compiler=g++
    shift
    [ "$preset" != ci ] && compiler=clang++
    local scope what=""
    scope=$(scope_of "$preset")
    [ "$scope" = debian13 ] && what=": the tests that exist only on Debian 13"
    [ "$preset" = clang ] && what=": its front end on every translation unit, and the compile-fail checks"
    echo "== preset $preset-$release ($($compiler --version | head -1))$what $(at)"
    mkdir -p build
    local extra=("$@")
    [ "$scope" = debian13 ] && extra+=("-DYOBX_ONNX_MODELS=$debian13_models")
    cmake --preset "$preset-$release" "${extra[@]}" > "build/$preset.configure.log" 2>&1 || { cat "build/$preset.configure.log"; exit 1; }
}

# count_passed PRESET LOG: adds the number of tests ctest passed to the total, or stops the run
count_passed() {
    local n
    n=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$2")
    [ -n "$n" ] || { echo "ctest ($1) did not pass"; exit 1; }
    total=$((total + n))
}

run_preset() {
    local preset=$1 log scope
    scope=$(scope_of "$preset")
    configure_preset "$preset"
    local targets=()
    [ "$scope" = debian13 ] && targets=(--target "${debian13_targets[@]}")
    cmake --build --preset "$preset-$release" -j"$jobs" "${targets[@]}"
    echo "-- $preset-$release built $(at)"
    log=$(mktemp)
    # run once, by the ci preset: the consumer checks (they configure and build with the
    # machine's default compiler, g++, whatever the preset) and, in the sanitizer preset, the
    # compile-fail checks (the same g++ compiles them in the ci preset; they run nothing a sanitizer watches)
    local only=()
    [ "$preset" = asan ] && only=(-LE '^(compile_fail|consumer)$')
    [ "$scope" = debian13 ] && only=(-L '^(asan_debian13|libtorch)$')
    ctest --preset "$preset-$release" -j"$jobs" "${only[@]}" 2>&1 | tee "$log"
    count_passed "$preset" "$log"
    rm -f "$log"
}

# Debian 13's clang 19: its warnings (-Werror) on every translation unit the ci preset builds, the
# Python module and the benchmarks included, through its front end alone (scripts/clang_front_end.py:
# clang's warnings all come from it; it takes 55 to 60% of a -O0 build's time, and runs no test a
# second time), but for the units the sanitizer step compiles with the same clang and warnings; and,
# beside it, the compile-fail checks, whose messages are checked for clang as for g++
front_end() {
    local log ctest_log
    configure_preset clang
    local left=()  # the units left to the sanitizer step
    if ! skipped asan; then
        if [ "$(scope_of asan)" = debian13 ]; then
            left=(--skip "(^|/)($(IFS='|'; echo "${debian13_targets[*]}"))[.]dir/")
        else
            # the sanitizer preset builds everything but the Python module and the benchmarks
            left=(--skip '^(?!python/|benchmarks/)')
        fi
    fi
    log=$(mktemp)
    ctest_log=$(mktemp)
    # one build at a time (RESOURCE_LOCK): on a core of its own while the front end uses the others
    ctest --preset "clang-$release" -j"$jobs" -L '^compile_fail$' > "$ctest_log" 2>&1 &
    local checks=$!
    python3 scripts/clang_front_end.py build/clang "$(( jobs > 2 ? jobs - 1 : jobs ))" "${left[@]}" 2>&1 | tee "$log" || true
    wait "$checks" || true
    cat "$ctest_log"
    local n
    n=$(sed -n 's/^clang_front_end: \([0-9]*\) translation units, no warning.*/\1/p' "$log")
    [ -n "$n" ] || { echo "clang's front end did not pass"; exit 1; }
    total=$((total + n))
    count_passed clang "$ctest_log"
    rm -f "$log" "$ctest_log"
}

run_preset ci
# Debian 12: the sanitizer preset is the clang build (without LibTorch there: CMake leaves 1.13 out with clang)
if [ "$release" = trixie ] && ! skipped clang; then front_end; fi
skipped asan || run_preset asan

if ! skipped tsan; then
    echo "== ThreadSanitizer (scripts/tsan.sh) $(at)"
    log=$(mktemp)
    bash scripts/tsan.sh 2>&1 | tee "$log"
    n=$(sed -n 's/^\[doctest\] test cases: *\([0-9]*\) | *\1 passed | 0 failed.*/\1/p' "$log")
    [ -n "$n" ] || { echo "the ThreadSanitizer run did not pass"; exit 1; }
    total=$((total + n))
    rm -f "$log"
fi

if ! skipped fuzz; then
    echo "== fuzzing (${fuzz_seconds}s per target) $(at)"
    mkdir -p build/fuzz
    # build the targets as many at a time as there are cores, each compiled (through the compiler
    # cache when there is one) then linked; a target's first line `// fuzz-link: FLAGS` gives its
    # extra flags, -D and -I to the compiler, the others to the linker (the ONNX reader links ONNX)
    build_fuzzer() {
        local name flags compile=() link=()
        name=build/fuzz/$(basename "$1" .cpp)
        read -ra flags <<< "$(sed -n "1s|^// fuzz-link: ||p" "$1")"
        for f in "${flags[@]}"; do
            case "$f" in -D*|-I*) compile+=("$f") ;; *) link+=("$f") ;; esac
        done
        local common=(-std=c++20 -O1 -gline-tables-only -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
        $(command -v ccache || true) clang++ "${common[@]}" -D_GLIBCXX_ASSERTIONS -Iinclude "${compile[@]}" -c "$1" -o "$name.o" &&
            clang++ "${common[@]}" "$name.o" -o "$name" "${link[@]}"
    }
    export -f build_fuzzer
    ls tests/fuzz/fuzz_*.cpp | xargs -P "$jobs" -I{} bash -c 'build_fuzzer "$1"' sh {}
    # then run them as many at a time as there are cores (a fuzzer runs on one), each for the same time
    run_fuzzer() {
        local name corpus
        name=$(basename "$1" .cpp)
        corpus="build/fuzz/$name.corpus"
        rm -rf "$corpus"
        cp -r "tests/fuzz/corpus/${name#fuzz_}" "$corpus" || return 1
        if "./build/fuzz/$name" -max_total_time="$fuzz_seconds" -max_len=4096 -print_final_stats=0 \
            -artifact_prefix="build/fuzz/$name." "$corpus" \
            > "build/fuzz/$name.log" 2>&1; then
            echo "fuzzer $name: $(ls "$corpus" | wc -l) corpus entries, nothing found" > "build/fuzz/$name.result"
        else
            { tail -50 "build/fuzz/$name.log"; echo "fuzzer $name found a crash"; } > "build/fuzz/$name.result"
            return 1
        fi
    }
    export -f run_fuzzer
    export fuzz_seconds
    rm -f build/fuzz/*.result
    failed=0
    ls tests/fuzz/fuzz_*.cpp | xargs -P "$jobs" -I{} bash -c 'run_fuzzer "$1"' sh {} || failed=1
    for target in tests/fuzz/fuzz_*.cpp; do
        name=$(basename "$target" .cpp)
        cat "build/fuzz/$name.result" 2>/dev/null || echo "fuzzer $name did not run"
        grep -q "nothing found" "build/fuzz/$name.result" 2>/dev/null || failed=1
        total=$((total + 1))
    done
    [ "$failed" = 0 ] || exit 1
fi

if [ "$release" = bookworm ] && ! skipped trixie; then
    echo "== Debian 13 (trixie): scripts/test.sh in a root file system $(at)"
    log=$(mktemp)
    wait "$trixie_prepare" || { cat build/trixie-prepare.log; echo "the Debian 13 root could not be made ready"; exit 1; }
    YOBX_SKIP="${YOBX_TRIXIE_SKIP-tsan,fuzz}" YOBX_ASAN_SCOPE=debian13 bash scripts/trixie.sh bash scripts/test.sh 2>&1 | tee "$log"
    n=$(sed -n 's/^yobx: \([0-9]*\) passed, 0 failed$/\1/p' "$log" | tail -1)
    [ -n "$n" ] || { echo "the Debian 13 stage did not pass"; exit 1; }
    total=$((total + n))
    rm -f "$log"
fi

command -v ccache > /dev/null && echo "-- compiler cache: $(ccache --print-stats 2>/dev/null | sed -n 's/^direct_cache_hit\t\(.*\)/\1 direct hits/p; s/^preprocessed_cache_hit\t\(.*\)/\1 preprocessed hits/p; s/^cache_miss\t\(.*\)/\1 misses/p' | paste -sd, -)"
echo "== done $(at)"
echo "yobx: ${total} passed, 0 failed"
