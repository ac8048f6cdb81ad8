#!/usr/bin/env python3
"""decode.py - greedy decoding with a Llama-3-shaped decoder, for gemmshim.

Decode is the few-token regime: each step multiplies every weight matrix by
`batch` activation columns, so the GEMMs (n = batch <= 64) are bound by
reading the weights once. This script drives exactly those calls, the way an
inference server does, so the same run can be made with and without
LD_PRELOAD=libgemmshim.so.

The model: Llama-3-8B shapes (--config 8b: hidden 4096, 32 query heads, 8 KV
heads of 128, SwiGLU MLP 14336, vocab 128256) or 70B shapes (--config 70b:
hidden 8192, 64 heads, 8 KV heads, MLP 28672), --layers of them, random
weights from a fixed seed, bf16 or fp16. No download, no transformers.
What reaches cuBLAS: every projection is torch.nn.functional.linear without
bias (fused QKV, output projection, fused gate/up, down, LM head), which
PyTorch sends to cublasGemmEx (or cublasLtMatmul) in layout TN with
m = out_features, n = tokens, k = in_features. Attention is
scaled_dot_product_attention over a static KV cache (fused attention
kernels, not cuBLAS), so that the GEMM time measured is the weights' time.

Modes:
  (default)               per batch size: prefill a random prompt, decode
                          --steps tokens greedily; median step time eager and
                          replayed from a CUDA graph; GEMM GPU time per step
                          from torch.profiler (the kernels' durations, and
                          their exclusive time: without the wait of a kernel
                          launched with programmatic dependent launch for the
                          one before it; and the time the GPU was busy);
                          a table (and --json).
  --teacher-forced OUT    feed a fixed token sequence (made here, or read from
                          --tokens FILE, a previous OUT) and save every step's
                          logits (float32) and greedy argmax to OUT.
  --compare A B           compare two --teacher-forced outputs; exit 1 if a
                          greedy token differs anywhere but at a near-tie.
  --cpu-smoke             a tiny model on the CPU (no graph, no profiler), to
                          check the code paths, plus a check that decoding with
                          the KV cache gives the logits of a full recompute.

Exit status: 0 done, 1 comparison or self-test failed, 2 bad arguments,
77 no CUDA GPU (or no PyTorch).
"""

import argparse
import json
import math
import statistics
import sys
import time

CONFIGS = {
    "8b": dict(hidden=4096, heads=32, kv_heads=8, inter=14336, vocab=128256),
    "70b": dict(hidden=8192, heads=64, kv_heads=8, inter=28672, vocab=128256),
    # --cpu-smoke: the same structure (GQA, 2 queries per KV head), tiny
    "smoke": dict(hidden=256, heads=4, kv_heads=2, inter=512, vocab=1024),
}
ROPE_THETA = 500000.0  # Llama 3
NORM_EPS = 1e-5
LOGIT_STD = 2.0        # target spread of the logits (see Decoder.__init__)

