#!/usr/bin/env python3
"""Jitted JAX matmuls and a small MLP training step, for the shim's reach
into programs that look cuBLAS up with dlsym (XLA does). Plain JAX, no
downloads.

  jax_matmul.py --out FILE.npz     run the cases, save their results, print
                                   the MLP's step times
  jax_matmul.py --compare A B      compare two saved runs (exit 1 beyond
                                   the dtype's tolerance)
  jax_matmul.py --compare A B --exact
                                   ... exit 1 unless bitwise identical

The cases: a bf16 1024 x 4096 weight against 1, 4 and 8 tokens (x @ W.T,
the decode shape the built-in route table gives the decode kernel when it
comes as one GEMM; XLA 0.11 on the H200 computes n = 1 without cuBLAS and
splits n = 4 and 8 into a 16-batch bf16 -> f32 cuBLASLt GEMM plus a
reduction, which no kernel of ours takes), a bf16 square and an f32
square (XLA uses TF32 for it). Each runs several times, so that the
shim's first-use self-check has passed before the last (saved) result.
The MLP (512 -> 1024 -> 512, ReLU, mean squared error, SGD, batch 256) is
trained for 120 steps in f32 and in bf16; its final weights and losses are
saved, and the median step time of the last 100 steps is printed as
"step_us NAME VALUE".
Exits 77 without a GPU for JAX.
"""
import argparse
import sys

import numpy as np

# Relative Frobenius difference allowed against a plain run: a served bf16
# call differs from cuBLAS's by its rounding, and XLA's autotuning picks
# cuBLAS algorithms anew in every run (TF32 for f32), which moves the MLP's
# f32 weights by about 1e-6 after 30 steps with the shim disabled too.
# Exactness is what --exact checks, on runs that share XLA's choices.
TOLERANCE = {"bf16": 1e-2, "f32": 1e-4}


def cases():
    return [(f"decode_bf16_n{n}", "bf16", (n, 4096), (1024, 4096), True) for n in (1, 4, 8)] + [
        ("square_bf16", "bf16", (2048, 2048), (2048, 2048), False),
        ("square_f32", "f32", (1024, 1024), (1024, 1024), False),
    ]


def run(out, repeats):
    import jax
    import jax.numpy as jnp

    if not any(d.platform == "gpu" for d in jax.devices()):
        print("SKIP: JAX sees no GPU")
        sys.exit(77)
    dtypes = {"bf16": jnp.bfloat16, "f32": jnp.float32}
    by_weight_t = jax.jit(lambda x, w: x @ w.T)
    plain = jax.jit(lambda x, w: x @ w)
    results = {}
    key = jax.random.PRNGKey(0)
    for name, dt, xs, ws, transposed in cases():
        key, kx, kw = jax.random.split(key, 3)
        x = jax.random.normal(kx, xs, dtype=jnp.float32).astype(dtypes[dt])
        w = (jax.random.normal(kw, ws, dtype=jnp.float32) * 0.02).astype(dtypes[dt])
        f = by_weight_t if transposed else plain
        for _ in range(repeats):
            y = f(x, w).block_until_ready()
        results[name] = np.asarray(y.astype(jnp.float32))
        print(f"{name}: {dt} x{xs} w{ws}{' (x @ w.T)' if transposed else ''} -> {y.shape}")
    for dt in ("f32", "bf16"):
        results.update(train_mlp(jax, jnp, dtypes[dt], f"mlp_{dt}"))
    np.savez(out, **results)


def train_mlp(jax, jnp, dtype, name, steps=120, timed=100):
    import time

    k1, k2, k3, k4 = jax.random.split(jax.random.PRNGKey(1), 4)
    w1 = (jax.random.normal(k1, (512, 1024)) * 0.03).astype(dtype)
    w2 = (jax.random.normal(k2, (1024, 512)) * 0.03).astype(dtype)
    x = jax.random.normal(k3, (256, 512)).astype(dtype)
    y = jax.random.normal(k4, (256, 512)).astype(dtype)

    def loss(params):
        a, b = params
        h = jax.nn.relu(x @ a)
        return jnp.mean(((h @ b) - y).astype(jnp.float32) ** 2)

    @jax.jit
    def step(params):
        value, grads = jax.value_and_grad(loss)(params)
        return tuple(p - (0.05 * g).astype(p.dtype) for p, g in zip(params, grads)), value

    params, times, losses = (w1, w2), [], []
    for i in range(steps):
        t0 = time.perf_counter()
        params, value = step(params)
        value.block_until_ready()
        times.append(time.perf_counter() - t0)
        losses.append(float(value))
    median_us = float(np.median(times[-timed:])) * 1e6
    print(f"step_us {name} {median_us:.1f}")
    print(f"{name}: loss {losses[0]:.5f} -> {losses[-1]:.5f}")
    return {f"{name}_w1": np.asarray(params[0].astype(jnp.float32)),
            f"{name}_w2": np.asarray(params[1].astype(jnp.float32)),
            f"{name}_loss": np.asarray(losses, dtype=np.float64)}


def compare(a_path, b_path, exact=False):
    a, b = np.load(a_path), np.load(b_path)
    if exact:
        differ = [k for k in a.files if k not in b.files or not np.array_equal(a[k], b[k])]
        for k in a.files:
            print(f"  {k}: {'differs' if k in differ else 'bitwise identical'}")
        return 1 if differ or set(a.files) != set(b.files) else 0
    worst = 0.0
    ok = True
    named = [(name, dt) for name, dt, *_ in cases()]
    named += [(f"mlp_{dt}_{w}", dt) for dt in ("f32", "bf16") for w in ("w1", "w2", "loss")]
    for name, dt in named:
        ref, got = a[name].astype(np.float64), b[name].astype(np.float64)
        rel = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)
        good = rel <= TOLERANCE[dt]
        ok &= bool(good)
        worst = max(worst, rel)
        print(f"  {name}: relative Frobenius difference {rel:.3e} (tolerance {TOLERANCE[dt]:.0e})"
              f"{'' if good else '  <-- beyond'}")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"))
    p.add_argument("--exact", action="store_true", help="with --compare: bitwise")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare, exact=args.exact))
    if not args.out:
        p.error("--out or --compare")
    run(args.out, args.repeats)


if __name__ == "__main__":
    main()
