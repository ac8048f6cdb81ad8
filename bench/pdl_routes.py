#!/usr/bin/env python3
"""Route-table rows with launch `pdl` for a decode kernel, from two or
more gemmshim-bench runs after a producer (--after-producer --fixed-bc, the
kernel launched with programmatic dependent launch: the CSVs' launch column
must say pdl), beside the plain rows a table already has for that kernel.

A measured shape is a win where every run measured at least 1.02x
cuBLAS; a token count between two measured ones wins only where both do. The
tokens are n; where n > m (few rows: the weight as op(B), as the bench
takes it), m. The rows printed:
- the kernel, exact, for each measured winning n (time: the slowest run's,
  ratio: the lowest), and ranged over each run of winning n (the least
  ratio in it);
- `cublas` (ratio 1) where the plain rows route a shape that loses here
  (exact for the measured n, ranged over the run), so that with PDL on
  the after-producer measurement decides, and the plain rows only without
  it.

  pdl_routes.py --kernel gemm_decode_bf16 --dtype bf16 \
      --plain dispatch/routes.c --gpu "NVIDIA H200" RUN1.csv RUN2.csv
  pdl_routes.py --kernel gemm_decode_f32 --dtype f32 --compute '*' ...
      (FP32: cublasSgemm_v2 has no compute type, so the rows take any)
  pdl_routes.py --print-plain --plain dispatch/routes.c --gpu "NVIDIA H200"
      (that table's plain rows, for a header ending in ratio,lt_algo,launch)
(--plain: a file whose lines hold the table's rows, C string literals
allowed, read by the table's own header line (without one: the columns up
to ratio, then launch); only the kernel's rows are read.) The pdl rows
printed are for a table whose header ends in route,time_us,ratio,launch."""
import argparse
import csv
import re
import sys

MIN_RATIO = 1.02
N_MAX = 64


def read_run(path):
    rows = {}
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines):
        if r.get("launch", "plain") != "pdl":
            sys.exit(f"{path}: a row launched {r.get('launch', 'plain (no column)')}, not pdl")
        m, n = int(r["m"]), int(r["n"])
        few = n > m
        # (layout, few rows, the weight's rows, k, tokens)
        key = (r["layout"], few, n if few else m, int(r["k"]), m if few else n)
        rows[key] = (float(r["ratio"]), float(r["ours_us"]))
    return rows


def parse_range(s):
    if s == "*":
        return (1, 1 << 62)
    lo, _, hi = s.partition("-")
    return (int(lo), int(hi or lo))


def table_lines(path, gpu=None):
    """The lines of the tables in a file (C string literals, "...\\n", the
    last followed by ;, or bare lines); with gpu, only those of the table
    whose gpu_name validator is gpu (a table starts at its first one)."""
    mine = gpu is None
    with open(path) as f:
        for line in f:
            texts = re.findall(r'"([^"]*?)(?:\\n)?"', line) if '"' in line else [line.strip()]
            for text in texts:
                if text.startswith("Validator,gpu_name,"):
                    mine = gpu is None or text == "Validator,gpu_name," + gpu
                if mine:
                    yield text


COLUMNS = "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio".split(",")


def table_rows(path, gpu=None):
    """The rows of the tables in a file, as dicts by their table's header
    line (before any header: the columns up to ratio, then launch, or
    lt_algo and launch where a row has both)."""
    cols = None
    for text in table_lines(path, gpu):
        fld = text.split(",")
        if text.startswith("entry,"):
            cols = fld
        elif not text.startswith("Validator,") and len(fld) >= len(COLUMNS):
            extra = ["lt_algo", "launch"] if len(fld) > len(COLUMNS) + 1 else ["launch"]
            yield dict(zip(cols or COLUMNS + extra, fld))


def plain_rows(path, kernel, dtype, gpu=None):
    """(layout, m range, n range, k range) of the rows that route kernel."""
    out = []
    for r in table_rows(path, gpu):
        if r["a_type"] != dtype or r["route"] != kernel or r.get("launch") == "pdl":
            continue
        if float(r["ratio"]) < MIN_RATIO:
            continue
        out.append((r["layout"], parse_range(r["m"]), parse_range(r["n"]), parse_range(r["k"])))
    return out


