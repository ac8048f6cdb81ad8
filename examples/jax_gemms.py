#!/usr/bin/env python3
"""Jitted JAX matmuls, for the shim's reach into programs that look cuBLAS
up with dlsym (XLA does). Plain JAX, no downloads.

  jax_gemms.py --out FILE.npz      run the cases, save their results
  jax_gemms.py --compare A B       compare two saved runs (exit 1 beyond
                                   the dtype's tolerance)

The cases: a bf16 1024 x 4096 weight against 1, 4 and 8 tokens (x @ W.T,
the decode shape the built-in route table gives the decode kernel when it
comes as one GEMM; XLA 0.11 on the H200 computes n = 1 without cuBLAS and
splits n = 4 and 8 into a 16-batch bf16 -> f32 cuBLASLt GEMM plus a
reduction, which no kernel of ours takes), a bf16 square and an f32
square (XLA uses TF32 for it). Each runs several times, so that the
shim's first-use self-check has passed before the last (saved) result.
Exits 77 without a GPU for JAX.
"""
import argparse
import sys

import numpy as np

TOLERANCE = {"bf16": 1e-2, "f32": 1e-6}


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
    np.savez(out, **results)


def compare(a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    worst = 0.0
    ok = True
    for name, dt, *_ in cases():
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
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not args.out:
        p.error("--out or --compare")
    run(args.out, args.repeats)


if __name__ == "__main__":
    main()
