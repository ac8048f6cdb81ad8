#!/usr/bin/env bash
# Build, then run the tests: CMocka unit tests and the ELF checks run
# anywhere; the GPU checks skip (exit 77) on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
make -C build -j"$(nproc)" check || { cat build/test-suite.log 2>/dev/null; exit 1; }