# Kernel names counted as GEMMs (lowercase substrings): cuBLAS/cuBLASLt's
# kernel families and the shim's own kernels. Fused attention kernels can
# carry 'cutlass' or 'xmma' in their names, so they are excluded first.
# splitKreduce: the second kernel of a cuBLAS split-K GEMM, part of its time
GEMM_NAME_PARTS = ("gemm", "gemv", "sm90_xmma", "cutlass", "nvjet", "gemmshim_", "splitkreduce")
NOT_GEMM_NAME_PARTS = ("fmha", "flash", "attention", "sdpa", "softmax", "gemmshim_compare")


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Greedy decoding with a Llama-3-shaped decoder (random weights): "
                    "a cuBLAS decode workload for gemmshim.")
    p.add_argument("--config", choices=("8b", "70b"), default="8b",
                   help="layer shapes: Llama-3 8B or 70B (default 8b)")
    p.add_argument("--layers", type=int, default=None,
                   help="decoder layers (default 4; 2 with --cpu-smoke)")
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), default="bf16",
                   help="weights and activations (default bf16; fp32 is for --cpu-smoke)")
    p.add_argument("--batch", default=None,
                   help="comma-separated batch sizes (default 1,8,32; 1,8 with --teacher-forced)")
    p.add_argument("--steps", type=int, default=None,
                   help="decode steps per batch size (default 32; 8 with --teacher-forced)")
    p.add_argument("--prompt", type=int, default=16, help="prompt length for the prefill (default 16)")
    p.add_argument("--seed", type=int, default=1234, help="seed for weights and tokens (default 1234)")
    p.add_argument("--profile-steps", type=int, default=8,
                   help="decode steps under torch.profiler for the GEMM time (default 8)")
    p.add_argument("--json", metavar="OUT", help="write the table's numbers as JSON")
    p.add_argument("--teacher-forced", metavar="OUT",
                   help="feed fixed tokens; save per-step logits and greedy tokens to OUT (torch.save)")
    p.add_argument("--tokens", metavar="FILE",
                   help="with --teacher-forced: the token sequences of a previous OUT")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="compare two --teacher-forced outputs (exit 1 on a real greedy mismatch)")
    p.add_argument("--cpu-smoke", action="store_true",
                   help="tiny model (hidden 256, 2 layers) on the CPU: checks the code paths")
    a = p.parse_args(argv)
    if a.tokens and not a.teacher_forced:
        p.error("--tokens needs --teacher-forced")
    if a.compare and (a.teacher_forced or a.cpu_smoke):
        p.error("--compare is a mode of its own")
    if a.layers is None:
        a.layers = 2 if a.cpu_smoke else 4
    if a.steps is None:
        a.steps = 8 if a.teacher_forced else 32
    a.batch_given = a.batch is not None
    if a.batch is None:
        a.batch = "1,8" if a.teacher_forced else "1,8,32"
    try:
        a.batches = [int(s) for s in a.batch.split(",") if s.strip()]
    except ValueError:
        p.error("--batch must be comma-separated integers, not %r" % a.batch)
    if not a.batches or min(a.batches) < 1:
        p.error("--batch sizes must be positive")
    for name in ("layers", "steps", "prompt", "profile_steps"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    return a


class Decoder:
    """A Llama-style decoder with a static KV cache.

    Everything a decode step touches lives in tensors allocated by
    set_batch(): the token ids (self.tok), the position (self.pos), the
    cache and the logits. decode_step() reads them and writes the next
    greedy token into self.tok and position + 1 into self.pos, so one
    captured step replays as the next step, with no host work in between."""

    def __init__(self, torch, cfg, layers, dtype, device, seed):
        self.torch = torch
        self.F = torch.nn.functional
        self.dtype = dtype
        self.device = device
        self.hidden = cfg["hidden"]
        self.n_heads = cfg["heads"]
        self.n_kv = cfg["kv_heads"]
        self.head_dim = self.hidden // self.n_heads
        self.group = self.n_heads // self.n_kv    # query heads per KV head
        self.inter = cfg["inter"]
        self.vocab = cfg["vocab"]
        self.sdpa = getattr(self.F, "scaled_dot_product_attention", None)

        g = torch.Generator(device=device)
        g.manual_seed(seed)

        def normal(shape, std):
            # filled in place in the target dtype: no float32 copy of the
            # 1-2 GB embedding and LM head
            w = torch.empty(shape, dtype=dtype, device=device)
            return w.normal_(0.0, std, generator=g)

        def ones(n):
            return torch.ones(n, dtype=dtype, device=device)

        h, hd = self.hidden, self.head_dim
        # Unit-variance embeddings: the residual stream starts at RMS 1, and
        # every block adds O(1) to it (std 0.02 * sqrt(fan_in) ~ 1.3).
        self.embed = normal((self.vocab, h), 1.0)
        self.layers = []
        for _ in range(layers):
            self.layers.append(dict(
                attn_norm=ones(h),
                # separate projections, as transformers' Llama has them:
                # k and v are the GQA-sized (n_kv * head_dim) x hidden GEMMs
                wq=normal((self.n_heads * hd, h), 0.02),
                wk=normal((self.n_kv * hd, h), 0.02),
                wv=normal((self.n_kv * hd, h), 0.02),
                wo=normal((h, self.n_heads * hd), 0.02),
                mlp_norm=ones(h),
                w_gate=normal((self.inter, h), 0.02),
                w_up=normal((self.inter, h), 0.02),
                w_down=normal((h, self.inter), 0.02),
            ))
        self.final_norm = ones(h)
        # After the final RMSNorm every element has RMS 1, so this std gives
        # logits of std LOGIT_STD: a clear greedy choice most of the time.
        self.lm_head = normal((self.vocab, h), LOGIT_STD / math.sqrt(h))

        half = hd // 2
        self.inv_freq = 1.0 / (ROPE_THETA ** (
            torch.arange(0, half, dtype=torch.float32, device=device) / half))
        self.batch = None

    def linear_weights(self):
        ws = [self.lm_head]
        for L in self.layers:
            ws += [L["wq"], L["wk"], L["wv"], L["wo"], L["w_gate"], L["w_up"], L["w_down"]]
        return ws

    def gemm_shapes(self, n):
        """(name, m, n, k) of the GEMMs of one decode step, as cuBLAS sees them."""
        h, hd = self.hidden, self.head_dim
        return [("q", self.n_heads * hd, n, h), ("k", self.n_kv * hd, n, h),
                ("v", self.n_kv * hd, n, h), ("o", h, n, self.n_heads * hd),
                ("gate", self.inter, n, h), ("up", self.inter, n, h), ("down", h, n, self.inter),
                ("lm_head", self.vocab, n, h)]

    def set_batch(self, batch, max_len):
        """Allocate the static state for `batch` sequences of up to max_len."""
        torch = self.torch
        kw = dict(device=self.device)
        self.batch = batch
        self.max_len = max_len
        shape = (batch, self.n_kv, max_len, self.head_dim)
        self.k_cache = [torch.zeros(shape, dtype=self.dtype, **kw) for _ in self.layers]
        self.v_cache = [torch.zeros(shape, dtype=self.dtype, **kw) for _ in self.layers]
        self.tok = torch.zeros((batch, 1), dtype=torch.long, **kw)
        self.pos = torch.zeros((1,), dtype=torch.long, **kw)
        self.logits = torch.zeros((batch, self.vocab), dtype=self.dtype, **kw)
        self.key_pos = torch.arange(max_len, **kw)
        freqs = torch.outer(torch.arange(max_len, dtype=torch.float32, **kw), self.inv_freq)
        self.cos, self.sin = freqs.cos(), freqs.sin()

    def rmsnorm(self, x, w):
        xf = x.float()
        xf = xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + NORM_EPS)
        return xf.to(self.dtype) * w

    def rope(self, x, cos, sin):
        """Rotary embedding (Llama's rotate-half form) on x: [B, T, heads, hd]."""
        half = self.head_dim // 2
        xf = x.float()
        x1, x2 = xf[..., :half], xf[..., half:]
        c, s = cos[None, :, None, :], sin[None, :, None, :]
        return self.torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(self.dtype)

    def attention(self, q, k, v, bias):
        """q: [B, KV, G*T, hd] (the G query heads of each KV head stacked),
        k, v: [B, KV, L, hd]; bias: [G*T, L], 0 or -inf. SDPA's default scale
        is 1/sqrt(hd), Llama's."""
        if self.sdpa is not None:
            return self.sdpa(q, k, v, attn_mask=bias[None, None])
        # PyTorch < 2.0 (no SDPA): the same attention with explicit matmuls
        att = self.torch.matmul(q, k.transpose(-2, -1)).float() / math.sqrt(self.head_dim)
        att = self.torch.softmax(att + bias.float(), dim=-1)
        return self.torch.matmul(att.to(self.dtype), v)

    def forward(self, tokens, positions):
        """Logits of the last position: tokens [B, T] at positions [T] (a
        device tensor, so a captured step replays at the next position)."""
        torch, F = self.torch, self.F
        B, T = tokens.shape
        H, KV, G, hd = self.n_heads, self.n_kv, self.group, self.head_dim
        cos = torch.index_select(self.cos, 0, positions)
        sin = torch.index_select(self.sin, 0, positions)
        # causal mask over the whole static cache: key j is visible to the
        # query at position p iff j <= p (slots past p hold stale values)
        visible = self.key_pos[None, :] <= positions[:, None]                    # [T, L]
        bias = torch.zeros(visible.shape, dtype=self.dtype, device=self.device)
        bias = bias.masked_fill(~visible, float("-inf")).repeat(G, 1)           # [G*T, L]
        x = F.embedding(tokens, self.embed)
        for L, k_cache, v_cache in zip(self.layers, self.k_cache, self.v_cache):
            xn = self.rmsnorm(x, L["attn_norm"])
            q, k, v = F.linear(xn, L["wq"]), F.linear(xn, L["wk"]), F.linear(xn, L["wv"])
            q = self.rope(q.reshape(B, T, H, hd), cos, sin)
            k = self.rope(k.reshape(B, T, KV, hd), cos, sin)
            v = v.reshape(B, T, KV, hd)
            k_cache.index_copy_(2, positions, k.transpose(1, 2))
            v_cache.index_copy_(2, positions, v.transpose(1, 2))
            # Grouped-query attention without copying the cache G times:
            # head h uses KV head h // G, so stack each KV head's G queries.
            q = q.reshape(B, T, KV, G, hd).permute(0, 2, 3, 1, 4).reshape(B, KV, G * T, hd)
            y = self.attention(q, k_cache, v_cache, bias)
            y = y.reshape(B, KV, G, T, hd).permute(0, 3, 1, 2, 4).reshape(B, T, H * hd)
            x = x + F.linear(y, L["wo"])
            xn = self.rmsnorm(x, L["mlp_norm"])
            gate, up = F.linear(xn, L["w_gate"]), F.linear(xn, L["w_up"])
            x = x + F.linear(F.silu(gate) * up, L["w_down"])
        return F.linear(self.rmsnorm(x[:, -1], self.final_norm), self.lm_head)

    def prefill(self, prompt):
        """Run the prompt [B, P] through the cache; leaves the greedy next
        token in self.tok and P in self.pos."""
        P = prompt.shape[1]
        logits = self.forward(prompt, self.torch.arange(P, device=self.device))
        self.logits.copy_(logits)
        self.tok.copy_(logits.argmax(-1, keepdim=True))
        self.pos.fill_(P)

    def decode_step(self):
        """One token per sequence: self.tok at self.pos -> self.logits; then
        the greedy token into self.tok and self.pos + 1."""
        logits = self.forward(self.tok, self.pos)
        self.logits.copy_(logits)
        self.tok.copy_(logits.argmax(-1, keepdim=True))
        self.pos.add_(1)


