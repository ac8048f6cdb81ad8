#!/bin/sh
# GPU check: gemmshim tune on the calls of examples/train.py (bf16) and
# examples/decode.py (batch 1), recorded with gemmshim record, then gemmshim
# run with the table it wrote: the table is this GPU's (not refused), has a
# row for every measurable call it reached, and routes exactly what it
# names: a call whose row names a kernel is served by that kernel, one whose
# row says cublas forwards as tuned_cublas, and no other call is served by
# a kernel. Exits 77 without a GPU or without PyTorch.
#   GS_TUNE_BUDGET   seconds for the tuning (default 300)
#   GS_TUNE_FP32=1   train.py in fp32 instead (no decode.py), run with
#                    GEMMSHIM_FP32=tc and tuned with --fp32-tc: the opt-in
#                    FP32 tensor-core kernels are candidates (issue 20's
#                    fp32 target)
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
gs="$builddir/tools/gemmshim"
out=${TMPDIR:-/tmp}/gs-tune.$$
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null ||
  { echo "SKIP: no PyTorch with CUDA"; exit 77; }
mkdir -p "$out"
fail=0
no() { echo "FAIL: $*"; fail=1; }
train="$srcdir/examples/train.py --dtype bf16 --steps 4"
decode="$srcdir/examples/decode.py --layers 1 --batch 1 --steps 4 --profile-steps 1"
tc_flag=
if [ -n "${GS_TUNE_FP32:-}" ]; then
  train="$srcdir/examples/train.py --dtype fp32 --steps 4"
  decode=   # its calls are 16-bit
  tc_flag=--fp32-tc
  export GEMMSHIM_FP32=tc
fi
# key|route|reason|count of each log row
keys() { awk -F, -f "$srcdir/tests/gpu/log_keys.awk" "$@"; }

# 1. The calls, recorded (routing off).
# shellcheck disable=SC2086 # $train and $decode are lists of words
"$gs" --lib "$shim" record -o "$out/rec-train.csv" -- python3 $train > "$out/rec-train.out" 2>&1 ||
  no "record train.py: $(tail -3 "$out/rec-train.out")"
logs="$out/rec-train.csv"
if [ -n "$decode" ]; then
  # shellcheck disable=SC2086
  "$gs" --lib "$shim" record -o "$out/rec-decode.csv" -- python3 $decode > "$out/rec-decode.out" 2>&1 ||
    no "record decode.py: $(tail -3 "$out/rec-decode.out")"
  logs="$logs $out/rec-decode.csv"
fi

# 2. Tuned on this GPU.
# shellcheck disable=SC2086 # $logs and $tc_flag are lists of words
"$gs" --lib "$shim" tune --bench "$builddir/tools/gemmshim-bench" -o "$out/table.csv" \
  --budget "${GS_TUNE_BUDGET:-300}" --preheat-ms 300 $tc_flag $logs \
  > "$out/tune.out" 2>&1 || no "gemmshim tune: $(tail -3 "$out/tune.out")"
sed 's/^/  /' "$out/tune.out"
# the table's rows: key|route
awk -F, '/^#/ || /^Validator,/ || $1 == "entry" { next }
         { k = $1; for (i = 2; i <= 12; i++) k = k "," $i; print k "|" $13 }' "$out/table.csv" \
  | sort > "$out/table.rows"
echo "table: $(wc -l < "$out/table.rows") rows, $(grep -vc '|cublas$' "$out/table.rows") routed to a kernel"
[ -s "$out/table.rows" ] || no "the table has no row"

# 3. Both programs under the table.
# shellcheck disable=SC2086
GEMMSHIM_LOG="$out/run-train.csv" GEMMSHIM_VERBOSE=1 "$gs" --lib "$shim" run --table "$out/table.csv" \
  -- python3 $train > "$out/run-train.out" 2>&1 || no "run train.py: $(tail -3 "$out/run-train.out")"
# shellcheck disable=SC2086
[ -z "$decode" ] || GEMMSHIM_LOG="$out/run-decode.csv" "$gs" --lib "$shim" run --table "$out/table.csv" \
  -- python3 $decode > "$out/run-decode.out" 2>&1 || no "run decode.py: $(tail -3 "$out/run-decode.out")"
grep -q 'is not used on device' "$out"/run-*.out && no "the table was refused: $(grep -h 'is not used' "$out"/run-*.out | head -1)"
# shellcheck disable=SC2046 # the logs that exist
keys $(ls "$out"/run-train.csv "$out"/run-decode.csv 2>/dev/null) > "$out/run.keys"
checked=0 served=0
while IFS='|' read -r key route; do
  rows=$(awk -F'|' -v k="$key" '$1 == k' "$out/run.keys")
  [ -n "$rows" ] || continue   # a call of the record the run did not make again
  checked=$((checked + 1))
  if [ "$route" = cublas ]; then
    echo "$rows" | awk -F'|' '$2 != "cublas" || $3 != "tuned_cublas" { bad = 1 } END { exit bad }' ||
      no "$key: the table says cublas, the log: $(echo "$rows" | tr '\n' ' ')"
  else
    echo "$rows" | awk -F'|' -v r="$route" '$2 == r && $3 == "routed" { ok = 1 } END { exit !ok }' ||
      no "$key: the table routes it to $route, never served as routed: $(echo "$rows" | tr '\n' ' ')"
    served=$((served + 1))
  fi
done < "$out/table.rows"
# no kernel served a call the table does not route to it
awk -F'|' '$2 != "cublas" { print $1 "|" $2 }' "$out/run.keys" | sort -u | while read -r kr; do
  grep -qxF "$kr" "$out/table.rows" || echo "$kr"
done > "$out/unexpected"
[ -s "$out/unexpected" ] && no "served by a kernel without a table row saying so: $(tr '\n' ' ' < "$out/unexpected")"
echo "checked $checked of the table's rows against the runs' logs; $served routed to a kernel"
[ "$checked" -gt 0 ] || no "no row of the table was exercised by the runs"
[ $fail -eq 0 ] && echo "PASS: the tuned table routes exactly what it names"
[ -n "${OUT:-}" ] && cp "$out"/table.csv "$out"/measurements-table.csv "$out"/tune.out "$OUT"/ 2>/dev/null
rm -rf "$out"
exit $fail
