#!/usr/bin/env bash
# The GPU work of the decode, FP32 and tune issues, per GPU, as device
# calls on one warm machine; each phase stays under the 600 s a call may
# take. Every phase has run on an H100 and (build fd48081, 2026-12-06,
# bench/results/h200-2026-12-06/owed-fd48081/) on the H200; still owed
# there: check_lt_route with the H200's new cublaslt rows, and phase
# f32's racecheck (cut short by its time limit).
#   phase 1: the GPU checks on this build's binaries (check_kernels, check_ab,
#     check_reliability, check_fp32_opt_in, check_lt_route), cuBLASLt's
#     algorithms on train.py's strided batches (bench-batched), the decode
#     kernels after a producer with B and C fixed (--fixed-bc, two runs per
#     data type: what bench/pdl_routes.py makes pdl rows from), the
#     BF16x6 built-in route through the shim with the SM clock sampled
#     beside the bench's (the bench-vs-program gap), the harnesses' cuBLAS
#     gap on this GPU, whether cuBLAS's FP32 algorithms share one Inf/NaN
#     pattern (dev/sgemm_kinds), compute-sanitizer memcheck (BF16x6; the
#     decode kernels launched with PDL). Keeps the sweeps in /tmp/gs-keep.
#   phase f32: gemm_decode_f32 (issue 18's FP32 stage) checked, sanitized
#     and measured twice after a producer; its pdl rows; decode.py in FP32
#     under them. Done on an H100 (bench/results/decode-f32-h100-
#     2026-12-06/); on the H200 its checks and two runs, whose rows are in
#     h200_routes (bench/results/h200-2026-12-06/); decode.py in FP32 and
#     the sanitizers owed there.
#   phase few: the decode kernels' few rows (a column-major caller's x^T W,
#     the weight as op(B)): check_kernels on the three decode kernels (few
#     rows' every m and path, scalars, bias, the 2^31-byte weight), both
#     16-bit types and FP32 measured twice after a producer on
#     decode_few_rows*.txt, their pdl rows (table-few-rows.csv),
#     memcheck. Done on an H100 (bench/results/decode-few-rows-h100-
#     2026-12-06/, four runs of the shipped kernel); owed on the H200,
#     whose rows then go into h200_routes.
#   phase lt-rows: the built-in rows of the route cublaslt (issue 20):
#     check_lt_route, then their calls as PyTorch makes them, plain and
#     under the shim with no table of the user's, and in A/B mode.
#   phase 2 (the same machine, right after): a table of this GPU's
#     validators, the pdl rows from phase 1 and the built-in rows; decode.py
#     under it (tests/gpu/decode_under_shim.sh with the router's own rows,
#     and GEMMSHIM_PDL=0 against on: the log's routes); tune_under_shim
#     (the launch column on a GPU); issue 20's 14 BF16 shapes tuned.
# Binaries: sh tools/stage-device.sh build build-dev (GS_STAGE_SKIP for
# the dev/ harnesses but dev/decode_pdl and dev/sgemm_kinds), then,
# carrying build-dev:
#   bash tools/device-pending.sh 1     then at once     bash tools/device-pending.sh 2
# GS_SKIP="decode- sgemm-kinds ..." leaves out the steps whose names start
# so; GS_KEEP_FROM=DIR gives phase 2 the sweeps of an earlier run (a GPU
# measured before: its sweeps are in bench/results/).
# or, with less device time, both in one call, each phase cut short by its
# LIMIT (seconds; the steps are in order of need):
#   LIMIT=330 bash tools/device-pending.sh 1; LIMIT=240 bash tools/device-pending.sh 2
set -u
cd "$(dirname "$0")/.." || exit 2
phase=${1:?phase 1, 2, f32, few or lt-rows}
export OUT=${OUT:-$PWD/device-out}
T0=$SECONDS; LIMIT=${LIMIT:-585}
B=$PWD/build-dev
export GS_SRCDIR=$PWD GS_BUILDDIR=$B GS_SHIM=$B/libgemmshim.so
SUM=$OUT/summary.txt
rc_of() { local name=$1 lim=$2; shift 2
  local skip; for skip in ${GS_SKIP:-}; do
    case $name in "$skip"*) echo "$name skipped (GS_SKIP)" >> "$SUM"; return ;; esac
  done
  local left=$((LIMIT - (SECONDS - T0)))
  [ "$lim" -gt "$left" ] && lim=$left
  if [ "$lim" -le 5 ]; then echo "$name skipped (no time left)" >> "$SUM"; return; fi
  local t=$SECONDS; timeout "$lim" "$@" > "$OUT/logs/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t))s (limit $lim)" >> "$SUM"; }
