#!/bin/sh
# The GPU job's binaries from a build folder, copied into a small folder of
# the same layout (debug info stripped), for carrying to the GPU machine:
# the whole build folder, object files and CPU tests included, is larger
# than what a device call carries (64 MiB).
#   sh tools/stage-device.sh [BUILDDIR [OUTDIR]]   (default build, build-dev)
#   GS_STAGE_SKIP="dev/decode_ring/ring ..."        leave these out
#   GS_STAGE_PACK=1   also pack OUTDIR into OUTDIR-pack/stage.tar.xz (the
#                     binaries shrink about tenfold: all of them fit), then
#                     carry OUTDIR-pack and, there, first:
#                     tar -xJf OUTDIR-pack/stage.tar.xz
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
         dev/bf16x6/bf16x6-debug dev/decode_pdl/pdl dev/sgemm_kinds/kinds; do
  p="$src/$f"
  [ -f "$p" ] && [ -x "$p" ] || continue
  case " ${GS_STAGE_SKIP:-} " in *" $f "*) continue ;; esac
  mkdir -p "$dst/$(dirname "$f")"
  cp -p "$p" "$dst/$f"
  strip --strip-debug "$dst/$f"
  n=$((n + 1))
done
kib=$(du -sk "$dst" | cut -f1)
echo "stage-device: $n files in $dst ($((kib / 1024)) MiB)"
if [ "${GS_STAGE_PACK:-0}" = 1 ]; then
  rm -rf "$dst-pack" && mkdir -p "$dst-pack"
  tar -cJf "$dst-pack/stage.tar.xz" "$dst"
  kib=$(du -sk "$dst-pack" | cut -f1)
  echo "stage-device: packed into $dst-pack/stage.tar.xz ($((kib / 1024)) MiB)"
  dst=$dst-pack
fi
# what a device call carries: 64 MiB in all
[ "$kib" -le $((64 * 1024)) ] ||
  echo "stage-device: $dst is over the 64 MiB a device call carries: leave some out (GS_STAGE_SKIP) or pack (GS_STAGE_PACK=1)" >&2
