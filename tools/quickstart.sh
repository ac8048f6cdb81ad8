#!/usr/bin/env bash
# The main job: build, then on a machine with a CUDA GPU run the GPU checks
# and the benchmark (tools/device-job.sh); without a GPU, say so and stop.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "quickstart: built build/libgemmshim.so; there is no CUDA GPU on this machine, so no GPU check or benchmark ran."
  echo "quickstart: use it with  LD_PRELOAD=$(pwd)/build/libgemmshim.so GEMMSHIM_LOG=/tmp/gemmshim.%p.csv <program>"
  exit 0
fi
exec bash tools/device-job.sh build
