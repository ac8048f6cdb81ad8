#!/bin/sh
# GPU check: route tables on examples/train.py (bf16), through the gemmshim
# command. A table that sends some of train.py's calls to the BF16 kernel
# routes exactly those (the shim's log counts them), and the same table
# with another GPU's name is refused, naming the key. Exits 77 without a GPU
# or without PyTorch.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
gs="$builddir/tools/gemmshim"
kernel=gemm_bf16_wgmma_persistent
steps=${GS_TRAIN_STEPS:-4}
out=${TMPDIR:-/tmp}/gs-table.$$
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null ||
  { echo "SKIP: no PyTorch with CUDA"; exit 77; }
mkdir -p "$out"
fail=0
no() { echo "FAIL: $*"; fail=1; }
train() { python3 "$srcdir/examples/train.py" --dtype bf16 --steps "$steps"; }

# key|route|reason of each log row (tests/gpu/log_keys.awk)
keys() { awk -F, -f "$srcdir/tests/gpu/log_keys.awk" "$1" | cut -d'|' -f1-3; }

# 1. What train.py calls, recorded with routing off.
"$gs" --lib "$shim" record -o "$out/record.csv" -- \
  python3 "$srcdir/examples/train.py" --dtype bf16 --steps "$steps" > "$out/record.out" 2>&1 ||
  no "gemmshim record: $(tail -3 "$out/record.out")"
grep -q '^gemmshim: recorded [0-9]* distinct calls' "$out/record.out" || no "record said: $(tail -2 "$out/record.out")"
# the log's first line as this build writes it (dispatch/tally.h), not a
# copy of it that goes stale when the format moves on
log_version=$(sed -n 's/^#define GS_LOG_VERSION "\(.*\)"$/\1/p' "$srcdir/dispatch/tally.h")
[ -n "$log_version" ] || no "GS_LOG_VERSION not found in $srcdir/dispatch/tally.h"
head -1 "$out/record.csv" | grep -qxF "$log_version" ||
  no "the record's first line is '$(head -1 "$out/record.csv")', not '$log_version'"
keys "$out/record.csv" | cut -d'|' -f1 | sort -u > "$out/recorded.keys"
echo "recorded: $(wc -l < "$out/recorded.keys") distinct keys"

# 2. Which of them the kernel's class takes (forced), and this GPU's
#    validators (GEMMSHIM_VERBOSE says them when it picks a table).
GEMMSHIM_FORCE=$kernel GEMMSHIM_VERBOSE=1 GEMMSHIM_LOG="$out/forced.csv" LD_PRELOAD="$shim" \
  train > "$out/forced.out" 2>&1 || no "train.py forced: $(tail -3 "$out/forced.out")"
# (a value NVML could not give is left out: it is not checked)
sed -n 's/^gemmshim: device 0: \(Validator,.*[^,]\)$/\1/p' "$out/forced.out" > "$out/validators"
grep -q '^Validator,gpu_name,' "$out/validators" || no "no validator lines from GEMMSHIM_VERBOSE"
keys "$out/forced.csv" | awk -F'|' -v k=$kernel '$2 == k { print $1 }' | sort -u > "$out/class.keys"
n_class=$(wc -l < "$out/class.keys")
echo "in $kernel's class: $n_class keys"
[ "$n_class" -ge 2 ] || no "fewer than two of train.py's calls are in $kernel's class"
comm -23 "$out/class.keys" "$out/recorded.keys" | grep -q . && no "forced keys that were not recorded"

# 3. A hand-made table: every other key of the class to the kernel, the
#    rest (and every other recorded key) to cuBLAS.
awk 'NR % 2 == 1' "$out/class.keys" > "$out/chosen.keys"
{
  echo "# train.py bf16, written by tests/gpu/table_under_shim.sh"
  cat "$out/validators"
  echo "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio"
  while read -r k; do
    if grep -qxF "$k" "$out/chosen.keys"; then echo "$k,$kernel,-,1.5"; else echo "$k,cublas,-,1"; fi
  done < "$out/recorded.keys"
} > "$out/table.csv"
GEMMSHIM_LOG="$out/run.csv" "$gs" --lib "$shim" run --table "$out/table.csv" -- \
  python3 "$srcdir/examples/train.py" --dtype bf16 --steps "$steps" > "$out/run.out" 2>&1 ||
  no "gemmshim run: $(tail -3 "$out/run.out")"
keys "$out/run.csv" | awk -F'|' -v k=$kernel '$2 == k { print $1 }' | sort -u > "$out/served.keys"
if cmp -s "$out/served.keys" "$out/chosen.keys"; then
  echo "PASS: the table's $(wc -l < "$out/chosen.keys") routes, and only those, went to $kernel"
else
  no "routed keys differ from the table's:"; diff "$out/chosen.keys" "$out/served.keys"
fi
while read -r k; do
  keys "$out/run.csv" | grep -qF "$k|$kernel|routed" || no "$k: never served as routed"
done < "$out/chosen.keys"
keys "$out/run.csv" | grep -q '|cublas|tuned_cublas$' || no "no call forwarded as tuned_cublas"
grep -q "^gemmshim: [0-9]* GEMM calls.*$kernel [0-9.]*%" "$out/run.out" ||
  no "no summary naming $kernel: $(grep '^gemmshim:' "$out/run.out" | tail -2)"
grep '^gemmshim:' "$out/run.out" | sed 's/^/  /'

# 4. The same table from "another GPU": refused, naming the key.
here=$(sed -n 's/^Validator,gpu_name,//p' "$out/validators")
sed 's/^Validator,gpu_name,.*/Validator,gpu_name,NVIDIA H100 80GB HBM3/' "$out/table.csv" > "$out/other.csv"
GEMMSHIM_LOG="$out/other-run.csv" "$gs" --lib "$shim" run --table "$out/other.csv" -- \
  python3 "$srcdir/examples/train.py" --dtype bf16 --steps "$steps" > "$out/other.out" 2>&1 ||
  no "gemmshim run (other GPU's table): $(tail -3 "$out/other.out")"
if grep -qF "gpu_name is 'NVIDIA H100 80GB HBM3' in the table, '$here' here" "$out/other.out"; then
  echo "PASS: another GPU's table refused: $(grep -F 'is not used' "$out/other.out" | head -1)"
else
  no "no refusal naming gpu_name: $(grep '^gemmshim:' "$out/other.out" | head -3)"
fi
[ "$(grep -c 'is not used on device' "$out/other.out")" -eq 1 ] || no "the refusal is not said exactly once"
keys "$out/other-run.csv" | grep -q "|$kernel|" && no "a refused table still routed calls"
keys "$out/other-run.csv" | grep -q '|table_refused$' || no "no call forwarded as table_refused"

[ -n "${OUT:-}" ] && cp "$out"/table.csv "$out"/run.csv "$out"/record.csv "$OUT"/ 2>/dev/null
rm -rf "$out"
exit $fail
