#!/usr/bin/env bash
# Every doctest test case is a ctest test of the same name. doctest_discover_tests reads the
# names as a CMake list: a name with a ';' became two tests, each selecting no test case, and
# both passed without running anything. Compares each binary's test cases with what ctest lists.
# Usage: bash check_test_names.sh <ctest> <build dir> <prefix>=<test binary>...
set -uo pipefail
ctest=$1
build=$2
shift 2
registered=$(cd "$build" && "$ctest" -N | sed -n 's/^ *Test *#[0-9]*: //p')
missing=0
count=0
for spec in "$@"; do
    prefix=${spec%%=*}
    binary=${spec#*=}
    if ! listed=$("$binary" --list-test-cases --no-version); then
        echo "cannot list the test cases of $binary"
        exit 1
    fi
    names=$(grep -v -e '^=*$' -e '^\[doctest\] ' <<< "$listed")
    while IFS= read -r name; do
        count=$((count + 1))
        # doctest's discovery drops the space that ends a TEST_PREFIX (2.4.9): either form
        if ! grep -qxF -e "$prefix$name" -e "${prefix% }$name" <<< "$registered"; then
            echo "not a ctest test of its own: '$prefix$name'"
            missing=$((missing + 1))
        fi
    done <<< "$names"
done
if [ "$missing" -ne 0 ]; then
    echo "$missing of $count test cases are not run by ctest (a ';' in the name?)"
    exit 1
fi
echo "test names ok: $count test cases, each a ctest test"
