#!/bin/sh
# GPU check: a JAX program (examples/jax_matmul.py: jitted f32 and bf16
# matmuls and a small MLP training step) under the shim. XLA looks
# cublasLtMatmul up with dlsym on its own handle to libcublasLt, so before
# the shim exported dlsym it wrote no log at all here.
#   1. plain run (the reference results and step times);
#   2. routing off (GEMMSHIM_ROUTE=0), against a plain run whose autotuning
#      results it reuses (XLA's own choices vary run to run): the log shows
#      the calls, and every result is bitwise identical;
#   3. the shim as a user gets it (the built-in route table, which routes
#      none of these shapes): the calls are seen, results match, and the
#      MLP's step time is printed beside the plain run's (information);
#   4. with XLA's command buffers off, and 5. on (XLA's default), with
#      GEMMSHIM_FORCE=gemm_bf16_wgmma_persistent so that routing does not
#      depend on the table: the BF16 kernel serves calls (under capture only
#      once its self-check has passed outside capture) and the results stay
#      within the dtype's tolerance; every log row is printed;
#   6. GEMMSHIM_DISABLE=1: no log, and the same results.
# Exits 77 without JAX or GPU.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
out=${TMPDIR:-/tmp}/gs-jax.$$
mkdir -p "$out"
prog="$srcdir/examples/jax_matmul.py"
python3 -c 'import jax, sys; sys.exit(0 if any(d.platform == "gpu" for d in jax.devices()) else 77)' \
  > "$out/probe.log" 2>&1
[ $? -eq 0 ] || { echo "SKIP: no JAX with a GPU"; tail -n 3 "$out/probe.log"; rm -rf "$out"; exit 77; }
fail=0
run() {  # name, then env assignments and the command
  name=$1; shift
  env "$@" > "$out/$name.log" 2>&1 ||
    { echo "FAIL: $name: $*"; tail -n 20 "$out/$name.log"; fail=1; return 1; }
}
calls() {  # log files: every row's count, summed
  cat "$@" 2>/dev/null | awk -F, '$1 ~ /^[0-9]+$/ { n += $15 } END { print n + 0 }'
}
summary() {  # log files: count per entry, route and reason
  cat "$@" 2>/dev/null | awk -F, '$1 ~ /^[0-9]+$/ { c[$2 " " $13 " " $14] += $15 }
    END { for (k in c) printf "    %6d  %s\n", c[k], k }' | sort -k2
}
rows() {  # log files: the rows, entry to count
  cat "$@" 2>/dev/null | awk -F, '$1 == "pid" || $1 ~ /^[0-9]+$/' | cut -d, -f2-15 | sed 's/^/    /'
}
compare() {  # name of the shimmed run
  if python3 "$prog" --compare "$out/plain.npz" "$out/$1.npz" > "$out/compare-$1.log" 2>&1; then
    echo "PASS: $1: results match the plain run"
  else
    echo "FAIL: $1: results differ from the plain run"; fail=1
  fi
  sed 's/^/  /' "$out/compare-$1.log"
}

run plain python3 "$prog" --out "$out/plain.npz"

# 2. routing off, bitwise: the second run reuses the first's autotuning
# results, so XLA asks cuBLAS for the same algorithms
tuned="$out/autotune.textproto"
if run plain-det XLA_FLAGS="--xla_gpu_dump_autotune_results_to=$tuned" python3 "$prog" \
     --out "$out/plain-det.npz" &&
   { [ -s "$tuned" ] || { echo "FAIL: XLA wrote no autotuning results to $tuned"; fail=1; false; }; } &&
   run route-off LD_PRELOAD="$shim" GEMMSHIM_ROUTE=0 GEMMSHIM_LOG="$out/route-off.%p.csv" \
     XLA_FLAGS="--xla_gpu_load_autotune_results_from=$tuned" python3 "$prog" \
     --out "$out/route-off.npz"; then
  n=$(calls "$out"/route-off.*.csv)
  if [ "$n" -gt 0 ]; then echo "PASS: routing off: the shim saw $n GEMM calls"
  else echo "FAIL: routing off: the shim saw no GEMM call (no log rows)"; fail=1; fi
  if python3 "$prog" --compare "$out/plain-det.npz" "$out/route-off.npz" --exact \
       > "$out/compare-route-off.log" 2>&1; then
    echo "PASS: routing off: every result bitwise identical to the plain run's"
  else
    echo "FAIL: routing off: results differ from the plain run's"; fail=1
  fi
  sed 's/^/  /' "$out/compare-route-off.log"
fi

# 3. as a user gets it
if run default LD_PRELOAD="$shim" GEMMSHIM_LOG="$out/default.%p.csv" python3 "$prog" \
     --out "$out/default.npz"; then
  n=$(calls "$out"/default.*.csv)
  if [ "$n" -gt 0 ]; then echo "PASS: built-in table: the shim saw $n GEMM calls"
  else echo "FAIL: built-in table: the shim saw no GEMM call (no log rows)"; fail=1; fi
  summary "$out"/default.*.csv
  compare default
  for m in mlp_f32 mlp_bf16; do
    a=$(awk -v m=$m '$1 == "step_us" && $2 == m { print $3 }' "$out/plain.log")
    b=$(awk -v m=$m '$1 == "step_us" && $2 == m { print $3 }' "$out/default.log")
    echo "  $m step (median of 100): plain $a us, under the shim $b us (information)"
  done
fi

shimmed() {  # off|on: the forced run with command buffers off or on
  mode=$1
  if [ "$mode" = off ]; then xla=--xla_gpu_enable_command_buffer=; else xla=${XLA_FLAGS:-}; fi
  run "$mode" LD_PRELOAD="$shim" GEMMSHIM_FORCE=gemm_bf16_wgmma_persistent \
    GEMMSHIM_LOG="$out/$mode.%p.csv" XLA_FLAGS="$xla" python3 "$prog" --out "$out/$mode.npz" || return
  n=$(calls "$out"/"$mode".*.csv)
  if [ "$n" -gt 0 ]; then echo "PASS: command buffers $mode: the shim saw $n GEMM calls"
  else echo "FAIL: command buffers $mode: the shim saw no GEMM call (no log rows)"; fail=1; fi
  served=$(cat "$out"/"$mode".*.csv 2>/dev/null |
           awk -F, '$13 == "gemm_bf16_wgmma_persistent" && $14 == "routed" { n += $15 } END { print n + 0 }')
  if [ "$served" -gt 0 ]; then
    echo "PASS: command buffers $mode: gemm_bf16_wgmma_persistent served $served calls"
  else
    echo "FAIL: command buffers $mode: gemm_bf16_wgmma_persistent served no call"; fail=1
  fi
  rows "$out"/"$mode".*.csv
  compare "$mode"
}
shimmed off
shimmed on

if run disabled LD_PRELOAD="$shim" GEMMSHIM_DISABLE=1 GEMMSHIM_LOG="$out/disabled.%p.csv" \
     python3 "$prog" --out "$out/disabled.npz"; then
  if ls "$out"/disabled.*.csv > /dev/null 2>&1; then
    echo "FAIL: GEMMSHIM_DISABLE=1 still wrote a log"; fail=1
  else
    echo "PASS: GEMMSHIM_DISABLE=1: no log"
  fi
  compare disabled
fi

[ $fail -eq 0 ] && rm -rf "$out"
exit $fail
