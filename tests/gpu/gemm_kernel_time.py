#!/usr/bin/env python3
"""gemm_kernel_time.py TRAIN_PY JSON_OUT [TRAIN_ARGS...]

Run a PyTorch script (examples/train.py) under torch.profiler and write, as
JSON, the GPU time of the kernels launched from inside GEMM ops (aten::mm,
addmm, bmm, baddbmm, _addmm_activation: the ops that call cuBLAS), and how
many such ops ran. A kernel belongs to the innermost CPU op that encloses
its launch on the launching thread, so a copy or fill a GEMM op runs
through a nested op of its own is not counted. For tests/gpu/time_under_shim.sh,
which compares it with what the shim's GEMMSHIM_TIME columns say.
"""

import bisect
import json
import os
import runpy
import sys
import tempfile

GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_addmm_activation"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def innermost_op(ops_by_tid, tid, ts):
    """The innermost cpu_op on thread tid whose interval holds ts, or None.
    Ops on one thread nest, so it is the latest-starting op that has not
    ended by ts (looked for among the 4000 ops that started last)."""
    ops = ops_by_tid.get(tid)
    if not ops:
        return None
    i = bisect.bisect_right(ops, (ts, float("inf"), "")) - 1
    for j in range(i, max(i - 4000, -1), -1):
        start, end, name = ops[j]
        if end >= ts:
            return name
    return None


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    train, out_path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    import torch
    from torch.profiler import ProfilerActivity, profile

    if not torch.cuda.is_available():
        return 77
    sys.argv = [train] + args
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        try:
            runpy.run_path(train, run_name="__main__")
        except SystemExit as e:
            if e.code not in (0, None):
                raise
        torch.cuda.synchronize()
    fd, trace_path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(trace_path)
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    os.unlink(trace_path)

    ops_by_tid = {}
    gemm_ops = 0
    for e in events:
        if e.get("cat") == "cpu_op" and "dur" in e:
            ops_by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
            gemm_ops += e["name"] in GEMM_OPS
    for ops in ops_by_tid.values():
        ops.sort()
    launch_of = {}
    for e in events:
        if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}):
            launch_of[e["args"]["correlation"]] = e
    gemm_us = other_us = 0.0
    gemm_kernels = unattributed = 0
    by_name = {}
    for e in events:
        if e.get("cat") != "kernel":
            continue
        launch = launch_of.get(e.get("args", {}).get("correlation"))
        op = innermost_op(ops_by_tid, launch["tid"], launch["ts"]) if launch else None
        if launch is None:
            unattributed += 1
        if op in GEMM_OPS:
            gemm_us += e["dur"]
            gemm_kernels += 1
            key = e["name"][:80]
            by_name[key] = by_name.get(key, 0.0) + e["dur"]
        else:
            other_us += e["dur"]
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:8]
    result = {"gemm_kernel_us": gemm_us, "gemm_kernels": gemm_kernels, "gemm_ops": gemm_ops,
              "other_kernel_us": other_us, "unattributed_kernels": unattributed,
              "top_gemm_kernels_us": top}
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