def mn(few, rows, tok):
    """m and n of a call: the weight's rows and the tokens."""
    return (tok, rows) if few else (rows, tok)


def plain_routes(plain, layout, few, rows, k, tok, exact=False):
    """Whether a plain row routes the shape (exact: a row naming those
    tokens alone, which the lookup puts before every ranged row)."""
    m, n = mn(few, rows, tok)
    for lay, mr, nr, kr in plain:
        if lay in (layout, "*") and mr[0] <= m <= mr[1] and nr[0] <= n <= nr[1] and kr[0] <= k <= kr[1]:
            tr = mr if few else nr
            if not exact or tr[0] == tr[1]:
                return True
    return False


def runs_of(ns):
    """Maximal runs of consecutive integers in a sorted list."""
    out = []
    for n in ns:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kernel")
    p.add_argument("--dtype")
    p.add_argument("--compute", default="32f", help="the rows' compute column (default 32f)")
    p.add_argument("--plain", required=True)
    p.add_argument("--gpu", help="read only the table of --plain whose gpu_name is this")
    p.add_argument("--print-plain", action="store_true",
                   help="print that table's rows without launch pdl, as plain rows, and stop")
    p.add_argument("runs", nargs="*")
    a = p.parse_args()
    if a.print_plain:
        for r in table_rows(a.plain, a.gpu):
            if r.get("launch") != "pdl":
                print(",".join([r[c] for c in COLUMNS] + [r.get("lt_algo") or "-", "plain"]))
        return
    if not a.kernel or not a.dtype or len(a.runs) < 2:
        p.error("--kernel, --dtype and two or more runs are needed")
    runs = [read_run(path) for path in a.runs]
    r1 = runs[0]
    if any(set(r) != set(r1) for r in runs[1:]):
        sys.exit("the runs measured different shapes")
    plain = plain_rows(a.plain, a.kernel, a.dtype, a.gpu)
    prefix = f"*,{a.dtype},{a.dtype},{a.dtype},{a.compute}"
    weights = sorted({w[:4] for w in r1}, key=lambda w: (w[1], w[2] * w[3], w[2], w[0]))
    for lay, few, rows, k in weights:
        w = (lay, few, rows, k)
        measured = sorted(t for *w2, t in r1 if tuple(w2) == w)
        win = {n: min(r[w + (n,)][0] for r in runs) >= MIN_RATIO for n in measured}
        verdict = {}
        for n in range(1, N_MAX + 1):
            if n in win:
                verdict[n] = win[n]
            else:
                lo = max([x for x in measured if x < n], default=None)
                hi = min([x for x in measured if x > n], default=None)
                verdict[n] = lo is not None and hi is not None and win[lo] and win[hi]
        def ratio(n):
            return min(r[w + (n,)][0] for r in runs)
        def time(n):
            return max(r[w + (n,)][1] for r in runs)
        def row(tok, route, t, r):
            m, n = mn(few, rows, tok)
            print(f"{prefix},{lay},*,{m},{n},{k},1,*,{route},{t},{r},pdl")
        for routed in (True, False):
            ns = [n for n in range(1, N_MAX + 1)
                  if verdict[n] == routed and (routed or plain_routes(plain, lay, few, rows, k, n))]
            route = a.kernel if routed else "cublas"
            for lo, hi in runs_of(ns):
                inside = [n for n in measured if lo <= n <= hi]
                for n in inside:
                    row(n, route, *((f"{time(n):.2f}", f"{ratio(n):.4f}") if routed else ("-", "1")))
                if not routed:
                    # an exact plain row outranks any ranged one: cuBLAS's
                    # rows exact there too, and for a lone n
                    for n in range(lo, hi + 1):
                        if n not in inside and (plain_routes(plain, lay, few, rows, k, n, exact=True) or lo == hi):
                            row(n, "cublas", "-", "1")
                if hi > lo:
                    r = f"{min(ratio(n) for n in inside):.4f}" if routed else "1"
                    row(f"{lo}-{hi}", route, "-", r)


if __name__ == "__main__":
    main()
