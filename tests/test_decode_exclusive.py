#!/usr/bin/env python3
"""examples/decode.py's exclusive GEMM time on made-up profiler traces: a
kernel launched with programmatic dependent launch starts under the one
before it and waits; its exclusive time leaves that wait out."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "decode", os.path.join(HERE, "..", "examples", "decode.py"))
decode = importlib.util.module_from_spec(spec)
spec.loader.exec_module(decode)

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


def kernel(name, ts, dur, stream=7, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": stream}}


# one stream, kernels one after another: exclusive == duration
serial = [((0, 7), 0.0, 10.0, "norm"), ((0, 7), 12.0, 5.0, "gemm"), ((0, 7), 17.0, 3.0, "add")]
check("serial", decode.exclusive_us(serial),
      [("norm", 10.0, 10.0), ("gemm", 5.0, 5.0), ("add", 3.0, 3.0)])

# a PDL kernel launched at 6 under a producer that ends at 10, done at 14:
# 4 us its own; the producer keeps all 10
pdl = [((0, 7), 6.0, 8.0, "gemmshim_decode"), ((0, 7), 0.0, 10.0, "producer")]
check("pdl overlap", decode.exclusive_us(pdl),
      [("producer", 10.0, 10.0), ("gemmshim_decode", 8.0, 4.0)])

# wholly under the kernel before it: nothing of its own
check("inside", decode.exclusive_us([((0, 7), 0.0, 10.0, "a"), ((0, 7), 2.0, 3.0, "b")]),
      [("a", 10.0, 10.0), ("b", 3.0, 0.0)])

# overlap is counted per stream only: another stream's kernel keeps its time
two = decode.exclusive_us([((0, 7), 0.0, 10.0, "a"), ((0, 9), 5.0, 10.0, "b")])
check("two streams", sorted(two), [("a", 10.0, 10.0), ("b", 10.0, 10.0)])

# a chain: each PDL kernel under the end of the one before
chain = decode.exclusive_us([((0, 7), 0.0, 10.0, "p"), ((0, 7), 8.0, 6.0, "g1"),
                             ((0, 7), 13.0, 4.0, "g2")])
check("chain", chain, [("p", 10.0, 10.0), ("g1", 6.0, 4.0), ("g2", 4.0, 3.0)])
check("chain covers the span", sum(ex for _, _, ex in chain), 17.0)

# the trace: device activity only (kernels, copies, sets), keyed by device and stream
trace = {"traceEvents": [
    kernel("gemmshim_decode_kernel", 100.0, 8.0),
    kernel("Memcpy DtoD", 90.0, 2.0, cat="gpu_memcpy"),
    kernel("cudaLaunchKernel", 95.0, 3.0, cat="cuda_runtime"),
    {"ph": "i", "cat": "kernel", "name": "marker", "ts": 1.0},
    kernel("nvjet_tst", 120.0, 5.0, stream=9),
]}
check("device events", decode.device_events(trace), [
    ((0, 7), 100.0, 8.0, "gemmshim_decode_kernel"),
    ((0, 7), 90.0, 2.0, "Memcpy DtoD"),
    ((0, 9), 120.0, 5.0, "nvjet_tst"),
])


class FakeProfile:
    """export_chrome_trace as torch.profiler's: the trace written to a path."""
    def __init__(self, trace):
        self.trace = trace

    def export_chrome_trace(self, path):
        import json
        with open(path, "w") as f:
            json.dump(self.trace, f)


# the GEMM kernels' exclusive time in a profile: a producer, then two GEMMs
# launched early under it and under each other; a softmax not counted
prof = FakeProfile({"traceEvents": [
    kernel("elementwise_kernel", 0.0, 10.0),
    kernel("gemmshim_decode_kernel<bf16>", 7.0, 6.0),       # 3 of its own
    kernel("nvjet_tst_128x64", 12.0, 5.0),                   # 4 of its own
    kernel("softmax_warp_forward", 17.0, 2.0),
]})
check("gemm exclusive, busy", decode.exclusive_split_us(prof), (7.0, 19.0))


class BrokenProfile:
    def export_chrome_trace(self, path):
        raise RuntimeError("no trace")


check("no trace", decode.exclusive_split_us(BrokenProfile()), (None, None))

# an event that does not say its stream: no exclusive time rather than a
# wrong one (nor an exception out of the timing run)
nameless = kernel("gemmshim_decode_kernel", 1.0, 2.0)
del nameless["args"]["stream"]
check("no stream", decode.exclusive_split_us(FakeProfile({"traceEvents": [nameless]})),
      (None, None))
check("no duration", decode.exclusive_split_us(FakeProfile({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "args": {"stream": 7}}]})), (None, None))

for f in failures:
    print("FAIL:", f)
print("%d checks failed" % len(failures) if failures else "PASS: exclusive GEMM time")
sys.exit(1 if failures else 0)
