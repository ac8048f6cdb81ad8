#!/bin/sh
# GPU check: examples/train.py gives bitwise-identical losses with and
# without the shim (deterministic mode), in fp32 and bf16, and the shim's
# log shows the entry points PyTorch reaches. Exits 77 without a GPU or
# without PyTorch.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
steps=${GS_TRAIN_STEPS:-8}
out=${TMPDIR:-/tmp}/gs-train.$$
mkdir -p "$out"
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null
rc=$?
[ $rc -eq 0 ] || { echo "SKIP: no PyTorch with CUDA"; rm -rf "$out"; exit 77; }
fail=0
check_log() {  # dtype, then the entry[,epilogue] patterns that must appear
  dtype=$1; shift
  for want in "$@"; do
    grep -q -- "$want" "$out"/log-$dtype.*.csv || { echo "FAIL: $dtype: no '$want' in the shim's log"; fail=1; }
  done
}
for dtype in fp32 bf16; do
  python3 "$srcdir/examples/train.py" --dtype $dtype --deterministic --steps "$steps" \
    --out "$out/plain-$dtype.txt" > "$out/plain-$dtype.log" 2>&1 ||
    { echo "FAIL: train.py $dtype without the shim"; tail "$out/plain-$dtype.log"; fail=1; continue; }
  GEMMSHIM_LOG="$out/log-$dtype.%p.csv" LD_PRELOAD="$shim" \
    python3 "$srcdir/examples/train.py" --dtype $dtype --deterministic --steps "$steps" \
    --out "$out/shim-$dtype.txt" > "$out/shim-$dtype.log" 2>&1 ||
    { echo "FAIL: train.py $dtype under the shim"; tail "$out/shim-$dtype.log"; fail=1; continue; }
  if cmp -s "$out/plain-$dtype.txt" "$out/shim-$dtype.txt"; then
    echo "PASS: $dtype losses bitwise identical with and without the shim ($steps steps)"
  elif grep -q ',routed,' "$out"/log-$dtype.*.csv; then
    echo "NOTE: $dtype losses differ; some GEMMs were routed (see the log)"
  else
    echo "FAIL: $dtype losses differ although every call was forwarded"; fail=1
  fi
  grep -h 'median_step_ms' "$out/plain-$dtype.log" "$out/shim-$dtype.log" | sed 's/^/  /'
done
check_log fp32 ',cublasSgemm_v2,' ',cublasLtMatmul,f32,f32,f32,[^,]*,[A-Z]*,bias,' ',cublasSgemmStridedBatched,'
check_log bf16 ',cublasGemmEx,bf16,' ',cublasLtMatmul,bf16,bf16,bf16,[^,]*,[A-Z]*,bias,' ',cublasGemmStridedBatchedEx,bf16,'
for f in "$out"/log-*.csv; do echo "--- $(basename "$f")"; cat "$f"; done
[ -n "${OUT:-}" ] && cp "$out"/log-*.csv "$OUT"/ 2>/dev/null
rm -rf "$out"
exit $fail
