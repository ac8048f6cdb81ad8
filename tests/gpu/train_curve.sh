#!/bin/sh
# GPU check: 200 deterministic steps of examples/train.py with our kernels
# serving the GEMMs, against the unshimmed loss curve kept in the repo
# (tests/fixtures/train/<dtype>-<steps>.txt, one loss per line): the loss
# must stay within the kernel's tolerance at every step, and the shim's log
# must show the kernel serving calls.
#   fp32 + GEMMSHIM_FP32=tc: gemm_f32_bf16x6, within 0.5%
#   fp32 + GEMMSHIM_FP32=tc-fast: gemm_f32_3xtf32, within 0.5%
#   bf16: gemm_bf16_wgmma_persistent (TN), within 2%
# GEMMSHIM_FORCE=1 routes the kernels' whole classes (the other layouts of
# fp32 go to sgemm_simt), so the check does not depend on the win tables.
# GS_TRAIN_CURVE_RECORD=DIR records the unshimmed curves into DIR instead
# (once per PyTorch or GPU change; then commit them).
# Exits 77 without a GPU or without PyTorch.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
steps=${GS_TRAIN_CURVE_STEPS:-200}
refdir=${GS_TRAIN_CURVE_REF:-$srcdir/tests/fixtures/train}
out=${TMPDIR:-/tmp}/gs-curve.$$
mkdir -p "$out"
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null
[ $? -eq 0 ] || { echo "SKIP: no PyTorch with CUDA"; rm -rf "$out"; exit 77; }
train() {  # dtype, output file, then env assignments
  dtype=$1 file=$2; shift 2
  env "$@" python3 "$srcdir/examples/train.py" --dtype "$dtype" --deterministic --steps "$steps" \
    --out "$file" > "$file.log" 2>&1 || { echo "FAIL: train.py $dtype ($*)"; tail -n 5 "$file.log"; return 1; }
}
if [ -n "${GS_TRAIN_CURVE_RECORD:-}" ]; then
  mkdir -p "$GS_TRAIN_CURVE_RECORD"
  for dtype in fp32 bf16; do
    train $dtype "$GS_TRAIN_CURVE_RECORD/$dtype-$steps.txt" || exit 1
    echo "recorded $GS_TRAIN_CURVE_RECORD/$dtype-$steps.txt"
  done
  rm -rf "$out"
  exit 0
fi
fail=0
for spec in "fp32 gemm_f32_bf16x6 0.005 GEMMSHIM_FP32=tc" "fp32 gemm_f32_3xtf32 0.005 GEMMSHIM_FP32=tc-fast" \
            "bf16 gemm_bf16_wgmma_persistent 0.02 GEMMSHIM_FP32=strict"; do
  set -- $spec
  dtype=$1 kernel=$2 tol=$3 extra=$4
  run=$dtype-$kernel
  ref="$refdir/$dtype-$steps.txt"
  [ -r "$ref" ] || { echo "FAIL: no reference curve $ref (record one: GS_TRAIN_CURVE_RECORD=DIR)"; fail=1; continue; }
  train $dtype "$out/$run.txt" LD_PRELOAD="$shim" GEMMSHIM_FORCE=1 "$extra" \
    GEMMSHIM_LOG="$out/log-$run.%p.csv" || { fail=1; continue; }
  # the log's route column (13th) names the kernel that served each row
  served=$(awk -F, -v k="$kernel" '$13 == k { n += $15 } END { print n + 0 }' "$out"/log-$run.*.csv)
  [ "$served" -gt 0 ] || { echo "FAIL: $dtype: $kernel served no call"; fail=1; }
  verdict=$(paste -d' ' "$ref" "$out/$run.txt" | awk -v tol="$tol" '
    { n++; d = ($2 - $1) / ($1 < 0 ? -$1 : $1); if (d < 0) d = -d;
      if (d > worst) { worst = d; at = n - 1 } if (d > tol || $2 != $2) bad++ }
    END { printf "%d steps, worst relative difference %.3g at step %d, %d over %g\n", n, worst, at, bad, tol;
          exit (bad > 0 || n == 0) }')
  rc=$?
  lines=$(wc -l < "$out/$run.txt")
  if [ $rc -eq 0 ] && [ "$lines" -eq "$steps" ]; then
    echo "PASS: $dtype under $kernel ($served calls served): $verdict"
  else
    echo "FAIL: $dtype under $kernel: $verdict ($lines losses)"; fail=1
  fi
  grep -h 'median_step_ms' "$out/$run.txt.log" | sed 's/^/  shim: /'
  grep -h 'median_step_ms' "$ref.log" 2>/dev/null | sed 's/^/  plain: /'
  awk -F, 'NR > 1 { print "  " $2 "," $7 "," $9 "x" $10 "x" $11 "," $13 "," $14 "," $15 }' \
    "$out"/log-$run.*.csv | sort | uniq | head -n 40
done
[ -n "${OUT:-}" ] && cp "$out"/log-*.csv "$OUT"/ 2>/dev/null
rm -rf "$out"
exit $fail
