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
# ptxas reports (registers, spills) go to build-bench/ptxas-<kernel>$SUFFIX.txt.
# A debug build of the bf16 kernel (mbarrier waits that trap with a message
# instead of hanging): NAME=dbg EXTRA_FLAGS=-DGS_SM90_BOUNDED_WAIT=1 sh tools/build-bench.sh
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
BF16_OBJ=
# the kernel exactly as the library builds it (PIC, hidden visibility)
$NVCC $FLAGS -Xptxas -v -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Ikernels \
  -c "$SIMT_SRC" -o build-bench/sgemm_simt$SUFFIX.o 2> build-bench/ptxas-sgemm_simt$SUFFIX.txt \
  || { cat build-bench/ptxas-sgemm_simt$SUFFIX.txt; exit 1; }
grep -E "registers|spill" build-bench/ptxas-sgemm_simt$SUFFIX.txt | sed 's/^ *//' | sort | uniq -c
if [ "$BF16" != 0 ]; then
$NVCC $FLAGS -Xptxas -v -Xptxas -warn-spills -Xcompiler -fPIC -Xcompiler -fvisibility=hidden \
  -Ikernels -c kernels/gemm_bf16_wgmma.cu -o build-bench/gemm_bf16_wgmma$SUFFIX.o \
  2> build-bench/ptxas-gemm_bf16_wgmma$SUFFIX.txt \
  || { cat build-bench/ptxas-gemm_bf16_wgmma$SUFFIX.txt; exit 1; }
grep -E "registers|spill|arning" build-bench/ptxas-gemm_bf16_wgmma$SUFFIX.txt | sed 's/^ *//' | sort | uniq -c
BF16_OBJ=build-bench/gemm_bf16_wgmma$SUFFIX.o
fi
$NVCC $FLAGS -Ikernels -c tools/gemmshim-bench.cu -o build-bench/gemmshim-bench$SUFFIX.o
$NVCC $ARCH build-bench/gemmshim-bench$SUFFIX.o build-bench/sgemm_simt$SUFFIX.o \
  $BF16_OBJ -o build-bench/gemmshim-bench$SUFFIX \
  -cudart static -L"$CUDA_HOME/lib64" -lcublas -ldl -lpthread -lrt \
  -Xlinker -rpath="$CUDA_HOME/lib64"
echo "built build-bench/gemmshim-bench$SUFFIX"
