#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (GoogleTest via CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