mkdir -p "$OUT/logs"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader > "$OUT/logs/device.txt"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "phase $phase, device: $gpu  start $(date -u +%H:%M:%S)" >> "$SUM"
K=/tmp/gs-keep
if [ "$phase" = f32 ]; then
  # issue 18's second stage: gemm_decode_f32 checked (every path, tails,
  # scalars, bias, capture, streams, the 2^31-byte weight; the 16-bit
  # kernels, whose fold and epilogue it now shares, quickly), then measured
  # after a producer with B and C fixed, twice (what bench/pdl_routes.py
  # makes pdl rows from), beside cublasSgemm_v2; decode.py in FP32 under a
  # table of those rows; the sanitizers last (racecheck is slow)
  rc_of check_kernels-f32 150 env GS_CHECK_KERNELS=gemm_decode_f32 $B/tests/gpu/check_kernels
  rc_of check_kernels-16bit 90 env GS_CHECK_QUICK=1 GS_CHECK_KERNELS=gemm_decode_bf16,gemm_decode_f16 $B/tests/gpu/check_kernels
  for run in 1 2; do
    rc_of "decode-f32-run$run" 120 $B/tools/gemmshim-bench --kernel gemm_decode_f32 --shapes bench/shapes/decode_f32.txt --after-producer --fixed-bc --roofline --csv "$OUT/gemm_decode_f32-after-producer-fixed-bc-run$run.csv"
  done
  T=$OUT/table-decode-f32.csv
  { $B/tools/gemmshim-bench --identity | grep '^Validator,'
    echo "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,launch"
    python3 bench/pdl_routes.py --kernel gemm_decode_f32 --dtype f32 --compute '*' --plain dispatch/routes.c --gpu "$gpu" \
      "$OUT"/gemm_decode_f32-after-producer-fixed-bc-run1.csv "$OUT"/gemm_decode_f32-after-producer-fixed-bc-run2.csv
  } > $T 2> "$OUT/logs/table-f32.err"
  echo "f32 table: $(grep -c ',gemm_decode_f32,' $T) kernel rows" >> "$SUM"
  SAN=/usr/local/cuda/bin/compute-sanitizer
  rc_of san-memcheck-f32 60 env GS_CHECK_QUICK=1 GS_CHECK_KERNELS=gemm_decode_f32 $SAN --tool memcheck --error-exitcode 9 $B/tests/gpu/check_kernels
  rc_of decode_under_shim-f32 260 env GS_DECODE_DTYPE=fp32 GS_DECODE_FORCE= GEMMSHIM_TABLE=$T TMPDIR=$OUT/logs tests/gpu/decode_under_shim.sh
  rc_of san-racecheck-f32 150 env GS_CHECK_QUICK=1 GS_CHECK_KERNELS=gemm_decode_f32 $SAN --tool racecheck --error-exitcode 9 $B/tests/gpu/check_kernels
