#!/usr/bin/env bash
# Builds and runs the main example (the LibTorch demo; its files go to build/dev/examples). Usage: bash scripts/demo.sh
# Works on Debian 12 and Debian 13 (scripts/deps.sh installs what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
yobx_install_deps
mkdir -p build
# Configure and build quietly (Debian 13's TorchConfig.cmake warns about kineto); the logs are shown on failure.
cmake --preset dev > build/dev.configure.log 2>&1 || { cat build/dev.configure.log; exit 1; }
cmake --build --preset dev --target tiny_llm_generate -j"$(nproc)" > build/dev.build.log 2>&1 || { cat build/dev.build.log; exit 1; }
cd build/dev/examples && ./tiny_llm_generate
