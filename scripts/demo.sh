#!/usr/bin/env bash
# Builds and runs the main example (the LibTorch demo; its files go to build/dev/examples). Usage: bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
yobx_install_deps
cmake --preset dev > /dev/null
cmake --build --preset dev --target tiny_llm_generate -j"$(nproc)" > /dev/null
cd build/dev/examples && ./tiny_llm_generate
