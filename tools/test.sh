#!/usr/bin/env bash
# Build, then run the tests: CMocka unit tests and the ELF checks run
# anywhere; the GPU checks skip (exit 77) on a machine without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
make -C build -j"$(nproc)" check > build/check-output.txt 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' build/check-output.txt
if [ $rc -ne 0 ]; then
  tail -n 30 build/check-output.txt
  cat build/test-suite.log 2>/dev/null
fi
count() { grep -c "^$1:" build/check-output.txt; }
echo "tests: $(count PASS) passed, $(( $(count FAIL) + $(count ERROR) + $(count XPASS) )) failed, $(count SKIP) skipped"
exit $rc
