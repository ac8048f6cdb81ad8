#!/bin/sh
# GPU check: GEMMSHIM_TIME=1 on examples/train.py (bf16, a GPU-bound size)
# gives per-row times whose sum is within 10% of the GPU time of the kernels
# launched inside PyTorch's GEMM ops, read from a torch.profiler trace of the
# same run (tests/gpu/gemm_kernel_time.py; nsys does not work on the device).
# Every GEMM op of train.py reaches cuBLAS, so those are the calls the shim
# saw. The shim's own log must show the rows timed. Then, for information
# only, the same with GEMMSHIM_TIME=10 (one call in 10 sampled).
# Exits 77 without a GPU or without PyTorch.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
steps=${GS_TIME_STEPS:-30}
out=${TMPDIR:-/tmp}/gs-time.$$
mkdir -p "$out"
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null
[ $? -eq 0 ] || { echo "SKIP: no PyTorch with CUDA"; rm -rf "$out"; exit 77; }
train_args="--dtype bf16 --d-model 4096 --heads 32 --seq 1024 --batch 8 --layers 4 --steps $steps"
fail=0
for every in 1 10; do
  # shellcheck disable=SC2086
  env LD_PRELOAD="$shim" GEMMSHIM_LOG="$out/log-time$every.%p.csv" GEMMSHIM_TIME=$every \
    python3 "$srcdir/tests/gpu/gemm_kernel_time.py" "$srcdir/examples/train.py" \
    "$out/prof$every.json" $train_args > "$out/run$every.log" 2>&1 ||
    { echo "FAIL: train.py under the profiler and the shim (GEMMSHIM_TIME=$every)";
      tail -n 20 "$out/run$every.log"; fail=1; continue; }
  python3 - "$every" "$out/prof$every.json" "$out"/log-time$every.*.csv <<'EOF' || fail=1
import csv, json, sys
every, prof_path, logs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
prof = json.load(open(prof_path))
calls = timed = captured = dropped = 0
total_us = 0.0
rows = untimed_rows = 0
for path in logs:
    with open(path) as f:
        first = f.readline().strip()
        if first != "# gemmshim log v4":
            print("FAIL: %s: first line %r, not a v4 log" % (path, first)); sys.exit(1)
        for r in csv.DictReader(f):
            if r["pid"] == "pid":
                continue
            rows += 1
            calls += int(r["count"])
            timed += int(r["timed"])
            captured += int(r["captured"])
            dropped += int(r["time_dropped"])
            if r["est_total_us"] == "-":
                untimed_rows += 1
            else:
                total_us += float(r["est_total_us"])
gemm_us = prof["gemm_kernel_us"]
ratio = total_us / gemm_us if gemm_us else float("nan")
print("GEMMSHIM_TIME=%d: the log: %d rows, %d calls, %d timed, %d captured, %d dropped, "
      "%d rows without a time; sum of est_total_us %.0f us" %
      (every, rows, calls, timed, captured, dropped, untimed_rows, total_us))
print("  the profiler: %d GEMM ops, %d kernels in them, %.0f us of GEMM kernel time "
      "(%.0f us in other kernels, %d kernels without a launch record)" %
      (prof["gemm_ops"], prof["gemm_kernels"], gemm_us, prof["other_kernel_us"],
       prof["unattributed_kernels"]))
for name, us in prof["top_gemm_kernels_us"]:
    print("    %10.0f us  %s" % (us, name))
print("  shim / profiler = %.4f" % ratio)
ok = True
if timed == 0:
    print("FAIL: GEMMSHIM_TIME=%d: the shim timed no call" % every); ok = False
if every == 1:
    if calls != prof["gemm_ops"]:
        print("NOTE: the shim saw %d calls, the profiler %d GEMM ops" % (calls, prof["gemm_ops"]))
    if timed + dropped + captured != calls:
        print("FAIL: with GEMMSHIM_TIME=1 every call is timed, dropped or captured: "
              "%d + %d + %d != %d" % (timed, dropped, captured, calls)); ok = False
    if not abs(ratio - 1) <= 0.10:
        print("FAIL: the shim's GEMM time is %.1f%% off the profiler's (at most 10%%)" %
              (100 * (ratio - 1))); ok = False
    else:
        print("PASS: the shim's per-row times sum to within %.1f%% of the profiler's GEMM "
              "kernel time" % (100 * abs(ratio - 1)))
else:
    print("INFO: sampled 1 in %d: the estimate is %.1f%% off the profiler's GEMM kernel time" %
          (every, 100 * (ratio - 1)))
sys.exit(0 if ok else 1)
EOF
  "$builddir/tools/gemmshim-report" --summary "$out"/log-time$every.*.csv \
    --time-svg "$out/time$every.svg" | sed -n '/^GEMM time/,$p' | head -n 30
done
grep -h 'median_step_ms' "$out"/run*.log | sed 's/^/  /'
[ -n "${OUT:-}" ] && cp "$out"/log-time*.csv "$out"/prof*.json "$out"/time*.svg "$OUT"/ 2>/dev/null
rm -rf "$out"
exit $fail
