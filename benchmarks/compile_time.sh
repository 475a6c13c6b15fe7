#!/usr/bin/env bash
# Compile time and peak memory of a translation unit that includes
# <yobx/pytree.hpp> against one that includes only the standard headers
# pytree.hpp itself uses, at -O0. Prints both and the difference.
#   bash benchmarks/compile_time.sh [compiler]
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${1:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The standard headers named by pytree.hpp and the yobx headers it includes,
# read from their #include lines so that the list follows the code.
yobx_headers=$("$cxx" -std=c++20 -Iinclude -x c++ -E -H - <<< '#include <yobx/pytree.hpp>' 2>&1 >/dev/null |
    sed -n 's|^\.* \(include/yobx/.*\.hpp\)$|\1|p')
std_headers=$(sed -n 's|^#include <\([a-z_]*\)>$|\1|p' $yobx_headers | sort -u)
: > "$work/std.cpp"
for h in $std_headers; do echo "#include <$h>" >> "$work/std.cpp"; done
echo "int main() { return 0; }" >> "$work/std.cpp"
printf '#include <yobx/pytree.hpp>\nint main() { return 0; }\n' > "$work/yobx.cpp"
measure() {  # best of 3: seconds and peak KB
    local best_t=999 best_m=0
    for _ in 1 2 3; do
        /usr/bin/time -f "%e %M" -o "$work/t" "$cxx" -std=c++20 -O0 -Iinclude -c "$1" -o "$work/o.o"
        read -r t m < "$work/t"
        if awk -v a="$t" -v b="$best_t" 'BEGIN { exit !(a < b) }'; then best_t=$t; best_m=$m; fi
    done
    echo "$best_t $best_m"
}
read -r st sm < <(measure "$work/std.cpp")
read -r yt ym < <(measure "$work/yobx.cpp")
echo "compiler: $($cxx --version | head -1)"
echo "standard headers only : ${st} s, ${sm} KB peak"
echo "<yobx/pytree.hpp>     : ${yt} s, ${ym} KB peak"
echo "difference            : $(awk -v a="$yt" -v b="$st" 'BEGIN { printf "%.2f", a - b }') s, $((ym - sm)) KB"