elif [ "$phase" = few ]; then
  # issue 18's few rows: checked first (every path), measured twice after a
  # producer with x and C fixed (what bench/pdl_routes.py makes rows from)
  rc_of check_kernels-decode 240 env GS_CHECK_KERNELS=gemm_decode_bf16,gemm_decode_f16,gemm_decode_f32 $B/tests/gpu/check_kernels
  for run in 1 2; do for dt in bf16 f16 f32; do
    shapes=bench/shapes/decode_few_rows.txt
    [ $dt = f32 ] && shapes=bench/shapes/decode_few_rows_f32.txt
    rc_of "few-$dt-run$run" 90 $B/tools/gemmshim-bench --kernel gemm_decode_$dt --shapes $shapes --after-producer --fixed-bc --roofline --csv "$OUT/gemm_decode_$dt-few-rows-after-producer-fixed-bc-run$run.csv"
  done; done
  T=$OUT/table-few-rows.csv
  { $B/tools/gemmshim-bench --identity | grep '^Validator,'
    echo "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,launch"
    for dt in bf16 f16 f32; do
      c=32f; [ $dt = f32 ] && c='*'
      python3 bench/pdl_routes.py --kernel gemm_decode_$dt --dtype $dt --compute "$c" --plain dispatch/routes.c --gpu "$gpu" \
        "$OUT"/gemm_decode_$dt-few-rows-after-producer-fixed-bc-run1.csv "$OUT"/gemm_decode_$dt-few-rows-after-producer-fixed-bc-run2.csv
    done
  } > $T 2> "$OUT/logs/table-few-rows.err"
  echo "few-rows table: $(grep -c ',gemm_decode_' $T) kernel rows" >> "$SUM"
  SAN=/usr/local/cuda/bin/compute-sanitizer
  rc_of san-memcheck-decode 90 env GS_CHECK_QUICK=1 GS_CHECK_KERNELS=gemm_decode_bf16,gemm_decode_f32 $SAN --tool memcheck --error-exitcode 9 $B/tests/gpu/check_kernels
elif [ "$phase" = lt-rows ]; then
  # issue 20: the built-in rows of the route cublaslt, with no table of the
  # user's. check_lt_route serves each of this GPU's rows (bit-equal to
  # cublasLtMatmul with the row's algorithm); then the rows' cublasGemmEx
  # calls as PyTorch makes them, plain and under the shim in turn, three
  # times, and once in A/B mode (the strided-batch rows: check_lt_route
  # only; torch_gemm_calls.py times single products)
  rc_of check_lt_route 150 $B/tests/gpu/check_lt_route
  python3 - "$gpu" > $OUT/lt-rows-shapes.txt <<'PY'
import re, sys
src = open("dispatch/routes.c").read()
for t in re.finditer(r'static const char \w+_routes\[\] =(.*?);\n', src, re.S):
    if '"Validator,gpu_name,%s\\n"' % sys.argv[1] not in t.group(1):
        continue
    for m in re.finditer(r'"gemm,bf16,bf16,bf16,32f,(\w\w),-,(\d+),(\d+),(\d+),1,16,cublaslt,', t.group(1)):
        print(m.group(2), m.group(3), m.group(4), m.group(1), "bf16")
PY
  echo "lt-rows: $(wc -l < $OUT/lt-rows-shapes.txt) GemmEx rows of this GPU's built-in table" >> "$SUM"
  export GEMMSHIM_CACHE_DIR=/nonexistent/gemmshim-lt-rows; unset GEMMSHIM_TABLE
  for run in 1 2 3; do
    rc_of "lt-rows-plain-$run" 60 python3 bench/torch_gemm_calls.py --shapes $OUT/lt-rows-shapes.txt
    rc_of "lt-rows-shim-$run" 60 env LD_PRELOAD=$GS_SHIM GEMMSHIM_LOG=$OUT/logs/lt-rows-shim-$run.gslog.csv python3 bench/torch_gemm_calls.py --shapes $OUT/lt-rows-shapes.txt
  done
  rc_of lt-rows-ab 60 env LD_PRELOAD=$GS_SHIM GEMMSHIM_AB=1 GEMMSHIM_AB_LOG=$OUT/lt-rows-ab.csv GEMMSHIM_LOG=$OUT/lt-rows-ab-log.csv python3 bench/torch_gemm_calls.py --shapes $OUT/lt-rows-shapes.txt
  rc_of lt-rows-ab-report 30 $B/tools/gemmshim report $OUT/lt-rows-ab.csv --summary $OUT/lt-rows-ab-log.csv
