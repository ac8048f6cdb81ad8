#!/bin/sh
# GPU check: examples/decode.py (Llama-3-8B-shaped greedy decoding, random
# weights, bf16) under the shim with the decode kernel serving the few-token
# GEMMs. Teacher-forced (2 layers, batches 1 and 8, 8 steps): both runs are
# fed the same tokens, and every greedy token of the shim's run must equal
# the plain run's except at a near-tie (decode.py --compare); the shim's log
# must show gemm_decode_bf16 routing calls. Then, for information only, the
# timing mode (eager, CUDA graph, GEMM time from the profiler) with and
# without the shim, side by side: the 8B shape (4 layers, batches 1, 8, 32)
# and a 70B-shaped one (2 layers, batches 1 and 8), the shim routing by its
# measured wins; GEMM time as the kernels' durations and as their exclusive
# time (decode.py).
# GEMMSHIM_FORCE=gemm_decode_bf16 routes the kernel's whole class, so the
# check does not depend on the win tables; GS_DECODE_FORCE overrides it
# (empty: the router's own measured wins). GS_DECODE_DTYPE=fp16 or fp32
# runs decode.py in that type, with gemm_decode_f16 or gemm_decode_f32 as
# the kernel.
# Exits 77 without a GPU or without PyTorch.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
dtype=${GS_DECODE_DTYPE:-bf16}
case $dtype in
  bf16) kern=gemm_decode_bf16 ;;
  fp16) kern=gemm_decode_f16 ;;
  fp32) kern=gemm_decode_f32 ;;
  *) echo "GS_DECODE_DTYPE=$dtype: bf16, fp16 or fp32"; exit 2 ;;
esac
force=${GS_DECODE_FORCE-$kern}
out=${TMPDIR:-/tmp}/gs-decode.$$
mkdir -p "$out"
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null
[ $? -eq 0 ] || { echo "SKIP: no PyTorch with CUDA"; rm -rf "$out"; exit 77; }
decode="$srcdir/examples/decode.py"
fail=0
run() {  # name (for the output files), then the command
  name=$1; shift
  "$@" > "$out/$name.log" 2>&1 ||
    { echo "FAIL: $name: $*"; tail -n 15 "$out/$name.log"; return 1; }
}
shimmed() {  # log name, then decode.py's arguments: decode.py under the shim, forced
  log=$1; shift
  env LD_PRELOAD="$shim" GEMMSHIM_FORCE="$force" GEMMSHIM_LOG="$out/$log.%p.csv" \
    python3 "$decode" "$@"
}
routed() {  # the same with the router's own measured wins (what a user gets)
  log=$1; shift
  env LD_PRELOAD="$shim" GEMMSHIM_LOG="$out/$log.%p.csv" python3 "$decode" "$@"
}

# 1. Teacher-forced, without and with the shim, on the same tokens.
tf="--dtype $dtype --layers 2 --batch 1,8 --steps 8"
# shellcheck disable=SC2086 # $tf and $timing are lists of words
if run tf-plain python3 "$decode" --teacher-forced "$out/plain.pt" $tf &&
   run tf-shim shimmed log-tf --teacher-forced "$out/shim.pt" --tokens "$out/plain.pt" $tf; then
  if python3 "$decode" --compare "$out/plain.pt" "$out/shim.pt" > "$out/compare.log" 2>&1; then
    echo "PASS: greedy tokens with and without the shim agree (up to near-ties)"
  else
    echo "FAIL: greedy tokens differ beyond near-ties (decode.py --compare)"; fail=1
  fi
  sed 's/^/  /' "$out/compare.log"
  if grep -q ",$kern,routed," "$out"/log-tf.*.csv 2>/dev/null; then
    served=$(cat "$out"/log-tf.*.csv | awk -F, -v k="$kern" '$13 == k && $14 == "routed" { n += $15 } END { print n + 0 }')
    echo "PASS: $kern served $served calls"
  else
    echo "FAIL: no ',$kern,routed,' row in the shim's log"; fail=1
    for f in "$out"/log-tf.*.csv; do [ -r "$f" ] && { echo "--- $(basename "$f")"; cat "$f"; }; done
  fi
