#!/bin/sh
# GPU check: the shim in every process of a multi-process job.
#  - torchrun DDP (examples/train.py --ddp) with LD_PRELOAD on every rank:
#    one log per rank (%p), none from the torchrun agent (it makes no GEMM
#    call), and rank 0's losses bitwise equal to the unshimmed DDP run. With
#    two or more GPUs it uses two ranks; with one GPU, one rank.
#  - two training processes sharing one GPU, each with its own log.
# Exits 77 without a GPU or PyTorch. Multicast (NVLS) stays off.
set -u
srcdir=${GS_SRCDIR:-.}
builddir=${GS_BUILDDIR:-.}
shim=${GS_SHIM:-$builddir/libgemmshim.so}
out=${TMPDIR:-/tmp}/gs-ddp.$$
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NCCL_CUMEM_ENABLE=0
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null ||
  { echo "SKIP: no PyTorch with CUDA"; rm -rf "$out"; exit 77; }
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
ranks=$([ "$gpus" -ge 2 ] && echo 2 || echo 1)
steps=${GS_TRAIN_STEPS:-6}
fail=0
train="$srcdir/examples/train.py --ddp --deterministic --steps $steps --d-model 512 --layers 2"

python3 -m torch.distributed.run --standalone --nproc_per_node="$ranks" $train \
  --out "$out/plain.txt" > "$out/plain.log" 2>&1 || { echo "FAIL: DDP without the shim"; tail "$out/plain.log"; fail=1; }
GEMMSHIM_LOG="$out/ddp.%p.csv" LD_PRELOAD="$shim" \
  python3 -m torch.distributed.run --standalone --nproc_per_node="$ranks" $train \
  --out "$out/shim.txt" > "$out/shim.log" 2>&1 || { echo "FAIL: DDP under the shim"; tail "$out/shim.log"; fail=1; }
logs=$(ls "$out"/ddp.*.csv 2>/dev/null | wc -l)
if [ "$logs" -eq "$ranks" ]; then
  echo "PASS: $ranks rank(s), $logs log(s): one per rank, none from the torchrun agent"
else
  echo "FAIL: $ranks rank(s) but $logs log file(s)"; fail=1
fi
if cmp -s "$out/plain.txt" "$out/shim.txt"; then
  echo "PASS: rank 0 losses bitwise identical with and without the shim"
else
  echo "FAIL: rank 0 losses differ"; fail=1
fi

# Two processes sharing the GPU, each with its own log.
for i in 1 2; do
  GEMMSHIM_LOG="$out/shared.%p.csv" LD_PRELOAD="$shim" \
    python3 "$srcdir/examples/train.py" --steps 4 --d-model 512 --layers 2 > "$out/shared$i.log" 2>&1 &
done
wait
shared=$(ls "$out"/shared.*.csv 2>/dev/null | wc -l)
if [ "$shared" -eq 2 ] && ! grep -q FAIL "$out"/shared*.log; then
  echo "PASS: two processes on one GPU, two logs"
else
  echo "FAIL: two processes on one GPU gave $shared log(s)"; fail=1
fi
[ "$ranks" -lt 2 ] && echo "NOTE: one GPU here: the two-rank DDP run was not made"
for f in "$out"/ddp.*.csv; do echo "--- $(basename "$f")"; head -5 "$f"; done
rm -rf "$out"
exit $fail