def round_up(x, m):
    return (x + m - 1) // m * m


def make_tokens(torch, batch, length, vocab, seed):
    """[batch, length] random token ids, from a CPU generator (the same on
    every machine and run)."""
    g = torch.Generator(device="cpu")
    g.manual_seed(seed * 1000003 + batch)
    return torch.randint(vocab, (batch, length), generator=g)


def is_gemm_kernel(name):
    n = name.lower()
    if any(part in n for part in NOT_GEMM_NAME_PARTS):
        return False
    return any(part in n for part in GEMM_NAME_PARTS)


# The device activity of a Chrome trace (torch.profiler's export).
DEVICE_TRACE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def device_events(trace):
    """(stream, start_us, dur_us, name) of each device event in a Chrome
    trace (a dict as torch.profiler's export_chrome_trace writes it).
    ValueError where an event does not say its stream, start or duration
    (events of unknown streams cannot be told apart)."""
    out = []
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X" or e.get("cat") not in DEVICE_TRACE_CATS:
            continue
        args = e.get("args") or {}
        if args.get("stream") is None or "ts" not in e or "dur" not in e:
            raise ValueError("a %s event without its stream, start or duration" % e.get("cat"))
        stream = (args.get("device"), args.get("stream"))
        out.append((stream, float(e["ts"]), float(e["dur"]), e.get("name", "")))
    return out


