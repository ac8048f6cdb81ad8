#!/usr/bin/env python3
"""Wall time per FP32 matmul (torch, x @ w) as a program sees it, to show
what the BF16x6 kernel's per-call scratch costs through the shim: run it
plain and under LD_PRELOAD=libgemmshim.so with GEMMSHIM_FP32=tc. Two
patterns: calls back to back (the shim's pool reuses its memory in stream
order), and a synchronization after every call (the pool gives its memory
back at each synchronization: release threshold 0, so the next call maps it
again). Prints one CSV line per pattern and size: ms per call (median of
REPS timed batches)."""
import argparse
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--sizes", default="4096,8192")
p.add_argument("--calls", type=int, default=20)
p.add_argument("--reps", type=int, default=7)
a = p.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False
print("size,pattern,ms_per_call")
for n in [int(s) for s in a.sizes.split(",")]:
    x = torch.randn(n, n, device="cuda")
    w = torch.randn(n, n, device="cuda")
    out = torch.empty(n, n, device="cuda")
    for pattern in ("back_to_back", "sync_each"):
        for _ in range(3):
            torch.matmul(x, w, out=out)
        torch.cuda.synchronize()
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            for _ in range(a.calls):
                torch.matmul(x, w, out=out)
                if pattern == "sync_each":
                    torch.cuda.synchronize()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3 / a.calls)
        times.sort()
        print(f"{n},{pattern},{times[len(times) // 2]:.4f}", flush=True)
