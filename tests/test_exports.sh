#!/bin/sh
# The library exports exactly the cuBLAS names it interposes and, on x86-64
# and aarch64, dlsym and dlvsym, all unversioned; it needs neither
# libcublas, libcublasLt nor libcuda; and its dlsym and dlvsym end in a
# jump, never a return (glibc must see the program's caller).
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
case $(uname -m) in
  x86_64|aarch64) expected="$expected
dlsym
dlvsym" ;;
esac
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
if nm -D --defined-only "$lib" | grep -E ' (cublas|dlv?sym)' | grep -q '@'; then
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
for f in dlsym dlvsym; do
  printf '%s\n' "$expected" | grep -qx "$f" || continue
  last=$(objdump -d --no-show-raw-insn --disassemble="$f" "$lib" | awk -v f="<$f>:" '
    $2 == f { inside = 1; next }
    inside && /^$/ { exit }
    inside && NF > 1 { op = $2 }
    END { print op }')
  body=$(objdump -d --no-show-raw-insn --disassemble="$f" "$lib")
  calls_real=$(printf '%s\n' "$body" | grep -c -E '(call|blr).*(\*|x1[67])|[[:space:]]ret')
  case $last in
    jmp|br) ;;
    *) echo "FAIL: $f ends in '$last', not a jump to the real $f"; fail=1 ;;
  esac
  [ "$calls_real" -eq 0 ] || { echo "FAIL: $f returns or calls through a pointer (the real $f would see the shim as its caller)"; fail=1; }
done
[ $fail -eq 0 ] && echo "PASS: $(printf '%s\n' "$expected" | wc -l) unversioned exports, dlsym/dlvsym end in a jump, needs only: $(echo $needed | tr -d '[]')"
exit $fail