def exclusive_us(events):
    """[(name, dur_us, exclusive_us)] for events (stream, start_us, dur_us,
    name): an event's exclusive time is the part of its span that no
    earlier event of its stream still covers, how much later the stream is
    done because of it. A kernel launched with programmatic dependent
    launch starts while the kernel before it runs and waits for it; the
    profiler counts that wait in its duration, the exclusive time does not
    (it stays with the kernel that was running). Events of one stream that
    never overlap: exclusive == duration."""
    by_stream = {}
    for ev in events:
        by_stream.setdefault(ev[0], []).append(ev)
    out = []
    for evs in by_stream.values():
        evs.sort(key=lambda e: (e[1], e[1] + e[2]))
        busy_until = -math.inf
        for _, start, dur, name in evs:
            end = start + dur
            out.append((name, dur, max(0.0, end - max(start, busy_until))))
            busy_until = max(busy_until, end)
    return out


def exclusive_split_us(prof):
    """(GEMM kernels' exclusive time, every device event's exclusive time:
    the time the streams were busy) in a finished profile, in us; (None,
    None) where its trace cannot be had or read. The busy time shows
    whether time the GEMMs lost went to their neighbours instead (a kernel
    launched with PDL holds SM room while it waits)."""
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            times = exclusive_us(device_events(json.load(f)))
    except Exception as e:  # an old or odd profiler: the durations stay
        print("note: no exclusive GEMM time (the profiler's trace: %s)" % e, file=sys.stderr)
        return None, None
    finally:
        os.unlink(path)
    return (sum(ex for name, _, ex in times if is_gemm_kernel(name)),
            sum(ex for _, _, ex in times))