elif [ "$phase" = 1 ]; then
  for c in check_kernels check_ab check_reliability check_fp32_opt_in check_lt_route; do
    rc_of $c 90 $B/tests/gpu/$c
  done
  # issue 20: cuBLASLt's algorithms on train.py's strided batches, against
  # cublasGemmStridedBatchedEx (the route cublaslt takes packed batches)
  rc_of bench-batched 90 $B/tools/gemmshim-bench --kernel cublaslt --dtype bf16 --lt-top 8 --shapes bench/shapes/attention_batched.txt --preheat-ms 2000 --csv "$OUT/cublaslt-attention-batched.csv"
  for run in 1 2; do for dt in bf16 f16; do
    rc_of "decode-$dt-run$run" 110 $B/tools/gemmshim-bench --kernel gemm_decode_$dt --shapes bench/shapes/decode.txt --after-producer --fixed-bc --roofline --csv "$OUT/gemm_decode_$dt-after-producer-fixed-bc-run$run.csv"
  done; done
  # for the next call on this machine (decode.py under a table with these rows)
  mkdir -p /tmp/gs-keep && cp "$OUT"/gemm_decode_*-after-producer-fixed-bc-run*.csv /tmp/gs-keep/ 2>/dev/null
  # issue 21: do cuBLAS's own FP32 algorithms agree on Inf/NaN where sums overflow?
  rc_of sgemm-kinds 60 $B/dev/sgemm_kinds/kinds
  # BF16x6 by its built-in row: GEMMSHIM_FP32=tc, no FORCE; the log says who served
  # the SM clock and power while each runs (the bench-vs-program gap: does
  # the kernel run at a lower sustained clock alone than interleaved?)
  sample() { nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > "$OUT/logs/$1.smi.csv" 2>/dev/null & SMI=$!; }
  sample pool-plain; rc_of pool-plain 60 python3 bench/fp32_pool_cost.py --reps 5; kill $SMI
  force=; case $gpu in "NVIDIA H200" | "NVIDIA H100 80GB HBM3") ;; *) force=GEMMSHIM_FORCE=gemm_f32_bf16x6 ;; esac  # the GPUs with built-in rows
  sample pool-tc; rc_of pool-tc 60 env $force LD_PRELOAD=$GS_SHIM GEMMSHIM_FP32=tc GEMMSHIM_LOG=$OUT/logs/pool-tc.gslog.csv python3 bench/fp32_pool_cost.py --reps 5; kill $SMI
  printf '4096 4096 4096 NN\n8192 8192 8192 NN\n' > /tmp/pool-shapes.txt
  sample bench-bf16x6-nn; rc_of bench-bf16x6-nn 60 $B/tools/gemmshim-bench --kernel gemm_f32_bf16x6 --shapes /tmp/pool-shapes.txt --csv $OUT/logs/bench-bf16x6-nn.csv; kill $SMI
  # issue 18: the harnesses' cuBLAS gap on this GPU (B and C rotating, and fixed)
  gap=$(grep -v '^#' bench/shapes/decode_gap.txt | tr '\n' ' ')
  rc_of pdl-gap 40 $B/dev/decode_pdl/pdl $gap
  for ctl in "" --fixed-bc; do
    rc_of "bench-gap${ctl}" 40 $B/tools/gemmshim-bench --kernel gemm_decode_bf16 --shapes bench/shapes/decode_gap.txt --after-producer $ctl --csv "$OUT/logs/bench-gap${ctl}.csv"
  done
  SAN=/usr/local/cuda/bin/compute-sanitizer
  rc_of san-memcheck-bf16x6 70 env GS_CHECK_QUICK=1 GS_CHECK_KERNELS=gemm_f32_bf16x6 $SAN --tool memcheck --error-exitcode 9 $B/tests/gpu/check_kernels
  rc_of san-memcheck-decode-pdl 70 env GS_CHECK_QUICK=1 GS_CHECK_KERNELS=gemm_decode_bf16 $SAN --tool memcheck --error-exitcode 9 $B/tests/gpu/check_kernels
