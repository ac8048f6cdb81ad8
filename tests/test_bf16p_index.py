#!/usr/bin/env python3
"""The index math of kernels/gemm_bf16_wgmma_persistent.cu, checked on the CPU.

The code under test is the kernel's own: tile_coords and
stmatrix_lane_offset (whole functions) and, from the epilogue, the
expressions that pick a fragment's column group and half (g, h), its
accumulator index, the bf16x2 packing order, the per-column-group stmatrix
address step, the C and bias addressing and the TMA store coordinates.
They are cut out of the source, pasted into a C++ checker and compiled
with $CXX (as the kernel has them; __host__ __device__ defined away). The
hardware side is modelled independently, from the PTX ISA: the wgmma
m64nN D fragment (value v of lane l in warp w is row w*16 + l/4 +
8*((v/2)%2), column (v/4)*8 + (l%4)*2 + v%2), stmatrix .x4 .trans (element
(r, c) of matrix q is lane 4r + c/2's register q, half c%2, stored at row r
of lane 8q + c's address) and the TMA store's 128-byte swizzle over a box
of 64 (m, contiguous) x EPI_N. Checked:
  1. the grouped raster is a bijection of tiles for many grids and GROUP_M;
  2. each 8-lane phase of every stmatrix hits 8 distinct 16-byte bank
     groups, 16-byte aligned, no staging slot written twice;
  3. every element lands where the swizzled TMA box expects D(m, n), the
     box stored at (m_store, the subtile's n), for both consumers;
  4. the C element and bias row each fragment value reads are its own.
Then the same checker runs on copies of the source with deliberate
mistakes (MUTATIONS below; all built into one program): each must fail.
Exit 0 when the kernel passes and every mutation is caught, 1 otherwise,
2 if the source no longer has what the checker reads, 77 without a C++
compiler.

    tests/test_bf16p_index.py [path/to/gemm_bf16_wgmma_persistent.cu]
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# name | regex | replacement
MUTATIONS = r"""
raster: row inside a group modulo GROUP_M|tm = first_m \+ in_group % rows;|tm = first_m + in_group % group_m;
raster: column by GROUP_M|tn = in_group / rows;|tn = in_group / group_m;
raster: no short last group|const int rows = min\(tiles_m - first_m, group_m\);|const int rows = group_m;
stmatrix: no swizzle|\(\(run \^ \(lane & 7\)\) << 4\)|(run << 4)
stmatrix: matrix column from lane bit 3|const int col = 16 \* gp \+ 8 \* \(lane >> 4\)|const int col = 16 * gp + 8 * ((lane >> 3) & 1)
epilogue: h from the column half|const int h = q & 1;|const int h = q >> 1;
epilogue: column group step of 8|2 \* gp \+ \(q >> 1\); /\*|gp + (q >> 1); /*
epilogue: both halves one accumulator|acc\[4 \* g \+ 2 \* h \+ 1\]|acc[4 * g + 2 * h]
epilogue: halves packed the wrong way|pack_bf16x2\(__fadd_rn\(v0, bias\[h\]\), __fadd_rn\(v1, bias\[h\]\)\)|pack_bf16x2(__fadd_rn(v1, bias[h]), __fadd_rn(v0, bias[h]))
epilogue: stmatrix step of 8 columns|\(uint32_t\)gp \* 16u \* 128u|(uint32_t)gp * 8u * 128u
C: lane's column pair not doubled|\(int64_t\)\(n0 \+ 2 \* \(lane & 3\)\) \* p\.ldc|(int64_t)(n0 + (lane & 3)) * p.ldc
C: rows +8 as +4|\(int64_t\)\(8 \* g\) \* ldc \+ 8 \* h;|(int64_t)(8 * g) * ldc + 4 * h;
C: the high half from the next row|v1 = fmaf\(beta, __bfloat162float\(c\[ldc\]\), v1\);|v1 = fmaf(beta, __bfloat162float(c[1]), v1);
row_in_tile from lane % 8|warp \* 16 \+ \(lane >> 2\);|warp * 16 + (lane & 7);
bias: second row +4|p\.bias\[m0 \+ row_in_tile \+ 8\]|p.bias[m0 + row_in_tile + 4]
store: subtile n step halved|n0 \+ sub \* Cfg::EPI_N\)|n0 + sub * Cfg::EPI_N / 2)
store: consumer m offset halved|const int m_store = m0 \+ cw \* Cfg::WG_M;|const int m_store = m0 + cw * Cfg::WG_M / 2;
"""

CHECKER = r"""
static long fails;
static int verbose;
#define EXPECT(c, ...) \
  do { if (!(c)) { if (verbose && fails < 5) printf(__VA_ARGS__); ++fails; } } while (0)
static long check(int talk) {
  fails = 0;
  verbose = talk;
  static const int grids[][2] = {{1, 1}, {8, 3}, {16, 32}, {17, 5}, {64, 32}, {32, 16},
                                 {224, 32}, {100, 7}, {3, 40}, {33, 9}};
  for (const auto &gr : grids) { /* 1. the grouped raster is a bijection */
    const int tm_n = gr[0], tn_n = gr[1];
    for (int gm : {1, 8, Cfg::GROUP_M, 32}) {
      std::vector<int> seen(tm_n * tn_n, 0);
      for (int t = 0; t < tm_n * tn_n; ++t) {
        int tm = -1, tn = -1;
        tile_coords(t, tm_n, tn_n, gm, tm, tn);
        const bool in = tm >= 0 && tm < tm_n && tn >= 0 && tn < tn_n;
        EXPECT(in, "tile %d of %dx%d (group %d) -> (%d, %d)\n", t, tm_n, tn_n, gm, tm, tn);
        if (in) seen[tm * tn_n + tn]++;
      }
      for (int i = 0; i < tm_n * tn_n; ++i)
        EXPECT(seen[i] == 1, "%dx%d group %d: tile %d taken %d times\n", tm_n, tn_n, gm, i,
               seen[i]);
    }
  }
  const int EN = Cfg::EPI_N;
  const int64_t ldc = 200; /* > BM: a C offset splits into (row, column) */
  const int m0 = 0, n0 = 0;
  long elems = 0;
  for (int cw = 0; cw < Cfg::CONSUMERS; ++cw)
    for (int sub = 0; sub < Cfg::EPI_SUBTILES; ++sub) {
      std::vector<uint32_t> buf(64 * EN, 0xffffffffu); /* the staging buffer, by bf16 */
      for (int warp = 0; warp < 4; ++warp)
        for (int gp = 0; gp < EN / 16; ++gp) {
          const uint32_t step = GPOFF;
          for (int ph = 0; ph < 4; ++ph) { /* 2. 8 lanes a phase: 8 distinct bank groups */
            int chunks = 0;
            for (int j = 0; j < 8; ++j) {
              const uint32_t a = stmatrix_lane_offset(warp, 8 * ph + j, 0) + step;
              EXPECT(a % 16 == 0, "unaligned stmatrix address %u\n", a);
              chunks |= 1 << ((a / 16) % 8);
            }
            EXPECT(chunks == 0xff, "bank conflict: warp %d gp %d phase %d\n", warp, gp, ph);
          }
          for (int q = 0; q < 4; ++q)
            for (int fr = 0; fr < 8; ++fr)
              for (int fc = 0; fc < 8; ++fc) {
                const int lane = fr * 4 + fc / 2, half = fc % 2; /* stmatrix .trans source */
                const int h = HEXPR;
                const int g = GEXPR;
                const bool lo = half == 0; /* the low half is the first pack operand */
                const int v = (lo == LO_IS_V0) ? (V0EXPR) : (V1EXPR);
                const int row = warp * 16 + lane / 4 + 8 * ((v / 2) % 2); /* wgmma D fragment */
                const int col = (v / 4) * 8 + (lane % 4) * 2 + v % 2;
                const uint32_t a = stmatrix_lane_offset(warp, 8 * q + fc, 0) + step + 2 * fr;
                const bool fits = a / 2 < buf.size();
                EXPECT(fits && buf[a / 2] == 0xffffffffu, "staging slot %u written twice\n", a);
                if (fits) buf[a / 2] = row * 256 + col;
                /* 4. C and bias: the value's own element */
                const int row_in_tile = RITEXPR;
                const int64_t Cp = CPEXPR;
                const int64_t c = Cp + COFFEXPR;
                const int64_t off = c + ((lo == LO_IS_V0) ? (int64_t)(C0EXPR) : (int64_t)(C1EXPR));
                EXPECT(off % ldc == cw * 64 + row && off / ldc == col,
                       "C of (%d, %d) read at (%lld, %lld)\n", cw * 64 + row, col,
                       (long long)(off % ldc), (long long)(off / ldc));
                const int64_t brow = (LOBIAS == 0) ? (int64_t)(B0EXPR) : (int64_t)(B1EXPR);
                EXPECT(brow == cw * 64 + row, "bias of row %d read at %lld\n", cw * 64 + row,
                       (long long)brow);
              }
        }
      /* 3. the TMA store box: (x = m, contiguous, y = n), 128-byte swizzle */
      const int m_store = MSTEXPR;
      const int n_store = NSTEXPR;
      EXPECT(m_store == m0 + cw * 64, "consumer %d stores at m %d\n", cw, m_store);
      for (int y = 0; y < EN; ++y)
        for (int x = 0; x < 64; ++x) {
          const uint32_t tag = buf[(y * 128 + (((x / 8) ^ (y % 8)) * 16) + (x % 8) * 2) / 2];
          const int want_col = n_store - n0 + y;
          EXPECT(tag == (uint32_t)(x * 256 + want_col), "sub %d box (%d, %d): row %d col %d\n",
                 sub, x, y, (int)(tag / 256), (int)(tag % 256));
          ++elems;
        }
    }
  if (talk) printf("%ld box elements, %ld failures\n", elems, fails);
  return fails;
}
"""


class SourceError(Exception):
    pass


def grab(text, pattern, what, flags=re.S):
    m = re.search(pattern, text, flags)
    if not m:
        raise SourceError("the kernel no longer has %s (/%s/): update %s" %
                          (what, pattern, os.path.basename(__file__)))
    return m


def function(src, signature):
    """The whole definition whose first line contains signature."""
    start = src.rfind("\n", 0, grab(src, re.escape(signature), signature).start()) + 1
    depth, i = 0, src.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(src[i], 0)
        if depth == 0:
            return src[start:i + 1]
        i += 1


def variant(src, ns):
    """A namespace holding the source's code under test and the checker."""
    num = lambda k: int(grab(src, r"\b%s = (\d+)[;,]" % k, "Cfg::" + k).group(1))
    cfg = {k: num(k) for k in ("BM", "BN", "EPI_N", "GROUP_M", "CONSUMERS")}
    kern = grab(src, r"gemmshim_bf16_persistent_kernel\(.*?\n\}\n", "the kernel").group(0)
    sub = function(src, "void epilogue_subtile(")
    tile = function(src, "void epilogue_tile(")
    grab(kern, r"lane_off = stmatrix_lane_offset\(warp, lane, 0\);", "lane_off")
    grab(src, r"encode_2d\(enc, &tmD, a->D, a->m, a->n, a->ldd, Cfg::WG_M, Cfg::EPI_N,\s*"
              r"CU_TENSOR_MAP_SWIZZLE_128B", "the D map: boxes WG_M x EPI_N, 128-byte swizzle")
    e = lambda text, pat, what: grab(text, pat, what).group(1).strip()
    pack = grab(sub, r"r\[q\] = pack_bf16x2\(__fadd_rn\((v[01]), bias\[([^\]]+)\]\), "
                     r"__fadd_rn\((v[01]), bias\[([^\]]+)\]\)\);", "the bf16x2 packing")
    if pack.group(2) != pack.group(4):
        raise SourceError("the two halves use different bias rows")
    repl = {
        "GPOFF": e(sub, r"stmatrix_x4_trans\(buf \+ lane_off \+ ([^,]+), r\[0\]", "stmatrix"),
        "HEXPR": e(sub, r"const int h = ([^;]+);", "h"),
        "GEXPR": e(sub, r"const int g = ([^;]+);", "g"),
        "V0EXPR": e(sub, r"float v0 = __fmul_rn\(alpha, acc\[([^\]]+)\]\);", "v0's accumulator"),
        "V1EXPR": e(sub, r"float v1 = __fmul_rn\(alpha, acc\[([^\]]+)\]\);", "v1's accumulator"),
        "C0EXPR": e(sub, r"v0 = fmaf\(beta, __bfloat162float\(c\[([^\]]+)\]\), v0\);", "v0's C"),
        "C1EXPR": e(sub, r"v1 = fmaf\(beta, __bfloat162float\(c\[([^\]]+)\]\), v1\);", "v1's C"),
        "COFFEXPR": e(sub, r"const bf16 \*c = Cp \+ ([^;]+);", "the C pointer"),
        "LO_IS_V0": "true" if pack.group(1) == "v0" else "false",
        "RITEXPR": e(kern, r"const int row_in_tile = ([^;]+);", "row_in_tile"),
        "CPEXPR": e(kern, r"const bf16 \*Cp = p\.C \+ ([^;]+);", "Cp").replace("p.ldc", "ldc"),
        "B0EXPR": e(kern, r"bias\[0\] = __bfloat162float\(p\.bias\[([^\]]+)\]\);", "bias[0]"),
        "B1EXPR": e(kern, r"bias\[1\] = __bfloat162float\(p\.bias\[([^\]]+)\]\);", "bias[1]"),
        "LOBIAS": pack.group(2),  # the bias index: h
        "MSTEXPR": e(kern, r"const int m_store = ([^;]+);", "m_store"),
        "NSTEXPR": e(tile, r"tma_store_2d\(tmD, buf, m_store, (.+?)\);\n", "the TMA store"),
    }
    body = CHECKER
    for k in sorted(repl, key=len, reverse=True):
        body = body.replace(k, "(%s)" % repl[k] if k not in ("LO_IS_V0",) else repl[k])
    return """namespace %s {
struct Cfg {
  static constexpr int BM = %d, BN = %d, EPI_N = %d, GROUP_M = %d, CONSUMERS = %d;
  static constexpr int WG_M = BM / CONSUMERS, EPI_SUBTILES = BN / EPI_N;
};
using std::min;
%s
%s
%s
}  // namespace %s
""" % (ns, cfg["BM"], cfg["BN"], cfg["EPI_N"], cfg["GROUP_M"], cfg["CONSUMERS"],
       function(src, "void tile_coords("), function(src, "uint32_t stmatrix_lane_offset("),
       body, ns)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    path = argv[1] if len(argv) > 1 else os.path.join(
        os.environ.get("GS_SRCDIR", os.path.join(here, "..")), "kernels",
        "gemm_bf16_wgmma_persistent.cu")
    cxx = shlex.split(os.environ.get("CXX") or "")
    cxx = cxx or [c for c in ("c++", "g++") if shutil.which(c)][:1]
    if not cxx:
        print("SKIP: no C++ compiler")
        return 77
    try:
        src = open(path).read()
        units = [variant(src, "v0")]
    except (OSError, SourceError) as e:
        print("FAIL: %s" % e)
        return 2
    names, fails = [], False
    for k, line in enumerate(MUTATIONS.strip().split("\n"), 1):
        name, pat, rep = line.split("|")
        msrc, n = re.subn(pat, rep, src, count=1)
        if n == 0:
            print("FAIL: mutation '%s' matched nothing in the kernel" % name)
            fails = True
            continue
        try:
            units.append(variant(msrc, "v%d" % k))
            names.append((k, name))
        except SourceError as e:
            print("FAIL: mutation '%s' made the source unreadable: %s" % (name, e))
            fails = True
    main_fn = ["int main() {", "  int bad = 0;", '  printf("index check: ");',
               "  if (v0::check(1)) bad = 1;"]
    for k, name in names:
        main_fn.append('  { long f = v%d::check(0); printf("%%s: %%s (%%ld failures)\\n", '
                       'f ? "caught" : "FAIL: not caught", "%s", f); bad |= !f; }' % (k, name))
    main_fn += ["  return bad;", "}"]
    prog = ("#include <stdint.h>\n#include <stdio.h>\n#include <algorithm>\n#include <vector>\n"
            "#define __host__\n#define __device__\n#define __forceinline__ inline\n" +
            "".join(units) + "\n".join(main_fn) + "\n")
    with tempfile.TemporaryDirectory() as work:
        cc = os.path.join(work, "index.cc")
        exe = os.path.join(work, "index")
        open(cc, "w").write(prog)
        r = subprocess.run(cxx + ["-O1", "-std=c++17", "-w", cc, "-o", exe],
                           capture_output=True, text=True)
        if r.returncode:
            print("FAIL: the checker does not build:\n" + r.stderr[-3000:])
            return 1
        r = subprocess.run([exe], capture_output=True, text=True)
        print(r.stdout, end="")
        fails = fails or r.returncode != 0
    print("FAILED" if fails else "ok: the index math holds and every mutation is caught")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
