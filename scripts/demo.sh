#!/usr/bin/env bash
# Builds and runs the main example. Usage: bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
yobx_install_deps
cmake --preset dev > /dev/null
cmake --build --preset dev --target pytree_kv_cache -j"$(nproc)" > /dev/null
./build/dev/examples/pytree_kv_cache
