#!/usr/bin/env python3
"""bench/pdl_routes.py on made-up runs: which rows it writes for a decode
kernel measured after a producer with programmatic dependent launch."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "bench", "pdl_routes.py")
HEADER = "m,n,k,layout,ours_tflops,cublas_tflops,ratio,ours_us,cublas_us,launch\n"
NS = (1, 2, 4, 8, 16, 32, 64)

# (layout, m, k) -> per n: (ratio run 1, ratio run 2)
def ratios(layout, m, n):
    if m == 1024:                       # wins to n = 8 in both runs
        return (1.30, 1.28) if n <= 8 else (0.90, 0.91)
    if m == 2048:                       # one run under 1.02: no win anywhere
        return (1.05, 1.01) if n <= 8 else (0.95, 0.95)
    if m == 4096 and layout == "TN":    # wins at 1, 2 and 8 (not 4): no range over 4
        return (0.99, 0.98) if n == 4 else ((1.04, 1.03) if n <= 8 else (0.9, 0.9))
    return (0.97, 0.96)


def write_run(path, run, launch="pdl", few_rows=False):
    """few_rows: also calls with the weight as op(B) (m the tokens, n the
    weight's rows), layouts TN and TT, with the same ratios."""
    with open(path, "w") as f:
        f.write("# device: made up\n" + HEADER)
        for lay in ("TN", "NN"):
            for m in (1024, 2048, 4096):
                for n in NS:
                    r = ratios(lay, m, n)[run]
                    f.write(f"{m},{n},4096,{lay},1,1,{r},{10 + n + run},{(10 + n) * r},{launch}\n")
        if few_rows:
            for lay in ("TN", "TT"):
                for rows in (1024, 2048):
                    for t in NS:
                        r = ratios(lay, rows, t)[run]
                        f.write(f"{t},{rows},4096,{lay},1,1,{r},{10 + t + run},{(10 + t) * r},{launch}\n")


PLAIN = (
    '  "*,bf16,bf16,bf16,32f,TN,*,2048,1-8,4096,1,*,gemm_decode_bf16,-,1.0385\\n"\n'
    '  "*,bf16,bf16,bf16,32f,TN,*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.1826\\n"\n'
    '  "*,bf16,bf16,bf16,32f,NN,*,4096,1,4096,1,*,gemm_decode_bf16,-,1.01\\n"\n'
    '  "*,f16,f16,f16,32f,NN,*,4096,1,4096,1,*,gemm_decode_f16,9.2,1.10\\n"\n'
    '  "*,bf16,bf16,bf16,32f,TN,*,2048,3,4096,1,*,gemm_decode_bf16,9.3,1.04\\n"\n'
    '  "*,bf16,bf16,bf16,32f,NN,*,4096,3,4096,1,*,gemm_decode_bf16,9.0,1.05\\n";\n'
)


def run_tool(d, *extra):
    return subprocess.run([sys.executable, TOOL, "--kernel", "gemm_decode_bf16", "--dtype", "bf16",
                           "--plain", os.path.join(d, "plain.c"), os.path.join(d, "r1.csv"),
                           os.path.join(d, "r2.csv"), *extra], capture_output=True, text=True)


def main():
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        write_run(os.path.join(d, "r1.csv"), 0)
        write_run(os.path.join(d, "r2.csv"), 1)
        with open(os.path.join(d, "plain.c"), "w") as f:
            f.write(PLAIN)
        p = run_tool(d)
        expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
        rows = set(p.stdout.split())
        pre = "*,bf16,bf16,bf16,32f"
        # wins: exact per measured n (the slower run's time, the lower ratio),
        # a range over the run of n
        for lay in ("TN", "NN"):
            expect(f"{pre},{lay},*,1024,1,4096,1,*,gemm_decode_bf16,12.00,1.2800,pdl" in rows,
                   f"{lay} 1024x1: exact row")
            expect(f"{pre},{lay},*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.2800,pdl" in rows,
                   f"{lay} 1024x1-8: ranged row")
            expect(not any(r.startswith(f"{pre},{lay},*,1024,16,") for r in rows),
                   f"{lay} 1024x16 lost: no row (no plain row routes it)")
        # a win in one run only is no win; the plain rows route 2048 TN 1-8:
        # with PDL cuBLAS keeps it, exact and ranged
        expect(not any(",2048," in r and "gemm_decode" in r for r in rows), "2048: no kernel row")
        for n in (1, 2, 4, 8):
            expect(f"{pre},TN,*,2048,{n},4096,1,*,cublas,-,1,pdl" in rows, f"2048x{n} TN cublas row")
        expect(f"{pre},TN,*,2048,1-8,4096,1,*,cublas,-,1,pdl" in rows, "2048x1-8 TN cublas range")
        # an exact plain row (unmeasured n) outranks ranged rows: an exact one here
        expect(f"{pre},TN,*,2048,3,4096,1,*,cublas,-,1,pdl" in rows, "2048x3 TN exact cublas row")
        expect(not any(r.startswith(f"{pre},NN,*,2048,") for r in rows), "2048 NN: not routed plainly, no row")
        # an n between wins only where both neighbours win: 4096 TN wins 1, 2, 8
        expect(f"{pre},TN,*,4096,1-2,4096,1,*,gemm_decode_bf16,-,1.0300,pdl" in rows, "4096 TN 1-2")
        expect(f"{pre},TN,*,4096,8,4096,1,*,gemm_decode_bf16,19.00,1.0300,pdl" in rows, "4096 TN 8")
        expect(not any(r.startswith(f"{pre},TN,*,4096,") and "-8," in r for r in rows),
               "4096 TN: no range over the loss at 4")
        # a plain row under 1.02 routes nothing; a lone routed n (the last
        # line, a C literal ending in ;) gets its exact cublas row
        expect([r for r in rows if r.startswith(f"{pre},NN,*,4096,")] ==
               [f"{pre},NN,*,4096,3,4096,1,*,cublas,-,1,pdl"], "4096 NN: n = 3's cublas row alone")
        # another kernel's rows are not read
        expect(not any(",f16," in r for r in rows), "f16 rows in a bf16 run")
        expect(all(r.endswith(",pdl") for r in rows), "every row says pdl")

        # --compute: the rows' compute column (FP32 rows take any: Sgemm_v2 has none)
        p = run_tool(d, "--compute", "*")
        expect(p.returncode == 0 and
               "*,bf16,bf16,bf16,*,TN,*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.2800,pdl" in p.stdout.split(),
               "--compute * in the rows")

        # few rows (n > m: the weight as op(B)): the tokens are m, in the
        # m column; a plain few-rows row that loses here gets cublas rows
        write_run(os.path.join(d, "r1.csv"), 0, few_rows=True)
        write_run(os.path.join(d, "r2.csv"), 1, few_rows=True)
        with open(os.path.join(d, "plain.c"), "w") as f:
            f.write(PLAIN.replace(";", "") +
                    '  "*,bf16,bf16,bf16,32f,TT,*,1-8,2048,4096,1,*,gemm_decode_bf16,-,1.05\\n";\n')
        p = run_tool(d)
        expect(p.returncode == 0, f"few rows: exit {p.returncode}: {p.stderr}")
        rows = set(p.stdout.split())
        for lay in ("TN", "TT"):
            expect(f"{pre},{lay},*,1,1024,4096,1,*,gemm_decode_bf16,12.00,1.2800,pdl" in rows,
                   f"few rows {lay} 1x1024: exact row")
            expect(f"{pre},{lay},*,1-8,1024,4096,1,*,gemm_decode_bf16,-,1.2800,pdl" in rows,
                   f"few rows {lay} 1-8x1024: ranged row")
            expect(not any(r.startswith(f"{pre},{lay},*,16,1024,") for r in rows),
                   f"few rows {lay} 16x1024 lost: no row")
        expect(f"{pre},TT,*,1-8,2048,4096,1,*,cublas,-,1,pdl" in rows, "few rows TT 2048: cublas range")
        expect(f"{pre},TT,*,3,2048,4096,1,*,cublas,-,1,pdl" not in rows,
               "few rows TT 2048: no exact row where the plain row is ranged")
        expect(not any(r.startswith(f"{pre},TN,*,") and ",2048,4096," in r and "cublas" in r
                       and r.split(",")[7] != "2048" for r in rows),
               "few rows TN 2048: not routed plainly, no cublas row")
        # the few-columns rows are as before
        expect(f"{pre},TN,*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.2800,pdl" in rows,
               "few columns unchanged beside few rows")

        # more than two runs: a win needs every run; times and ratios are
        # the worst of all. A third run losing 1024x2 TN splits its range.
        write_run(os.path.join(d, "r1.csv"), 0)
        write_run(os.path.join(d, "r2.csv"), 1)
        with open(os.path.join(d, "plain.c"), "w") as f:
            f.write(PLAIN)
        changed = {"1024,1,4096,TN,": "1024,1,4096,TN,1,1,1.25,30,37,pdl\n",
                   "1024,2,4096,TN,": "1024,2,4096,TN,1,1,1.01,40,40,pdl\n"}
        with open(os.path.join(d, "r1.csv")) as f:
            third = [changed.get(",".join(l.split(",")[:4]) + ",", l) for l in f]
        with open(os.path.join(d, "r3.csv"), "w") as f:
            f.writelines(third)
        p = run_tool(d, os.path.join(d, "r3.csv"))
        expect(p.returncode == 0, f"three runs: exit {p.returncode}: {p.stderr}")
        rows = set(p.stdout.split())
        expect(f"{pre},TN,*,1024,1,4096,1,*,gemm_decode_bf16,30.00,1.2500,pdl" in rows,
               "three runs: the slowest time, the lowest ratio")
        expect(not any(r.startswith(f"{pre},TN,*,1024,2,") and "gemm_decode" in r for r in rows)
               and f"{pre},TN,*,1024,2,4096,1,*,cublas,-,1,pdl" in rows,
               "three runs: 1024x2 TN lost in one, cuBLAS's (the plain rows route it)")
        expect(f"{pre},TN,*,1024,4-8,4096,1,*,gemm_decode_bf16,-,1.2800,pdl" in rows
               and f"{pre},TN,*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.2800,pdl" not in rows,
               "three runs: the range split at the loss")
        expect(f"{pre},NN,*,1024,1-8,4096,1,*,gemm_decode_bf16,-,1.2800,pdl" in rows,
               "three runs: NN unchanged")
        p = subprocess.run([sys.executable, TOOL, "--kernel", "gemm_decode_bf16", "--dtype", "bf16",
                            "--plain", os.path.join(d, "plain.c"), os.path.join(d, "r1.csv")],
                           capture_output=True, text=True)
        expect(p.returncode != 0, "one run alone refused")
        with open(os.path.join(d, "r3.csv"), "w") as f:
            f.writelines(third[:-1])
        p = run_tool(d, os.path.join(d, "r3.csv"))
        expect(p.returncode != 0 and "different shapes" in p.stderr, "runs of different shapes refused")

        # a run launched plainly is not one to write pdl rows from
        write_run(os.path.join(d, "r2.csv"), 1, launch="plain")
        p = run_tool(d)
        expect(p.returncode != 0 and "not pdl" in p.stderr, "a plain run refused")

        # tables read by their own header: --print-plain writes each
        # GPU's rows that hold without PDL as ...,ratio,lt_algo,launch; a
        # table's plain kernel rows are read the same way (lt_algo before
        # launch, or no launch column at all)
        algo = "id=66;tile=20;splitk=1;reduction=0;swizzle=0;custom=1;stages=35;inner=0;cluster=3;workspace=0"
        with open(os.path.join(d, "tables.c"), "w") as f:
            f.write('  "Validator,gpu_name,GPU A\\n"\n'
                    '  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,'
                    'route,time_us,ratio,lt_algo\\n"\n'
                    '  "*,bf16,bf16,bf16,32f,TN,*,2048,1-8,4096,1,*,gemm_decode_bf16,-,1.0385,-\\n"\n'
                    f'  "gemm,bf16,bf16,bf16,32f,TN,-,3072,4096,768,1,16,cublaslt,28.37,1.1275,{algo}\\n";\n'
                    '  "Validator,gpu_name,GPU B\\n"\n'
                    '  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,'
                    'route,time_us,ratio,lt_algo,launch\\n"\n'
                    '  "*,bf16,bf16,bf16,32f,TN,*,2048,1-8,4096,1,*,gemm_decode_bf16,9.1,1.20,-,pdl\\n"\n'
                    '  "*,bf16,bf16,bf16,32f,NN,*,4096,3,4096,1,*,gemm_decode_bf16,9.0,1.05,-,plain\\n"\n'
                    f'  "gemm,bf16,bf16,bf16,32f,NN,-,4096,2048,1024,1,16,cublaslt,42.35,1.0473,{algo},plain\\n";\n'
                    '  "Validator,gpu_name,GPU C\\n"\n'
                    '  "entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,'
                    'route,time_us,ratio,launch\\n"\n'
                    '  "*,bf16,bf16,bf16,32f,NN,*,4096,3,4096,1,*,gemm_decode_bf16,9.0,1.05,plain\\n";\n')
        def printed(gpu):
            p = subprocess.run([sys.executable, TOOL, "--print-plain", "--plain",
                                os.path.join(d, "tables.c"), "--gpu", gpu], capture_output=True, text=True)
            expect(p.returncode == 0, f"--print-plain {gpu}: exit {p.returncode}: {p.stderr}")
            return p.stdout.split()
        expect(printed("GPU A") ==
               ["*,bf16,bf16,bf16,32f,TN,*,2048,1-8,4096,1,*,gemm_decode_bf16,-,1.0385,-,plain",
                f"gemm,bf16,bf16,bf16,32f,TN,-,3072,4096,768,1,16,cublaslt,28.37,1.1275,{algo},plain"],
               "--print-plain: a table without launch, its algorithm kept")
        expect(printed("GPU B") ==
               ["*,bf16,bf16,bf16,32f,NN,*,4096,3,4096,1,*,gemm_decode_bf16,9.0,1.05,-,plain",
                f"gemm,bf16,bf16,bf16,32f,NN,-,4096,2048,1024,1,16,cublaslt,42.35,1.0473,{algo},plain"],
               "--print-plain: lt_algo before launch, the pdl row left out")
        expect(printed("GPU C") ==
               ["*,bf16,bf16,bf16,32f,NN,*,4096,3,4096,1,*,gemm_decode_bf16,9.0,1.05,-,plain"],
               "--print-plain: a table without lt_algo gets '-' there")
        # rows without a header line: lt_algo and launch where there are both
        with open(os.path.join(d, "bare.csv"), "w") as f:
            f.write("*,bf16,bf16,bf16,32f,TN,*,2048,1-8,4096,1,*,gemm_decode_bf16,9.1,1.20,-,pdl\n"
                    "*,bf16,bf16,bf16,32f,NN,*,4096,3,4096,1,*,gemm_decode_bf16,9.0,1.05,pdl\n"
                    "*,bf16,bf16,bf16,32f,NN,*,4096,4,4096,1,*,gemm_decode_bf16,9.0,1.05,plain\n")
        p = subprocess.run([sys.executable, TOOL, "--print-plain", "--plain", os.path.join(d, "bare.csv")],
                           capture_output=True, text=True)
        expect(p.returncode == 0 and p.stdout.split() ==
               ["*,bf16,bf16,bf16,32f,NN,*,4096,4,4096,1,*,gemm_decode_bf16,9.0,1.05,-,plain"],
               "--print-plain, no header: the pdl rows of either width left out")
        write_run(os.path.join(d, "r2.csv"), 1)
        p = subprocess.run([sys.executable, TOOL, "--kernel", "gemm_decode_bf16", "--dtype", "bf16",
                            "--plain", os.path.join(d, "tables.c"), "--gpu", "GPU B",
                            os.path.join(d, "r1.csv"), os.path.join(d, "r2.csv")],
                           capture_output=True, text=True)
        rows = set(p.stdout.split())
        expect(p.returncode == 0 and f"{pre},NN,*,4096,3,4096,1,*,cublas,-,1,pdl" in rows
               and not any(r.startswith(f"{pre},TN,*,2048,") for r in rows),
               "a table with lt_algo and launch: its plain row read, its pdl row not")

    for f in failures:
        print("FAIL:", f)
    print(f"test_pdl_routes: {'FAIL' if failures else 'PASS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
