#!/bin/sh
# Issue 20's end-to-end measurement on one examples/train.py configuration:
# first the GEMMs' share of the GPU kernel time (torch.profiler, plain: the
# most tuning can save), then record its GEMM calls, tune them on this GPU,
# run it in turn plain and under the tuned table (GS_PAIRS pairs of runs,
# each a process, median_step_ms of GS_STEPS steps), then once under the
# table in A/B mode (every routed call compared with cuBLAS) and report.
# Every file lands in OUTDIR (earlier A/B files there are removed first);
# the summary (share, medians, the losses' verdict) is printed and kept in
# OUTDIR/summary.txt. Exit status 1 when a step failed.
#   sh bench/tune-train.sh OUTDIR [TRAIN.PY ARGS...]
#   GS_BUILDDIR (default build)  GS_PAIRS (3)  GS_STEPS (30)
#   GS_TUNE_BUDGET (300)  GS_TUNE_FLAGS (e.g. --fp32-tc)
# A run with GEMMSHIM_FP32=tc in the environment tunes and runs fp32 with
# the opt-in tensor-core kernels as candidates; the plain runs never load
# the shim.
set -u
[ $# -ge 1 ] || { echo "usage: sh bench/tune-train.sh OUTDIR [TRAIN.PY ARGS...]" >&2; exit 2; }
out=$1; shift
pairs=${GS_PAIRS:-3}
case $pairs in '' | *[!0-9]* | 0) echo "tune-train: GS_PAIRS must be a positive integer" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
b=${GS_BUILDDIR:-$src/build}
gs="$b/tools/gemmshim"
lib="$b/libgemmshim.so"
train="$src/examples/train.py"
mkdir -p "$out"
rm -f "$out"/ab.*.csv "$out"/log.*.csv
fail=0
say() { echo "$*" | tee -a "$out/summary.txt"; }
: > "$out/summary.txt"
# a run's median step time, or "-" when it printed none (it failed)
step_ms() {
  v=$(sed -n 's/.*median_step_ms=\([0-9.]*\).*/\1/p' "$1")
  echo "${v:--}"
}
# the median of column $1 of steps.txt over the runs that gave a time
median_of() {
  awk -v c="$1" '$c != "-" { print $c }' "$out/steps.txt" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
                              else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

if env -u GEMMSHIM_FP32 python3 "$src/tests/gpu/gemm_kernel_time.py" "$train" "$out/share.json" \
     "$@" --steps 10 > "$out/share.out" 2>&1; then
  say "$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
g, o = j["gemm_kernel_us"], j["other_kernel_us"]
print("GEMM share of GPU kernel time (plain): %.1f%% (%.0f of %.0f us)" % (100 * g / (g + o), g, g + o))' \
    "$out/share.json")"
else
  say "tune-train: the GEMM share was not measured: $(tail -1 "$out/share.out")"
fi
"$gs" --lib "$lib" record -o "$out/record.csv" -- python3 "$train" "$@" --steps 4 \
  > "$out/record.out" 2>&1 || { say "tune-train: record failed: $(tail -2 "$out/record.out")"; exit 1; }
# shellcheck disable=SC2086 # GS_TUNE_FLAGS is a list of words
"$gs" --lib "$lib" tune --bench "$b/tools/gemmshim-bench" -o "$out/table.csv" \
  --budget "${GS_TUNE_BUDGET:-300}" ${GS_TUNE_FLAGS:-} "$out/record.csv" > "$out/tune.out" 2>&1 ||
  { say "tune-train: tune failed: $(tail -2 "$out/tune.out")"; exit 1; }
tail -n 30 "$out/tune.out"

: > "$out/steps.txt"
i=1
while [ "$i" -le "$pairs" ]; do
  env -u GEMMSHIM_FP32 python3 "$train" "$@" --steps "${GS_STEPS:-30}" \
    --out "$out/loss-plain-$i.txt" > "$out/plain-$i.out" 2>&1 || fail=1
  "$gs" --lib "$lib" run --table "$out/table.csv" -- python3 "$train" "$@" --steps "${GS_STEPS:-30}" \
    --out "$out/loss-tuned-$i.txt" > "$out/tuned-$i.out" 2>&1 || fail=1
  echo "plain $(step_ms "$out/plain-$i.out") tuned $(step_ms "$out/tuned-$i.out")" >> "$out/steps.txt"
  i=$((i + 1))
done
refused=$(grep -h 'is not used on device' "$out"/tuned-*.out | head -1)
[ -z "$refused" ] || { say "tune-train: table refused: $refused"; fail=1; }
say "plain median_step_ms (median of $pairs runs): $(median_of 2)"
say "tuned median_step_ms (median of $pairs runs): $(median_of 4)"
tee -a "$out/summary.txt" < "$out/steps.txt"
grep -h 'gemmshim:' "$out/tuned-1.out"
if cmp -s "$out/loss-plain-1.txt" "$out/loss-tuned-1.txt"; then
  say "losses: bit-identical plain and tuned (first run of each)"
else
  say "losses: differ plain and tuned (first run of each), or a run wrote none"
fi

GEMMSHIM_AB=1 GEMMSHIM_AB_LOG="$out/ab.%p.csv" GEMMSHIM_LOG="$out/log.%p.csv" \
  "$gs" --lib "$lib" run --table "$out/table.csv" -- python3 "$train" "$@" --steps 6 \
  > "$out/ab-run.out" 2>&1 || fail=1
set -- "$out"/log.*.csv
if ls "$out"/ab.*.csv > /dev/null 2>&1 && [ -f "$1" ]; then
  "$gs" report "$out"/ab.*.csv --summary "$1" > "$out/ab-report.txt" 2>&1 || fail=1
  cat "$out/ab-report.txt"
else
  say "tune-train: no A/B rows (nothing routed?)"
fi
exit $fail
