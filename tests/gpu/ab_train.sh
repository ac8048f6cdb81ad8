#!/bin/sh
# GPU check: A/B mode on a real PyTorch workload. examples/train.py (fp32)
# runs under the shim with every FP32 GEMM of the kernel's class routed
# (GEMMSHIM_FORCE=1: no shape is a measured win yet) and every routed call
# compared (GEMMSHIM_AB=1). Asserts that A/B rows exist, that every
# comparison is within tolerance, and that the loss stays close to the
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
python3 "$srcdir/examples/train.py" --dtype fp32 --steps "$steps" --out "$out/plain.txt" > "$out/plain.log" 2>&1
GEMMSHIM_FORCE=1 GEMMSHIM_AB=1 GEMMSHIM_AB_LOG="$out/ab.%p.csv" GEMMSHIM_LOG="$out/log.%p.csv" \
  LD_PRELOAD="$shim" python3 "$srcdir/examples/train.py" --dtype fp32 --steps "$steps" \
  --out "$out/ab.txt" > "$out/ab-run.log" 2>&1 || { echo "FAIL: train.py under A/B"; tail "$out/ab-run.log"; exit 1; }
fail=0
rows=$(cat "$out"/ab.*.csv 2>/dev/null | grep -c -v '^time_s')
[ "$rows" -gt 0 ] || { echo "FAIL: no A/B rows"; fail=1; }
# every comparison within 1e-5 relative Frobenius (column 18)
bad=$(cat "$out"/ab.*.csv | awk -F, '$1 != "time_s" && !($18 + 0 <= 1e-5) {n++} END {print n + 0}')
[ "$bad" -eq 0 ] || { echo "FAIL: $bad comparisons above 1e-5"; fail=1; }
echo "A/B rows: $rows, above tolerance: $bad"
# the loss curves agree to FP32 noise
paste -d' ' "$out/plain.txt" "$out/ab.txt" | awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d} END {printf "max loss difference: %.3g\n", m; exit !(m < 1e-3)}' ||
  { echo "FAIL: losses drift"; fail=1; }
grep -h median_step_ms "$out/plain.log" "$out/ab-run.log"
if [ -x "$builddir/tools/gemmshim-report" ]; then
  "$builddir/tools/gemmshim-report" "$out"/ab.*.csv --summary "$(ls "$out"/log.*.csv | head -1)" ||
    { echo "FAIL: gemmshim-report"; fail=1; }
  [ -n "${OUT:-}" ] && "$builddir/tools/gemmshim-report" "$out"/ab.*.csv --svg "$OUT/ab_train.svg" >/dev/null
fi
cat "$out"/log.*.csv | head -40
[ -n "${OUT:-}" ] && cp "$out"/ab.*.csv "$OUT/" 2>/dev/null
rm -rf "$out"
[ $fail -eq 0 ] && echo "PASS: A/B on train.py"
exit $fail
