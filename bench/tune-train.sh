#!/bin/sh
# Issue 20's end-to-end measurement on one examples/train.py configuration:
# first the GEMMs' share of the GPU kernel time (torch.profiler, plain: the
# most the tuning can save), then record its GEMM calls, tune them on this
# GPU, then in turn plain and under
# the tuned table (GS_PAIRS pairs of runs, each a process, median_step_ms of
# GS_STEPS steps), then one run under the table in A/B mode (every routed
# call compared with cuBLAS) and its report. Everything lands in OUTDIR.
#   sh bench/tune-train.sh OUTDIR [TRAIN.PY ARGS...]
#   GS_BUILDDIR (default build)  GS_PAIRS (3)  GS_STEPS (30)
#   GS_TUNE_BUDGET (300)  GS_TUNE_FLAGS (e.g. --fp32-tc)
# A run with GEMMSHIM_FP32=tc in the environment tunes and runs fp32 with
# the opt-in tensor-core kernels as candidates; the plain runs never load
# the shim.
set -u
[ $# -ge 1 ] || { echo "usage: sh bench/tune-train.sh OUTDIR [TRAIN.PY ARGS...]" >&2; exit 2; }
out=$1; shift
src=$(cd "$(dirname "$0")/.." && pwd)
b=${GS_BUILDDIR:-$src/build}
gs="$b/tools/gemmshim"
lib="$b/libgemmshim.so"
train="$src/examples/train.py"
mkdir -p "$out"
fail=0
step_ms() { sed -n 's/.*median_step_ms=\([0-9.]*\).*/\1/p' "$1"; }

env -u GEMMSHIM_FP32 python3 "$src/tests/gpu/gemm_kernel_time.py" "$train" "$out/share.json" "$@" --steps 10 \
  > "$out/share.out" 2>&1 &&
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
g, o = j["gemm_kernel_us"], j["other_kernel_us"]
print("GEMM share of GPU kernel time (plain): %.1f%% (%.0f of %.0f us)" % (100 * g / (g + o), g, g + o))' \
    "$out/share.json" || echo "tune-train: the GEMM share was not measured: $(tail -1 "$out/share.out")"
"$gs" --lib "$lib" record -o "$out/record.csv" -- python3 "$train" "$@" --steps 4 \
  > "$out/record.out" 2>&1 || { echo "tune-train: record failed: $(tail -2 "$out/record.out")"; exit 1; }
# shellcheck disable=SC2086 # GS_TUNE_FLAGS is a list of words
"$gs" --lib "$lib" tune --bench "$b/tools/gemmshim-bench" -o "$out/table.csv" \
  --budget "${GS_TUNE_BUDGET:-300}" ${GS_TUNE_FLAGS:-} "$out/record.csv" > "$out/tune.out" 2>&1 ||
  { echo "tune-train: tune failed: $(tail -2 "$out/tune.out")"; exit 1; }
tail -n 30 "$out/tune.out"

: > "$out/steps.txt"
i=1
while [ "$i" -le "${GS_PAIRS:-3}" ]; do
  env -u GEMMSHIM_FP32 python3 "$train" "$@" --steps "${GS_STEPS:-30}" \
    --out "$out/loss-plain-$i.txt" > "$out/plain-$i.out" 2>&1 || fail=1
  "$gs" --lib "$lib" run --table "$out/table.csv" -- python3 "$train" "$@" --steps "${GS_STEPS:-30}" \
    --out "$out/loss-tuned-$i.txt" > "$out/tuned-$i.out" 2>&1 || fail=1
  echo "plain $(step_ms "$out/plain-$i.out") tuned $(step_ms "$out/tuned-$i.out")" >> "$out/steps.txt"
  i=$((i + 1))
done
grep -h 'is not used on device' "$out"/tuned-*.out | head -1 | sed 's/^/tune-train: table refused: /'
sort -n -k2 "$out/steps.txt" | awk '{p[NR] = $2} END {print "plain median_step_ms (median of runs):", p[int((NR + 1) / 2)]}'
sort -n -k4 "$out/steps.txt" | awk '{t[NR] = $4} END {print "tuned median_step_ms (median of runs):", t[int((NR + 1) / 2)]}'
cat "$out/steps.txt"
grep -h 'gemmshim:' "$out/tuned-1.out"
cmp -s "$out/loss-plain-1.txt" "$out/loss-tuned-1.txt" && echo "losses: bit-identical plain and tuned" ||
  echo "losses: differ plain and tuned (first run of each)"

GEMMSHIM_AB=1 GEMMSHIM_AB_LOG="$out/ab.%p.csv" GEMMSHIM_LOG="$out/log.%p.csv" \
  "$gs" --lib "$lib" run --table "$out/table.csv" -- python3 "$train" "$@" --steps 6 \
  > "$out/ab-run.out" 2>&1 || fail=1
if ls "$out"/ab.*.csv > /dev/null 2>&1; then
  "$gs" report "$out"/ab.*.csv --summary "$(ls "$out"/log.*.csv | head -1)" > "$out/ab-report.txt" 2>&1 || fail=1
  cat "$out/ab-report.txt"
else
  echo "tune-train: no A/B rows (nothing routed?)"
fi
exit $fail