def profile_gemm_time(torch, model, steps):
    """GEMM kernel time per decode step (us), from `steps` eager steps under
    torch.profiler; plus {kernel name: [calls, us]} for GEMMs and others,
    and per step the GEMM kernels' exclusive time and the streams' busy
    time (us; None if unknown)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            model.decode_step()
        torch.cuda.synchronize()
    gemm, other = {}, {}
    for e in prof.events():
        # device events only: kernels, memcpy and memset (CPU-side events,
        # if any, have device_type CPU)
        if not str(e.device_type).endswith("CUDA"):
            continue
        us = e.time_range.elapsed_us()
        slot = (gemm if is_gemm_kernel(e.name) else other).setdefault(e.name, [0, 0.0])
        slot[0] += 1
        slot[1] += us
    total = sum(us for _, us in gemm.values())
    excl, busy = exclusive_split_us(prof)
    per_step = lambda us: None if us is None else us / steps
    return total / steps, gemm, other, per_step(excl), per_step(busy)


def print_kernels(title, kernels, steps, limit=None):
    rows = sorted(kernels.items(), key=lambda kv: -kv[1][1])
    print("  %s (calls/step, us/step):" % title)
    for name, (calls, us) in rows[:limit]:
        print("    %6.1f %9.1f  %s" % (calls / steps, us / steps, name[:150]))
    if limit is not None and len(rows) > limit:
        print("    ... %d more" % (len(rows) - limit))


def timed(torch, is_cuda, fn):
    if is_cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    if is_cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def run_timing(torch, args, model, is_cuda):
    """Eager and graph step times and the GEMM time per batch size."""
    weight_bytes = sum(w.numel() * w.element_size() for w in model.linear_weights())
    max_len = round_up(args.prompt + args.steps + 1, 64)

    def start(batch):
        """Fresh state for `batch`, prefilled: the first decode step's input."""
        model.set_batch(batch, max_len)
        model.prefill(make_tokens(torch, batch, args.prompt, model.vocab, args.seed).to(model.device))

    results, eager_toks = [], {}
    # Phase 1, every batch size: eager steps, then the profiled ones. Eager
    # first: under the shim that is where each class of calls gets its
    # first-use self-check (a capture never starts one). And the profiler
    # runs before any graph exists, so CUPTI never meets a graph.
    for batch in args.batches:
        start(batch)
        first_tok = model.tok.clone()
        eager_ms, toks = [], []
        for _ in range(args.steps):
            eager_ms.append(timed(torch, is_cuda, model.decode_step))
            toks.append(model.tok.clone())
        eager_toks[batch] = torch.cat(toks, dim=1)
        # step 0 pays for cuBLAS heuristics and the allocator: leave it out
        row = dict(batch=batch,
                   eager_ms_per_step=statistics.median(eager_ms[1:] or eager_ms),
                   graph_ms_per_step=None, gemm_us_per_step=None,
                   gemm_exclusive_us_per_step=None, gpu_busy_us_per_step=None,
                   weight_GB=weight_bytes / 1e9, gemm_GBps=None,
                   graph_matches_eager=None, gemm_kernels=None)
        print("batch %d: greedy tokens of sequence 0: %s%s" % (
            batch, " ".join(str(int(t)) for t in eager_toks[batch][0, :12].tolist()),
            " ..." if args.steps > 12 else ""))
        if is_cuda:
            # the same steps again (the slots past the prompt are masked
            # until they are written again, in the same order)
            model.tok.copy_(first_tok)
            model.pos.fill_(args.prompt)
            nprof = min(args.profile_steps, args.steps)
            gemm_us, gemm_k, other_k, gemm_excl, busy = profile_gemm_time(torch, model, nprof)
            row["gemm_us_per_step"] = gemm_us
            row["gemm_exclusive_us_per_step"] = gemm_excl
            row["gpu_busy_us_per_step"] = busy
            row["gemm_GBps"] = weight_bytes / (gemm_us * 1e-6) / 1e9 if gemm_us > 0 else None
            row["gemm_kernels"] = {n: [c / nprof, us / nprof] for n, (c, us) in gemm_k.items()}
            print("batch %d: kernels of %d profiled decode steps:" % (batch, nprof))
            print_kernels("counted as GEMM", gemm_k, nprof)
            print_kernels("not counted", other_k, nprof, limit=8)
        sys.stdout.flush()
        results.append(row)
    if not is_cuda:
        return results

    # Phase 2: one decode step captured in a CUDA graph, replayed per step.
    for row in results:
        batch = row["batch"]
        start(batch)
        first_tok = model.tok.clone()

        def reset():
            model.tok.copy_(first_tok)
            model.pos.fill_(args.prompt)

        # PyTorch wants the captured work warmed up on a side stream first
        # (allocator, cuBLAS workspaces).
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                reset()
                model.decode_step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            model.decode_step()  # recorded, not run: tok and pos are as reset
        reset()
        graph_ms, toks = [], []
        for _ in range(args.steps):
            graph_ms.append(timed(torch, is_cuda, graph.replay))
            toks.append(model.tok.clone())
        row["graph_ms_per_step"] = statistics.median(graph_ms)
        # the same inputs as the eager run: the same tokens, unless the two
        # ran different kernels (under the shim: cuBLAS during self-checks)
        row["graph_matches_eager"] = bool(torch.equal(torch.cat(toks, dim=1), eager_toks[batch]))
        del graph
    return results


