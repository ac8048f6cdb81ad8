#!/bin/sh
# GPU check: A/B mode on a real PyTorch workload. examples/train.py runs
# under the shim with every GEMM of a kernel's class routed
# (GEMMSHIM_FORCE=1: no shape is a measured win yet) and every routed call
# compared (GEMMSHIM_AB=1), in fp32 (SIMT SGEMM) and bf16 (wgmma kernel).
# Asserts that A/B rows exist for the dtype's kernel, that every comparison
# is within the dtype's tolerance, and that the loss stays close to the
# plain run's. Exits 77 without a GPU or PyTorch.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
out=${TMPDIR:-/tmp}/gs-abtrain.$$
mkdir -p "$out"
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null ||
  { echo "SKIP: no PyTorch with CUDA"; rm -rf "$out"; exit 77; }
steps=${GS_TRAIN_STEPS:-6}
fail=0
# dtype, kernel, tolerance on rel_fro vs cuBLAS, tolerance on the loss
for spec in "fp32 sgemm_simt 1e-5 1e-3" "bf16 gemm_bf16_wgmma_persistent 1e-2 5e-2"; do
  set -- $spec
  dtype=$1 kernel=$2 tol=$3 loss_tol=$4
  python3 "$srcdir/examples/train.py" --dtype "$dtype" --steps "$steps" --out "$out/plain-$dtype.txt" \
    > "$out/plain-$dtype.log" 2>&1
  GEMMSHIM_FORCE=1 GEMMSHIM_AB=1 GEMMSHIM_AB_LOG="$out/ab-$dtype.%p.csv" \
    GEMMSHIM_LOG="$out/log-$dtype.%p.csv" LD_PRELOAD="$shim" \
    python3 "$srcdir/examples/train.py" --dtype "$dtype" --steps "$steps" \
    --out "$out/ab-$dtype.txt" > "$out/ab-run-$dtype.log" 2>&1 ||
    { echo "FAIL: train.py $dtype under A/B"; tail "$out/ab-run-$dtype.log"; fail=1; continue; }
  rows=$(cat "$out"/ab-$dtype.*.csv 2>/dev/null | grep -c ",$kernel,")
  [ "$rows" -gt 0 ] || { echo "FAIL: $dtype: no A/B rows for $kernel"; fail=1; }
  # every comparison within tolerance (rel_fro is column 18)
  bad=$(cat "$out"/ab-$dtype.*.csv | awk -F, -v t="$tol" '$1 != "time_s" && !($18 + 0 <= t + 0) {n++} END {print n + 0}')
  [ "$bad" -eq 0 ] || { echo "FAIL: $dtype: $bad comparisons above $tol"; fail=1; }
  echo "$dtype: $rows A/B rows for $kernel, $bad above $tol"
  paste -d' ' "$out/plain-$dtype.txt" "$out/ab-$dtype.txt" |
    awk -v t="$loss_tol" '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d} END {printf "  max loss difference: %.3g\n", m; exit !(m < t + 0)}' ||
    { echo "FAIL: $dtype: losses drift"; fail=1; }
  grep -h median_step_ms "$out/plain-$dtype.log" "$out/ab-run-$dtype.log" | sed 's/^/  /'
  if [ -x "$builddir/tools/gemmshim-report" ]; then
    "$builddir/tools/gemmshim-report" "$out"/ab-$dtype.*.csv --summary "$(ls "$out"/log-$dtype.*.csv | head -1)" ||
      { echo "FAIL: gemmshim-report"; fail=1; }
    [ -n "${OUT:-}" ] && "$builddir/tools/gemmshim-report" "$out"/ab-$dtype.*.csv --svg "$OUT/ab_train_$dtype.svg" >/dev/null
  fi
  [ -n "${OUT:-}" ] && cp "$out"/ab-$dtype.*.csv "$out"/log-$dtype.*.csv "$OUT/" 2>/dev/null
done
rm -rf "$out"
[ $fail -eq 0 ] && echo "PASS: A/B on train.py, fp32 and bf16"
exit $fail
