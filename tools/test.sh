#!/usr/bin/env bash
# Build, then run the tests: CMocka unit tests and the ELF checks run
# anywhere; the GPU checks skip (exit 77) on a machine without a GPU.
#   bash tools/test.sh --tsan   the same in build-tsan/, built with
#                               ThreadSanitizer (a race report fails a test)
set -uo pipefail
cd "$(dirname "$0")/.."
builddir=build
[ "${1:-}" = --tsan ] && builddir=build-tsan
bash tools/setup.sh ${1:-} || exit 1
make -C "$builddir" -j"$(nproc)" check > "$builddir/check-output.txt" 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' "$builddir/check-output.txt"
if [ $rc -ne 0 ]; then
  tail -n 30 "$builddir/check-output.txt"
  cat "$builddir/test-suite.log" 2>/dev/null
fi
count() { grep -c "^$1:" "$builddir/check-output.txt"; }
echo "tests ($builddir): $(count PASS) passed, $(( $(count FAIL) + $(count ERROR) + $(count XPASS) )) failed, $(count SKIP) skipped"
exit $rc
