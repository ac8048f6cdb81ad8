#!/usr/bin/env python3
"""Time GEMMs as a PyTorch program makes them: torch.mm with operands laid
out so that PyTorch calls cuBLAS with exactly the given layout and sizes
(cuBLAS's column-major terms, as the shim's log and shape files write
them), inputs hot in L2 as a program's fresh activations are, calls back
to back between two CUDA events. Run it plain and under
LD_PRELOAD=libgemmshim.so with a route table, in turn: the difference is
what the table's routes do to that program's calls (a route measured in
the benchmark with inputs rotated past the L2 and cuBLAS called by the
benchmark's own handle may meet other conditions here).

  torch_gemm_calls.py --shapes FILE [--calls 50] [--reps 9]
FILE: lines "m n k LAYOUT [bf16|f16|f32]" ('#' comments). A transposed
operand with a dimension of 1 is refused: PyTorch passes such a view as
not transposed, so the call would not have the layout asked for (check
the shim's log for what arrived). Prints CSV:
m,n,k,layout,dtype,us_per_call (GPU time between the events, median of
REPS batches of CALLS calls), us_min, us_max, host_us_per_call (the host's
time to enqueue a batch, median: what a host-bound program pays per call;
the queue never fills at these counts)."""
import argparse
import sys
import time

import torch

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def operands(m, n, k, layout, dtype):
    """x, w with torch.mm(x, w) -> cuBLAS gemm(layout, m, n, k): the output
    (n x m row-major) is C (m x n column-major); w is op(A)^T, x is
    op(B)^T. A transposed operand is a .T view of a contiguous tensor."""
    ta, tb = layout[0] == "T", layout[1] == "T"
    w = torch.randn(m, k, device="cuda", dtype=dtype).t() if ta else \
        torch.randn(k, m, device="cuda", dtype=dtype)
    x = torch.randn(k, n, device="cuda", dtype=dtype).t() if tb else \
        torch.randn(n, k, device="cuda", dtype=dtype)
    return x, w


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", required=True)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--reps", type=int, default=9)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    if hasattr(torch.backends.cuda, "preferred_blas_library"):
        torch.backends.cuda.preferred_blas_library("cublas")   # the BLAS entry, not cuBLASLt
    shapes = []
    for line in open(a.shapes):
        f = line.split("#")[0].split()
        if not f:
            continue
        if len(f) < 4 or f[3] not in ("NN", "NT", "TN", "TT") or (len(f) > 4 and f[4] not in DTYPES):
            sys.exit(f"{a.shapes}: not 'm n k LAYOUT [dtype]': {line.strip()}")
        m, n, k = int(f[0]), int(f[1]), int(f[2])
        if (f[3][0] == "T" and 1 in (m, k)) or (f[3][1] == "T" and 1 in (n, k)):
            sys.exit(f"{a.shapes}: {line.strip()}: a transposed operand with a dimension of 1 "
                     "reaches cuBLAS as not transposed")
        shapes.append((m, n, k, f[3], f[4] if len(f) > 4 else "bf16"))
    print("m,n,k,layout,dtype,us_per_call,us_min,us_max,host_us_per_call")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for m, n, k, layout, dt in shapes:
        x, w = operands(m, n, k, layout, DTYPES[dt])
        out = torch.empty(n, m, device="cuda", dtype=DTYPES[dt])
        for _ in range(5):
            torch.mm(x, w, out=out)
        torch.cuda.synchronize()
        times, host = [], []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            start.record()
            for _ in range(a.calls):
                torch.mm(x, w, out=out)
            stop.record()
            host.append((time.perf_counter() - t0) * 1e6 / a.calls)
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1e3 / a.calls)
        times.sort()
        host.sort()
        print(f"{m},{n},{k},{layout},{dt},{times[len(times) // 2]:.2f},{times[0]:.2f},{times[-1]:.2f},"
              f"{host[len(host) // 2]:.2f}", flush=True)


if __name__ == "__main__":
    main()
