#!/bin/sh
# The library exports exactly the cuBLAS names it interposes, unversioned,
# and needs neither libcublas, libcublasLt nor libcuda.
set -u
lib=${GS_SHIM:-./libgemmshim.so}
[ -f "$lib" ] || { echo "test_exports: $lib not built"; exit 1; }
expected="cublasGemmEx
cublasGemmEx_64
cublasGemmStridedBatchedEx
cublasGemmStridedBatchedEx_64
cublasLtMatmul
cublasSgemmStridedBatched
cublasSgemmStridedBatched_64
cublasSgemm_v2
cublasSgemm_v2_64"
# Defined dynamic symbols, less the linker's own (_init, _fini, ...).
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' | sort)
fail=0
if [ "$actual" != "$expected" ]; then
  echo "FAIL: exported symbols differ from the interposed list. Got:"
  printf '%s\n' "$actual"
  echo "Expected:"
  printf '%s\n' "$expected"
  fail=1
fi
if nm -D --defined-only "$lib" | grep -E ' cublas' | grep -q '@'; then
  echo "FAIL: an exported symbol carries a version (interposition would break)"
  fail=1
fi
needed=$(readelf -d "$lib" | awk '/NEEDED/ {print $5}')
for bad in libcublas libcublasLt libcuda.so libcudart; do
  if printf '%s\n' "$needed" | grep -q "^\[$bad"; then
    echo "FAIL: $lib has DT_NEEDED on $bad"
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "PASS: 9 unversioned exports, needs only: $(echo $needed | tr -d '[]')"
exit $fail
