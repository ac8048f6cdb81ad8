#!/usr/bin/env python3
"""train.py - a small GPT-style model trained on synthetic tokens, for gemmshim.

The point is to drive the cuBLAS GEMM entry points the way real PyTorch
training does, so the same run can be made with and without
LD_PRELOAD=libgemmshim.so and the losses compared bit for bit (--out) and the
step times compared (median_step_ms).

What reaches cuBLAS (see shared/DESIGN.md):
  * nn.Linear with bias (qkv, MLP)   -> cublasLtMatmul, epilogue BIAS (fp32 or bf16)
  * nn.Linear without bias (attention output projection, LM head)
                                     -> cublasSgemm_v2 (fp32) / cublasGemmEx (bf16)
  * their backward passes            -> the same entry points, NN and NT layouts
  * attention written as explicit matmuls (q @ k^T, softmax, @ v; no
    scaled_dot_product_attention, which would run flash kernels)
                                     -> cublasSgemmStridedBatched / cublasGemmStridedBatchedEx
With the defaults (d_model 1024, seq 256, batch 8: 2048 tokens) the linear
layers are GEMMs of 2048x3072x1024, 2048x1024x1024, 2048x4096x1024 and
2048x1024x4096 (plus their gradients), shapes a fast path could take.

Data: a fixed random permutation `succ` of the vocabulary; every sequence
starts at a random token and follows t -> succ[t], except that with
probability --noise a token is replaced by a uniformly random one. All of it
comes from a seeded torch.Generator on the CPU, so every run sees the same
tokens. The loss starts near ln(vocab) and falls quickly towards the noise
floor (about noise*ln(vocab) + H(noise)).

Exit status: 0 done, 2 bad arguments, 77 no CUDA GPU.
"""

import argparse
import math
import os
import statistics
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Train a small GPT on synthetic tokens (a cuBLAS workload for gemmshim).")
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32",
                   help="fp32: plain FP32 (TF32 off); bf16: torch.autocast(dtype=bfloat16)")
    p.add_argument("--deterministic", action="store_true",
                   help="CUBLAS_WORKSPACE_CONFIG=:4096:8, torch.use_deterministic_algorithms(True), "
                        "cuDNN deterministic, TF32 off")
    p.add_argument("--steps", type=int, default=20, help="optimizer steps (default 20)")
    p.add_argument("--d-model", type=int, default=1024, help="model width (default 1024)")
    p.add_argument("--layers", type=int, default=4, help="transformer blocks (default 4)")
    p.add_argument("--heads", type=int, default=16, help="attention heads (default 16)")
    p.add_argument("--seq", type=int, default=256, help="sequence length (default 256)")
    p.add_argument("--batch", type=int, default=8, help="sequences per step (default 8)")
    p.add_argument("--vocab", type=int, default=1024, help="vocabulary size (default 1024)")
    p.add_argument("--lr", type=float, default=6e-4, help="AdamW learning rate (default 6e-4)")
    p.add_argument("--noise", type=float, default=0.1,
                   help="probability that a token breaks the pattern (default 0.1)")
    p.add_argument("--seed", type=int, default=1234, help="seed for data and weights (default 1234)")
    p.add_argument("--out", metavar="FILE",
                   help="write the per-step losses, one repr(float) a line, for bit-exact comparison")
    p.add_argument("--device", default="cuda", help="torch device (default cuda)")
    p.add_argument("--ddp", action="store_true",
                   help="DistributedDataParallel over NCCL, one GPU per rank: run under "
                        "torchrun (each rank trains on its own data shard)")
    a = p.parse_args(argv)
    if a.steps < 1:
        p.error("--steps must be at least 1")
    for name in ("d_model", "layers", "heads", "seq", "batch", "vocab"):
        if getattr(a, name) < 1:
            p.error("--%s must be positive" % name.replace("_", "-"))
    if a.d_model % a.heads != 0:
        p.error("--d-model (%d) must be a multiple of --heads (%d)" % (a.d_model, a.heads))
    if not 0.0 <= a.noise <= 1.0:
        p.error("--noise must be in [0, 1]")
    return a


def make_tokens(torch, n_seqs, seq, vocab, noise, seed):
    """(n_seqs, seq + 1) int64 tokens on the CPU: a noisy walk along a fixed permutation."""
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    succ = torch.randperm(vocab, generator=g)
    toks = torch.empty(n_seqs, seq + 1, dtype=torch.long)
    toks[:, 0] = torch.randint(vocab, (n_seqs,), generator=g)
    broken = torch.rand(n_seqs, seq + 1, generator=g) < noise
    random_tok = torch.randint(vocab, (n_seqs, seq + 1), generator=g)
    for t in range(1, seq + 1):
        toks[:, t] = torch.where(broken[:, t], random_tok[:, t], succ[toks[:, t - 1]])
    return toks


