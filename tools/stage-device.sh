#!/bin/sh
# The GPU job's binaries from a build folder, copied into a small folder of
# the same layout (debug info stripped), for carrying to the GPU machine:
# the whole build folder, object files and CPU tests included, is larger
# than what a device call carries (64 MiB).
#   sh tools/stage-device.sh [BUILDDIR [OUTDIR]]   (default build, build-dev)
# Then, there: bash tools/device-job.sh OUTDIR
set -eu
cd "$(dirname "$0")/.."
src=${1:-build}
dst=${2:-build-dev}
[ -f "$src/libgemmshim.so" ] || { echo "stage-device: no $src/libgemmshim.so: build first" >&2; exit 2; }
rm -rf "$dst"
mkdir -p "$dst"
n=0
checks=$(cd "$src" && ls tests/gpu/check_* 2>/dev/null || true)
for f in libgemmshim.so tools/gemmshim tools/gemmshim-report tools/gemmshim-bench \
         examples/cublas_client tests/gpu/reset_client $checks \
         dev/bf16_stage1/bitident dev/decode_split/sweep dev/decode_ring/ring dev/tc_probe/probe dev/bf16x6/bf16x6 \
         dev/bf16x6/bf16x6-debug dev/decode_pdl/pdl; do
  p="$src/$f"
  [ -f "$p" ] && [ -x "$p" ] || continue
  mkdir -p "$dst/$(dirname "$f")"
  cp -p "$p" "$dst/$f"
  strip --strip-debug "$dst/$f"
  n=$((n + 1))
done
echo "stage-device: $n files in $dst ($(du -sh "$dst" | cut -f1))"
