#!/bin/sh
# Build tools/gemmshim-bench (with kernels/sgemm_simt.cu and
# kernels/gemm_bf16_wgmma.cu linked in directly) into build-bench/, with
# nvcc, for the H200 (sm_90a). The binary links
# cuBLAS dynamically (rpath /usr/local/cuda/lib64) and the CUDA runtime
# statically, and runs on the device machine as built here.
#   sh tools/build-bench.sh            # -> build-bench/gemmshim-bench
# Set NVCC, CUDA_HOME or EXTRA_FLAGS to override; NAME=x builds
# build-bench/gemmshim-bench-x (tuning variants: EXTRA_FLAGS=-DGS_SIMT_BK=8 ...).
# SIMT_SRC=kernels/sgemm_simt_exp.cu builds an experimental SGEMM variant in
# place of kernels/sgemm_simt.cu (same launcher API; see sgemm_simt.NOTES.md);
# BF16=0 leaves the bf16 kernel out (the bench links it weakly).
# BF16_SRC=kernels/gemm_bf16_wgmma_persistent.cu builds the persistent bf16
# kernel (issue 5 stage 3) in place of kernels/gemm_bf16_wgmma.cu: it is
# compiled with -DGS_BF16_PERSISTENT_AS_DEFAULT=1, which makes it export the
# gs_gemm_bf16_wgmma_launch/_supports names the bench calls, so
# `--kernel bf16_wgmma` then runs the persistent kernel (layouts TN, NN and
# NT: the bench's selftest battery and shape files then cover all three;
# with the stage-1 kernel, TN only). Use a NAME, e.g.
#   NAME=persist BF16_SRC=kernels/gemm_bf16_wgmma_persistent.cu sh tools/build-bench.sh
# ptxas reports (registers, spills) go to build-bench/ptxas-<kernel>$SUFFIX.txt.
# A debug build of the bf16 kernel (mbarrier waits that trap with a message
# instead of hanging): NAME=dbg EXTRA_FLAGS=-DGS_SM90_BOUNDED_WAIT=1 sh tools/build-bench.sh
# (the persistent kernel also accepts -DGS_DEBUG_WAIT=1 for the same).
set -eu
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
ARCH="-gencode=arch=compute_90a,code=sm_90a"
FLAGS="-O3 -std=c++17 $ARCH -lineinfo ${EXTRA_FLAGS:-}"
mkdir -p build-bench
SUFFIX=${NAME:+-$NAME}
SIMT_SRC=${SIMT_SRC:-kernels/sgemm_simt.cu}
BF16=${BF16:-1}
BF16_SRC=${BF16_SRC:-kernels/gemm_bf16_wgmma.cu}
BF16_BASE=$(basename "$BF16_SRC" .cu)
BF16_DEFS=
case "$BF16_BASE" in
  gemm_bf16_wgmma_persistent) BF16_DEFS=-DGS_BF16_PERSISTENT_AS_DEFAULT=1 ;;
esac
BF16_OBJ=
# the kernel exactly as the library builds it (PIC, hidden visibility)
$NVCC $FLAGS -Xptxas -v -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Ikernels \
  -c "$SIMT_SRC" -o build-bench/sgemm_simt$SUFFIX.o 2> build-bench/ptxas-sgemm_simt$SUFFIX.txt \
  || { cat build-bench/ptxas-sgemm_simt$SUFFIX.txt; exit 1; }
grep -E "registers|spill" build-bench/ptxas-sgemm_simt$SUFFIX.txt | sed 's/^ *//' | sort | uniq -c
if [ "$BF16" != 0 ]; then
$NVCC $FLAGS $BF16_DEFS -Xptxas -v -Xptxas -warn-spills -Xcompiler -fPIC -Xcompiler -fvisibility=hidden \
  -Ikernels -c "$BF16_SRC" -o build-bench/$BF16_BASE$SUFFIX.o \
  2> build-bench/ptxas-$BF16_BASE$SUFFIX.txt \
  || { cat build-bench/ptxas-$BF16_BASE$SUFFIX.txt; exit 1; }
grep -E "registers|spill|arning" build-bench/ptxas-$BF16_BASE$SUFFIX.txt | sed 's/^ *//' | sort | uniq -c
BF16_OBJ=build-bench/$BF16_BASE$SUFFIX.o
fi
$NVCC $FLAGS -Ikernels -c tools/gemmshim-bench.cu -o build-bench/gemmshim-bench$SUFFIX.o
$NVCC $ARCH build-bench/gemmshim-bench$SUFFIX.o build-bench/sgemm_simt$SUFFIX.o \
  $BF16_OBJ -o build-bench/gemmshim-bench$SUFFIX \
  -cudart static -L"$CUDA_HOME/lib64" -lcublas -ldl -lpthread -lrt \
  -Xlinker -rpath="$CUDA_HOME/lib64"
echo "built build-bench/gemmshim-bench$SUFFIX"