def fmt(v, spec):
    return "-" if v is None else spec % v


def print_table(results):
    print("%5s %17s %17s %16s %13s %12s %9s %9s %11s" % (
        "batch", "eager_ms_per_step", "graph_ms_per_step", "gemm_us_per_step", "gemm_excl_us",
        "gpu_busy_us", "weight_GB", "gemm_GBps", "graph=eager"))
    for r in results:
        same = r["graph_matches_eager"]
        print("%5d %17s %17s %16s %13s %12s %9.3f %9s %11s" % (
            r["batch"], fmt(r["eager_ms_per_step"], "%.3f"), fmt(r["graph_ms_per_step"], "%.3f"),
            fmt(r["gemm_us_per_step"], "%.1f"), fmt(r["gemm_exclusive_us_per_step"], "%.1f"),
            fmt(r["gpu_busy_us_per_step"], "%.1f"), r["weight_GB"], fmt(r["gemm_GBps"], "%.0f"),
            "-" if same is None else ("yes" if same else "NO")))


def torch_load(torch, path):
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # PyTorch without weights_only
        return torch.load(path, map_location="cpu")


def run_teacher_forced(torch, args, model, meta):
    """Feed fixed tokens, not the model's own choices. Returns what OUT
    holds (torch.save): meta (config, layers, dtype, seed, prompt, steps,
    torch, device) and, keyed by batch size, tokens [batch, prompt + steps]
    (the prompt, then the token fed at each step), logits [steps, batch,
    vocab] (float32) and greedy [steps, batch] (the argmax each step chose)."""
    if args.tokens:
        prev = torch_load(torch, args.tokens)
        tokens = prev["tokens"]
        prompt, steps = prev["meta"]["prompt"], prev["meta"]["steps"]
        if args.batch_given and sorted(tokens) != sorted(args.batches):
            print("decode.py: note: batch sizes %s come from %s" % (sorted(tokens), args.tokens))
    else:
        prompt, steps = args.prompt, args.steps
        tokens = {b: make_tokens(torch, b, prompt + steps, model.vocab, args.seed)
                  for b in args.batches}
    meta = dict(meta, prompt=prompt, steps=steps)
    logits, greedy = {}, {}
    for batch in sorted(tokens):
        seq = tokens[batch].to(model.device)
        model.set_batch(batch, round_up(prompt + steps, 64))
        model.prefill(seq[:, :prompt])
        step_logits, step_greedy = [], []
        for i in range(steps):
            model.tok.copy_(seq[:, prompt + i:prompt + i + 1])  # the given token, not ours
            model.decode_step()
            # copy=True: on the CPU .cpu() would alias the static buffers
            step_logits.append(model.logits.to("cpu", torch.float32, copy=True))
            step_greedy.append(model.tok[:, 0].to("cpu", copy=True))
        logits[batch] = torch.stack(step_logits)
        greedy[batch] = torch.stack(step_greedy)
        std = logits[batch].std(dim=-1).mean().item()
        print("batch %d: %d teacher-forced steps, logit std %.3f, greedy of sequence 0: %s" % (
            batch, steps, std, " ".join(str(int(t)) for t in greedy[batch][:, 0].tolist())))
    return dict(meta=meta, tokens={b: t.cpu() for b, t in tokens.items()},
                logits=logits, greedy=greedy)