else
  fail=1
fi

# 2. Timing, for information: the numbers are no criterion (a crash is).
# The shim as a user gets it (the router's measured wins, no forcing), for
# the 8B shape and a 70B-shaped one (hidden 8192).
compare_timing() {  # plain json, shim json, title
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
plain, shim = (json.load(open(p))["results"] for p in sys.argv[1:3])
print(sys.argv[3])
def f(v, spec):
    return "-" if v is None else spec % v
def ratio(a, b, key):
    return a[key] / b[key] if a.get(key) and b.get(key) else None
# gemm_us: the GEMM kernels' durations; excl_us: their exclusive time (a
# kernel launched with PDL waits for the one before it inside its
# duration); busy: the GPU's busy time a step, every kernel's exclusive time
print("  %5s | %-49s | %-49s |" % ("", "plain (cuBLAS)", "shim"))
print("  %5s | %9s %9s %9s %9s %8s | %9s %9s %9s %9s %8s | %s" % (
    "batch", "eager_ms", "graph_ms", "gemm_us", "excl_us", "GB/s",
    "eager_ms", "graph_ms", "gemm_us", "excl_us", "GB/s", "plain/shim: gemm, excl, busy"))
for a, b in zip(plain, shim):
    x = "gemm_exclusive_us_per_step"
    print("  %5d | %9s %9s %9s %9s %8s | %9s %9s %9s %9s %8s | %s %s %s" % (
        a["batch"],
        f(a["eager_ms_per_step"], "%.3f"), f(a["graph_ms_per_step"], "%.3f"),
        f(a["gemm_us_per_step"], "%.1f"), f(a.get(x), "%.1f"), f(a["gemm_GBps"], "%.0f"),
        f(b["eager_ms_per_step"], "%.3f"), f(b["graph_ms_per_step"], "%.3f"),
        f(b["gemm_us_per_step"], "%.1f"), f(b.get(x), "%.1f"), f(b["gemm_GBps"], "%.0f"),
        f(ratio(a, b, "gemm_us_per_step"), "%.3fx"), f(ratio(a, b, x), "%.3fx"),
        f(ratio(a, b, "gpu_busy_us_per_step"), "%.3fx")))
print("  weight GB per step: %.3f" % plain[0]["weight_GB"])
EOF
}
for cfg in "8b --dtype $dtype --layers 4 --batch 1,8,32 --steps 16" "70b --dtype $dtype --layers 2 --batch 1,8 --steps 16"; do
  cfgname=${cfg%% *}   # not "name": run() sets that
  # shellcheck disable=SC2086 # $cfg is a list of words
  run time-plain-$cfgname python3 "$decode" --config $cfg --json "$out/time-plain-$cfgname.json" || fail=1
  # shellcheck disable=SC2086
  run time-shim-$cfgname routed log-timing-$cfgname --config $cfg --json "$out/time-shim-$cfgname.json" || fail=1
  if [ -r "$out/time-plain-$cfgname.json" ] && [ -r "$out/time-shim-$cfgname.json" ]; then
    compare_timing "$out/time-plain-$cfgname.json" "$out/time-shim-$cfgname.json" \
      "timing (decode.py --config $cfg; shim: the router's wins):"
    sed -n '/counted as GEMM/,/not counted/p' "$out/time-shim-$cfgname.log" | grep -v 'not counted' |
      sed 's/^/  shim /'
  fi
done

# 3. The shim's rows for the few-token calls (n, the 10th column, <= 64).
for f in "$out"/log-*.csv; do
  [ -r "$f" ] || continue
  echo "--- $(basename "$f"), rows with n <= 64"
  awk -F, '$1 == "pid" || ($10 + 0 <= 64 && $10 != "-")' "$f"
done
[ -n "${OUT:-}" ] && cp "$out"/log-*.csv "$out"/*.log "$out"/*.json "$OUT"/ 2>/dev/null
rm -rf "$out"
[ $fail -eq 0 ] && echo "PASS: decode.py under the shim"
exit $fail
