#!/usr/bin/env bash
# Compile time and peak memory of a translation unit that includes a yobx header
# and uses nothing, against one that includes only the standard headers that
# header (and the yobx headers it pulls in) name, at -O0. Prints both, the
# difference, and the code the unused include emits: text bytes of the object
# file over the standard headers' and the number of code or data symbols naming
# yobx (both must stay 0: an include that is not used costs no code).
#   bash benchmarks/compile_time.sh [-c compiler] [header ...]
# Headers default to yobx/pytree.hpp yobx/observer.hpp yobx/sym.hpp
# yobx/shape_inference.hpp; the compiler to g++.
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=g++
if [[ ${1:-} == -c ]]; then
    cxx=$2
    shift 2
fi
headers=("$@")
[[ ${#headers[@]} -gt 0 ]] || headers=(yobx/pytree.hpp yobx/observer.hpp yobx/sym.hpp yobx/shape_inference.hpp)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The compiler's CPU time (user + system), not the wall clock, and the two
# files compiled in turn: on a shared machine a job on the other core
# stretches a compile by up to a second from one run to the next, and a burst
# of it would otherwise fall on one side of the comparison only.
compile() {  # CPU seconds and peak KB of one compile (KB 0 without GNU time, Debian's package `time`)
    if [[ -x /usr/bin/time ]]; then
        /usr/bin/time -f "%U %S %M" -o "$work/t" "$cxx" -std=c++20 -O0 -Iinclude -c "$1" -o "$2"
    else
        { TIMEFORMAT="%U %S 0"; time "$cxx" -std=c++20 -O0 -Iinclude -c "$1" -o "$2"; } 2> "$work/t"
    fi
    awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$work/t"
}
measure() {  # best of 5 of each file, alternating: "std_s std_kb yobx_s yobx_kb"
    local bs=999 bsm=0 by=999 bym=0 t m
    for _ in 1 2 3 4 5; do
        read -r t m < <(compile "$work/std.cpp" "$work/std.o")
        if awk -v a="$t" -v b="$bs" 'BEGIN { exit !(a < b) }'; then bs=$t; bsm=$m; fi
        read -r t m < <(compile "$work/yobx.cpp" "$work/yobx.o")
        if awk -v a="$t" -v b="$by" 'BEGIN { exit !(a < b) }'; then by=$t; bym=$m; fi
    done
    echo "$bs $bsm $by $bym"
}
text_bytes() { size -A "$1" | awk '$1 ~ /^\.text/ { n += $2 } END { print n + 0 }'; }

echo "compiler: $($cxx --version | head -1), -O0, CPU time, best of 5, alternating"
printf '%-28s %10s %10s %12s %12s %12s\n' header "std only" "with yobx" difference "peak +KB" "code +B/syms"
status=0
for header in "${headers[@]}"; do
    # The standard headers named by the header and the yobx headers it includes,
    # read from their #include lines so that the reference follows the code.
    yobx_headers=$("$cxx" -std=c++20 -Iinclude -x c++ -E -H - <<< "#include <$header>" 2>&1 >/dev/null |
        sed -n 's|^\.* \(include/yobx/.*\.hpp\)$|\1|p' | sort -u)
    std_headers=$(sed -n 's|^#include <\([a-z_]*\)>$|\1|p' $yobx_headers | sort -u)
    : > "$work/std.cpp"
    for h in $std_headers; do echo "#include <$h>" >> "$work/std.cpp"; done
    echo "int main() { return 0; }" >> "$work/std.cpp"
    printf '#include <%s>\nint main() { return 0; }\n' "$header" > "$work/yobx.cpp"
    read -r st sm yt ym < <(measure)
    std_text=$(text_bytes "$work/std.o")
    yobx_text=$(text_bytes "$work/yobx.o")
    # code and data naming yobx; read-only constants (nm's r, R: g++ 14 keeps the
    # one-byte values of concept checks it evaluated) are not code
    yobx_symbols() { nm -C --defined-only "$work/yobx.o" | awk '$2 !~ /^[rRnN]$/' | grep yobx || true; }
    symbols=$(yobx_symbols | grep -c . || true)
    code=$((yobx_text - std_text))
    printf '%-28s %8s s %8s s %10s s %12s %12s\n' "<$header>" "$st" "$yt" \
        "$(awk -v a="$yt" -v b="$st" 'BEGIN { printf "%+.2f", a - b }')" "$((ym - sm))" "$code/$symbols"
    if [[ $code -ne 0 || $symbols -ne 0 ]]; then
        echo "  an unused <$header> emits code:"
        yobx_symbols | sed -n "1,5s/^/    /p"
        status=1
    fi
done
exit $status
