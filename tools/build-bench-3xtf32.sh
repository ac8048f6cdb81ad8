#!/bin/sh
# Build tools/gemmshim-bench with the 3xTF32 FP32 kernel
# (kernels/gemm_f32_3xtf32.cu) linked in, beside the SIMT SGEMM and (by
# default) the BF16 wgmma kernel, into build-3xtf32/ with nvcc for the H200
# (sm_90a). The binary links cuBLAS dynamically (rpath $CUDA_HOME/lib64) and
# the CUDA runtime statically, and runs on the device machine as built here.
# (tools/build-bench.sh builds the other modes into build-bench/; this script
# leaves that folder alone.)
#
#   sh tools/build-bench-3xtf32.sh          # -> build-3xtf32/gemmshim-bench
#   NAME=dbg EXTRA_FLAGS=-DGS_DEBUG_WAIT sh tools/build-bench-3xtf32.sh
#                                           # -> build-3xtf32/gemmshim-bench-dbg:
#                                           #    mbarrier waits that trap with a
#                                           #    message instead of hanging
#   NAME=v2 EXTRA_FLAGS="-DGS_3XTF32_V2=1 -DGS_3XTF32_DEFER_BIG=0" \
#     sh tools/build-bench-3xtf32.sh        # a tuning variant (here the
#                                           # consumer loop measured first;
#                                           # the GS_3XTF32_* macros are
#                                           # listed in the kernel's source)
#   NAME=tn EXTRA_FLAGS=-DGS_3XTF32_LAYOUTS=0 sh tools/build-bench-3xtf32.sh
#                                           # -> build-3xtf32/gemmshim-bench-tn:
#                                           #    the kernel for layout TN only
#                                           #    (the default build has TN, NN,
#                                           #    NT and TT; the selftest runs
#                                           #    its battery per layout)
#   F32X3=0 sh tools/build-bench-3xtf32.sh  # without the 3xTF32 object: the
#                                           # bench links (weak symbols) and
#                                           # --kernel f32_3xtf32 exits 2
#   BF16=0 ...                              # without the BF16 object
#
# Set NVCC, CUDA_HOME, EXTRA_FLAGS (all kernels and the bench), NAME, OUT
# (output folder) to override. ptxas reports go to
# $OUT/ptxas-<kernel>$SUFFIX.txt; the default build fails if the 3xTF32
# kernel spills or ptxas says it serialized or patched its wgmma pipeline
# (C7510-C7519 messages), since its design depends on neither happening
# (with EXTRA_FLAGS set, e.g. the debug build, whose printf is a call inside
# the pipeline, that is only a note; EXTRA_FLAGS=-DGS_3XTF32_LAYOUTS=0 alone
# is held to the default's rule).
set -eu
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
ARCH="-gencode=arch=compute_90a,code=sm_90a"
FLAGS="-O3 -std=c++17 $ARCH -lineinfo ${EXTRA_FLAGS:-}"
OUT=${OUT:-build-3xtf32}
SUFFIX=${NAME:+-$NAME}
BF16=${BF16:-1}
F32X3=${F32X3:-1}
mkdir -p "$OUT"
# every kernel exactly as the library would build it (PIC, hidden visibility)
KFLAGS="-Xptxas -v -Xptxas -warn-spills -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Ikernels"
OBJS="$OUT/sgemm_simt$SUFFIX.o"
$NVCC $FLAGS $KFLAGS -c kernels/sgemm_simt.cu -o "$OUT/sgemm_simt$SUFFIX.o" \
  2> "$OUT/ptxas-sgemm_simt$SUFFIX.txt" || { cat "$OUT/ptxas-sgemm_simt$SUFFIX.txt"; exit 1; }
if [ "$BF16" != 0 ]; then
  $NVCC $FLAGS $KFLAGS -c kernels/gemm_bf16_wgmma.cu -o "$OUT/gemm_bf16_wgmma$SUFFIX.o" \
    2> "$OUT/ptxas-gemm_bf16_wgmma$SUFFIX.txt" \
    || { cat "$OUT/ptxas-gemm_bf16_wgmma$SUFFIX.txt"; exit 1; }
  OBJS="$OBJS $OUT/gemm_bf16_wgmma$SUFFIX.o"
fi
if [ "$F32X3" != 0 ]; then
  R="$OUT/ptxas-gemm_f32_3xtf32$SUFFIX.txt"
  $NVCC $FLAGS $KFLAGS -c kernels/gemm_f32_3xtf32.cu -o "$OUT/gemm_f32_3xtf32$SUFFIX.o" \
    2> "$R" || { cat "$R"; exit 1; }
  echo "gemm_f32_3xtf32$SUFFIX:"
  grep -E "registers|spill|arning|C75" "$R" | sed 's/^ *//; s/ in function.*//' | sort | uniq -c
  # Strict for the default build only: the debug build's printf (a call in
  # the pipeline) and tuning variants may legitimately spill or serialize.
  PROBLEM=
  if grep -q "bytes spill stores" "$R" && ! grep -q " 0 bytes spill stores, 0 bytes spill loads" "$R"; then
    PROBLEM="spills registers"
  fi
  if grep -q "C75[01][0-9]" "$R"; then
    PROBLEM="${PROBLEM:+$PROBLEM and }has its wgmma pipeline changed by ptxas"
  fi
  case "${EXTRA_FLAGS:-}" in
    "" | "-DGS_3XTF32_LAYOUTS=0") STRICT=1 ;;
    *) STRICT=0 ;;
  esac
  if [ -n "$PROBLEM" ]; then
    if [ "$STRICT" = 1 ]; then
      echo "gemm_f32_3xtf32 $PROBLEM (see $R)" >&2
      exit 1
    fi
    echo "note: this variant (EXTRA_FLAGS=$EXTRA_FLAGS) $PROBLEM: fine for a debug build, not for timing" >&2
  fi
  OBJS="$OBJS $OUT/gemm_f32_3xtf32$SUFFIX.o"
fi
$NVCC $FLAGS -Ikernels -c tools/gemmshim-bench.cu -o "$OUT/gemmshim-bench$SUFFIX.o"
# shellcheck disable=SC2086 # OBJS is a list
$NVCC $ARCH "$OUT/gemmshim-bench$SUFFIX.o" $OBJS -o "$OUT/gemmshim-bench$SUFFIX" \
  -cudart static -L"$CUDA_HOME/lib64" -lcublas -ldl -lpthread -lrt \
  -Xlinker -rpath="$CUDA_HOME/lib64"
echo "built $OUT/gemmshim-bench$SUFFIX ($OBJS)"