def build_model(torch, args):
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)               # bias: cublasLtMatmul + BIAS epilogue
            self.proj = nn.Linear(d, d, bias=False)      # no bias: plain GEMM
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.fc_out = nn.Linear(4 * d, d)

        def forward(self, x, causal_mask):
            B, T, C = x.shape
            H = self.heads
            hd = C // H
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
            q = q.reshape(B, T, H, hd).transpose(1, 2)    # (B, H, T, hd)
            k = k.reshape(B, T, H, hd).transpose(1, 2)
            v = v.reshape(B, T, H, hd).transpose(1, 2)
            # Explicit attention: batched GEMMs, softmax in between.
            att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(causal_mask[:T, :T], float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = torch.matmul(att, v)                      # (B, H, T, hd)
            y = y.transpose(1, 2).reshape(B, T, C)
            x = x + self.proj(y)
            x = x + self.fc_out(F.gelu(self.fc(self.ln2(x))))
            return x

    class GPT(nn.Module):
        def __init__(self, vocab, seq, d, layers, heads):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Parameter(torch.zeros(seq, d))
            self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)  # no bias: plain GEMM
            self.register_buffer(
                "causal_mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1),
                persistent=False)
            for name, prm in self.named_parameters():
                if name.endswith("bias"):
                    nn.init.zeros_(prm)
                elif prm.dim() >= 2 and "ln" not in name:
                    nn.init.normal_(prm, mean=0.0, std=0.02)

        def forward(self, idx):
            B, T = idx.shape
            x = self.wte(idx) + self.wpe[:T]
            for blk in self.blocks:
                x = blk(x, self.causal_mask)
            return self.head(self.ln_f(x))

    return GPT(args.vocab, args.seq, args.d_model, args.layers, args.heads)


def cross_entropy_det(torch, logits, targets):
    """Mean cross entropy without nll_loss/gather (both on PyTorch's CUDA
    nondeterministic lists in some versions): log_softmax, then a one-hot mask
    made by comparison, so forward and backward are plain elementwise ops and
    reductions."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    classes = torch.arange(logp.shape[-1], device=logp.device)
    picked = torch.where(targets.unsqueeze(-1) == classes, logp, torch.zeros_like(logp))
    return -picked.sum(dim=-1).mean()


def main(argv=None):
    args = parse_args(argv)

    # Must happen before torch initializes CUDA (and cuBLAS reads it at handle
    # creation): set it before torch is even imported.
    if args.deterministic:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"

    import warnings
    try:
        import torch
    except ImportError:
        print("train.py: PyTorch is not installed, no CUDA GPU available")
        sys.stdout.flush()
        return 77

    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("train.py: no CUDA GPU available")
        sys.stdout.flush()
        return 77
    is_cuda = dev.type == "cuda"

    rank, world = 0, 1
    dist = None
    if args.ddp:
        import torch.distributed as dist
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        dev = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", device_id=dev)
        rank, world = dist.get_rank(), dist.get_world_size()

    # Seeds (data uses its own generator; these cover weight init, the same
    # on every rank).
    torch.manual_seed(args.seed)
    if is_cuda:
        torch.cuda.manual_seed_all(args.seed)

    with warnings.catch_warnings():
        # Newer PyTorch prefers fp32_precision; the legacy flags still work.
        warnings.simplefilter("ignore")
        # FP32 means FP32: no TF32 anywhere, in both modes.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if args.deterministic:
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False
    if args.deterministic:
        torch.use_deterministic_algorithms(True)

    model = build_model(torch, args).to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    if args.ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    decay, no_decay = [], []
    for name, prm in model.named_parameters():
        (decay if prm.dim() >= 2 and "ln" not in name else no_decay).append(prm)
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), eps=1e-8, foreach=True)

    data = make_tokens(torch, args.steps * args.batch, args.seq, args.vocab, args.noise,
                       args.seed + rank)
    data = data.view(args.steps, args.batch, args.seq + 1).to(dev)

    dev_name = torch.cuda.get_device_name(dev) if is_cuda else "cpu"
    print("train.py: torch=%s device=%s (%s) dtype=%s deterministic=%s params=%.1fM rank=%d/%d"
          % (torch.__version__, dev, dev_name, args.dtype, args.deterministic, n_params / 1e6,
             rank, world))
    print("train.py: d_model=%d layers=%d heads=%d seq=%d batch=%d vocab=%d tokens/step=%d lr=%g"
          % (args.d_model, args.layers, args.heads, args.seq, args.batch, args.vocab,
             args.seq * args.batch, args.lr))
    sys.stdout.flush()

    use_autocast = args.dtype == "bf16"
    losses, step_ms = [], []
    model.train()
    for step in range(args.steps):
        x = data[step, :, :-1]
        y = data[step, :, 1:]
        if is_cuda:
            torch.cuda.synchronize(dev)
        t0 = time.perf_counter()

        with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=use_autocast):
            logits = model(x)
        loss = cross_entropy_det(torch, logits, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        opt.zero_grad(set_to_none=True)

        if is_cuda:
            torch.cuda.synchronize(dev)
        ms = (time.perf_counter() - t0) * 1e3
        loss_val = float(loss.item())
        losses.append(loss_val)
        step_ms.append(ms)
        print("step %4d  loss %.6f  time %8.2f ms" % (step, loss_val, ms))
        sys.stdout.flush()
        if not math.isfinite(loss_val):
            print("train.py: loss is not finite at step %d" % step)

    if dist is not None:
        dist.destroy_process_group()
    if args.out and rank == 0:
        with open(args.out, "w") as f:
            for v in losses:
                f.write(repr(v) + "\n")

    # Step 0 pays for cuBLAS/cuBLASLt handle creation, heuristics, allocator
    # growth: leave it out of the median when there is more than one step.
    timed = step_ms[1:] if len(step_ms) > 1 else step_ms
    print("train.py: rank=%d dtype=%s steps=%d final_loss=%r median_step_ms=%.3f"
          % (rank, args.dtype, args.steps, losses[-1], statistics.median(timed)))
    sys.stdout.flush()
    return 0 if all(math.isfinite(v) for v in losses) else 1


if __name__ == "__main__":
    sys.exit(main())
