#!/bin/sh
# GPU check: a program that calls cudaDeviceReset between GEMMs, under the
# shim, with its calls forced onto our kernel: results right before and
# after the reset, no write into memory the program allocated after it, and
# the shim's log shows the calls after the reset served by our kernel or
# forwarded with a reason. Run twice: with the first-use self-check only,
# and with A/B mode comparing every call (which keeps scratch on the GPU).
# Exits 77 without a GPU.
set -u
builddir=${GS_BUILDDIR:-.}
client="$builddir/tests/gpu/reset_client"
shim=${GS_SHIM:-$builddir/libgemmshim.so}
out=${TMPDIR:-/tmp}/gs-reset.$$
mkdir -p "$out"
"$client" > "$out/plain.txt" 2>&1
rc=$?
if [ $rc -eq 77 ]; then cat "$out/plain.txt"; rm -rf "$out"; exit 77; fi
[ $rc -eq 0 ] || { echo "FAIL: the program without the shim exited $rc"; cat "$out/plain.txt"; exit 1; }
fail=0
for mode in selfcheck ab; do
  ab=0
  [ $mode = ab ] && ab=1
  GEMMSHIM_FORCE=1 GEMMSHIM_AB=$ab GEMMSHIM_LOG="$out/log.$mode.csv" LD_PRELOAD="$shim" \
    "$client" > "$out/$mode.txt" 2>&1
  rc=$?
  echo "--- $mode (exit $rc)"
  cat "$out/$mode.txt"
  cat "$out/log.$mode.csv" 2>/dev/null
  [ $rc -eq 0 ] || { echo "FAIL: under the shim ($mode) the program exited $rc"; fail=1; }
  # 32 calls in all, every one logged
  logged=$(awk -F, 'NR > 1 && $1 != "pid" {s += $15} END {print s + 0}' "$out/log.$mode.csv" 2>/dev/null)
  [ "$logged" = 32 ] || { echo "FAIL: ($mode) the log counts $logged calls, the program made 32"; fail=1; }
  # our kernel served calls in both contexts: the first calls of each
  # forward while its kernels load and its first use is checked
  served=$(awk -F, '$13 == "sgemm_simt" {s += $15} END {print s + 0}' "$out/log.$mode.csv" 2>/dev/null)
  [ "$served" -ge 20 ] || { echo "FAIL: ($mode) our kernel served $served calls, expected at least 20"; fail=1; }
  checks=$(awk -F, '$14 == "selfcheck" {s += $15} END {print s + 0}' "$out/log.$mode.csv" 2>/dev/null)
  [ "$checks" = 2 ] || { echo "FAIL: ($mode) $checks first-use self-checks, expected 2 (one per context)"; fail=1; }
done
[ $fail -eq 0 ] && echo "PASS: cudaDeviceReset between GEMMs, with the self-check and with A/B mode"
rm -rf "$out"
exit $fail