def compare(torch, path_a, path_b):
    """Print per step the largest |logit difference| / std(logits of A) and
    check the greedy tokens. 0 if every differing token is a near-tie."""
    A, B = torch_load(torch, path_a), torch_load(torch, path_b)
    ok = True
    keys = ("config", "layers", "dtype", "seed", "prompt", "steps")
    diff_meta = [k for k in keys if A["meta"].get(k) != B["meta"].get(k)]
    if diff_meta:
        print("FAIL: the runs differ in %s" % ", ".join(
            "%s (%r vs %r)" % (k, A["meta"].get(k), B["meta"].get(k)) for k in diff_meta))
        return 1
    if sorted(A["logits"]) != sorted(B["logits"]):
        print("FAIL: batch sizes differ: %s vs %s" % (sorted(A["logits"]), sorted(B["logits"])))
        return 1
    worst = 0.0
    for batch in sorted(A["logits"]):
        if not torch.equal(A["tokens"][batch], B["tokens"][batch]):
            print("FAIL: batch %d: the runs were fed different tokens (use --tokens)" % batch)
            ok = False
            continue
        la, lb = A["logits"][batch], B["logits"][batch]
        ga, gb = A["greedy"][batch], B["greedy"][batch]
        for s in range(la.shape[0]):
            if not (torch.isfinite(la[s]).all() and torch.isfinite(lb[s]).all()):
                print("batch %3d step %2d: non-finite logits" % (batch, s))
                ok = False
                continue
            dmax = (la[s] - lb[s]).abs().max().item()
            norm = dmax / la[s].std().item()
            worst = max(worst, norm)
            top2 = la[s].topk(2, dim=-1).values
            gap = top2[:, 0] - top2[:, 1]
            differ = ga[s] != gb[s]
            near_tie = gap < 2 * dmax
            bad = differ & ~near_tie
            print("batch %3d step %2d: max|A-B| %.4g  /std %.3g  greedy differs %d/%d "
                  "(near-tie %d)" % (batch, s, dmax, norm, int(differ.sum()), differ.numel(),
                                     int((differ & near_tie).sum())))
            for r in bad.nonzero().flatten().tolist():
                print("  FAIL: sequence %d: token %d vs %d, top-2 gap %.4g >= 2 * %.4g" % (
                    r, int(ga[s, r]), int(gb[s, r]), float(gap[r]), dmax))
                ok = False
    print("decode.py: max normalized logit difference %.4g; %s" % (
        worst, "greedy tokens agree (up to near-ties)" if ok else "FAIL"))
    return 0 if ok else 1