else
  # the table to try: this GPU's validators, the pdl rows from the last
  # call's after-producer sweeps (bench/pdl_routes.py), then the plain rows
  # of this GPU's built-in table
  # sweeps kept from an earlier run of this GPU (GS_KEEP_FROM=bench/results/...)
  [ -n "${GS_KEEP_FROM:-}" ] && mkdir -p $K && cp -n "$GS_KEEP_FROM"/gemm_decode_*-after-producer-fixed-bc-run*.csv $K/
  T=$OUT/table-decode-pdl.csv
  { $B/tools/gemmshim-bench --identity | grep '^Validator,'
    echo "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,lt_algo,launch"
    for dt in bf16 f16; do
      python3 bench/pdl_routes.py --kernel gemm_decode_$dt --dtype $dt --plain dispatch/routes.c \
        --gpu "$gpu" $K/gemm_decode_$dt-after-producer-fixed-bc-run1.csv \
        $K/gemm_decode_$dt-after-producer-fixed-bc-run2.csv | sed 's/,pdl$/,-,pdl/'
    done
    python3 bench/pdl_routes.py --print-plain --plain dispatch/routes.c --gpu "$gpu"
  } > $T 2> $OUT/logs/table-make.err
  echo "table: $(grep -c ',pdl$' $T) pdl rows, $(wc -l < $T) lines" >> "$SUM"
  # the routes a program gets: decode.py teacher-forced and timed, by the table's rows
  rc_of decode_under_shim-routed 200 env GS_DECODE_FORCE= GEMMSHIM_TABLE=$T TMPDIR=$OUT/logs tests/gpu/decode_under_shim.sh
  # GEMMSHIM_PDL=0: the pdl rows passed over (the log's routes and reasons)
  rc_of decode-pdl0 60 env GEMMSHIM_TABLE=$T LD_PRELOAD=$GS_SHIM GEMMSHIM_PDL=0 GEMMSHIM_LOG=$OUT/logs/decode-pdl0.gslog.csv python3 examples/decode.py --layers 2 --batch 1,8 --steps 8 --profile-steps 2
  rc_of decode-pdl1 60 env GEMMSHIM_TABLE=$T LD_PRELOAD=$GS_SHIM GEMMSHIM_LOG=$OUT/logs/decode-pdl1.gslog.csv python3 examples/decode.py --layers 2 --batch 1,8 --steps 8 --profile-steps 2
  tb=${GS_TUNE_BUDGET:-120}
  rc_of tune_under_shim $((tb + 80)) env TMPDIR=$OUT/logs GS_TUNE_BUDGET=$tb tests/gpu/tune_under_shim.sh
  grep -v '^#' bench/shapes/bf16_lt14.txt | sed 's/$/ bf16/' > /tmp/lt14-tune.txt
  rc_of tune-lt14 280 $B/tools/gemmshim --lib $GS_SHIM tune --bench $B/tools/gemmshim-bench --shapes /tmp/lt14-tune.txt -o $OUT/table-bf16-lt14.csv --preheat-ms 300 --budget 250
fi
echo "end $(date -u +%H:%M:%S)" >> "$SUM"
tar -C "$OUT" -czf "$OUT/logs-phase$phase.tgz" logs && rm -rf "$OUT/logs"
cat "$SUM"
