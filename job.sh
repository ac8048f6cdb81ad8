#!/usr/bin/env bash
# session job 6 (untracked)
set -u
B=build-dev
L=$OUT/logs; mkdir -p $L
export GS_SRCDIR=$PWD GS_BUILDDIR=$PWD/$B GS_SHIM=$PWD/$B/libgemmshim.so
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/device.txt
summ=()
rc_of() { local n=$1 t=$2; shift 2; local left=$((560 - SECONDS)); [ $left -lt 15 ] && { summ+=("$n skipped (time)"); return; }; [ $t -gt $left ] && t=$left; local t0=$SECONDS; timeout $t "$@" > $L/$n.log 2>&1; local rc=$?; summ+=("$n rc=$rc $((SECONDS-t0))s"); echo "== $n rc=$rc $((SECONDS-t0))s"; }
GS_CHECK_KERNELS=gemm_f32_bf16x6,gemm_f32_3xtf32 rc_of check_kernels 200 $B/tests/gpu/check_kernels
grep -v "^ok" $L/check_kernels.log | tail -n 6; grep "k under k_min\|FP64's pattern" $L/check_kernels.log | head -6
rc_of check_fp32_opt_in 60 $B/tests/gpu/check_fp32_opt_in
tail -n 1 $L/check_fp32_opt_in.log
rc_of check_reliability 120 $B/tests/gpu/check_reliability
grep -c "^ok" $L/check_reliability.log; grep "FAIL" $L/check_reliability.log | head -3
mkdir -p $L/tune; OUT=$L/tune rc_of tune_fp32_under_shim 400 env GS_TUNE_FP32=1 sh tests/gpu/tune_under_shim.sh
tail -n 25 $L/tune_fp32_under_shim.log
tar czf $OUT/logs.tgz -C $OUT logs && rm -rf $L
printf '%s\n' "${summ[@]}" | tee $OUT/summary.txt