def check_cache(torch, cfg, args):
    """--cpu-smoke: decoding through the KV cache must give the logits of
    running the whole sequence from scratch (float32, so only summation
    order differs)."""
    cpu = torch.device("cpu")
    cached = Decoder(torch, cfg, args.layers, torch.float32, cpu, args.seed)
    fresh = Decoder(torch, cfg, args.layers, torch.float32, cpu, args.seed)  # same weights
    P, S, batch = 5, 4, 2
    seq = make_tokens(torch, batch, P + S, cached.vocab, args.seed)
    cached.set_batch(batch, 64)
    cached.prefill(seq[:, :P])
    worst = 0.0
    for i in range(S):
        cached.tok.copy_(seq[:, P + i:P + i + 1])
        cached.decode_step()
        fresh.set_batch(batch, 64)
        full = fresh.forward(seq[:, :P + i + 1], torch.arange(P + i + 1))
        worst = max(worst, ((cached.logits - full).abs().max() / full.std()).item())
    ok = worst < 1e-5
    print("decode.py: cpu-smoke: KV-cache decode vs full recompute: max normalized "
          "difference %.3g: %s" % (worst, "ok" if ok else "FAIL"))
    return ok


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        print("decode.py: PyTorch is not installed")
        sys.stdout.flush()
        return 77

    if args.compare:
        return compare(torch, *args.compare)

    if args.cpu_smoke:
        device, cfg_name = torch.device("cpu"), "smoke"
    else:
        if not torch.cuda.is_available():
            print("decode.py: no CUDA GPU available (--cpu-smoke tests the code paths on the CPU)")
            sys.stdout.flush()
            return 77
        device, cfg_name = torch.device("cuda"), args.config
    is_cuda = device.type == "cuda"
    cfg = CONFIGS[cfg_name]
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]

    torch.manual_seed(args.seed)
    if is_cuda:
        torch.cuda.manual_seed_all(args.seed)
    with torch.no_grad():
        model = Decoder(torch, cfg, args.layers, dtype, device, args.seed)
        dev_name = torch.cuda.get_device_name(device) if is_cuda else "cpu"
        meta = dict(config=cfg_name, layers=args.layers, dtype=args.dtype, seed=args.seed,
                    torch=str(torch.__version__), device=dev_name)
        print("decode.py: torch=%s device=%s config=%s layers=%d dtype=%s hidden=%d heads=%d/%d "
              "inter=%d vocab=%d" % (torch.__version__, dev_name, cfg_name, args.layers, args.dtype,
                                     cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["inter"],
                                     cfg["vocab"]))
        # what the shim's log will show (column-major, n = batch): per layer
        # q, k, v, o, gate, up and down, then the LM head once
        print("decode.py: GEMMs per step, m x n x k (TN, n = batch): %s" % ", ".join(
            "%s %dxnx%d" % (nm, m, k) for nm, m, _, k in model.gemm_shapes(1)))
        sys.stdout.flush()

        if args.teacher_forced:
            out = run_teacher_forced(torch, args, model, meta)
            torch.save(out, args.teacher_forced)
            print("decode.py: wrote %s" % args.teacher_forced)
            rc = 0
        else:
            results = run_timing(torch, args, model, is_cuda)
            print_table(results)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(dict(meta=dict(meta, prompt=args.prompt, steps=args.steps),
                                   results=results), f, indent=1)
            rc = 0
        if args.cpu_smoke and not check_cache(torch, cfg, args):
            rc = 1
    sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
