#!/usr/bin/env bash
# Installs what is missing, builds (scripts/setup.sh), then runs every test with CTest.
#   scripts/test.sh [ctest args...]
# Environment: as scripts/setup.sh (BUILD_DIR, BUILD_TYPE, CMAKE_ARGS).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
