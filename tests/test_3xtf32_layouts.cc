/* CPU emulation of the 3xTF32 kernel's index math for the layouts TN, NN,
 * NT, TT. The code under test is compiled as the kernel has it: split_words,
 * split_fast and the layouts' functions of kernels/gemm_f32_3xtf32_parts.h
 * (TMA box coordinates, the MN-major and swizzle offsets, the K
 * permutations, the transposing B splits, the M-major A fragment loads).
 * The hardware is modelled independently of that code: TMA tiled loads
 * with the 128-byte swizzle (byte address bits [4:6] ^= bits [7:9] inside
 * a 1024-byte aligned box), wgmma m64n128k8 .tf32 with A from registers
 * (PTX ISA fragment layout) and B through a K-major SW128 descriptor
 * (start + 32 bytes per k8, 128-byte rows, the same address swizzle), and
 * the D fragment. The kernel's remaining glue (which tile each descriptor
 * points at, the K-major A loads, the TN split, the vote, the epilogue) is
 * mirrored expression for expression here. Products and sums in float64;
 * shared memory starts as NaN, so a read of anything not written shows.
 * Also checks that the B splits' 16-byte shared accesses are free of bank
 * conflicts. tests/mutate_3xtf32_layouts.sh shows that deliberate mistakes
 * in the header make this program fail. Exit 0 when all layouts agree. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>
#include <vector>

#include "tf32_split.h"
#define __host__
#define __device__
#define __forceinline__ inline

/* Bank model: the addresses of one thread's ld4 / st4, in program order. */
static bool tracing;
static const char *trace_base;
static std::vector<int64_t> trace_ld, trace_st;
static void emu_trace(const void *p, int store) {
  if (tracing) (store ? trace_st : trace_ld).push_back((const char *)p - trace_base);
}
#define GS_3XTF32_TRACE(p, store) emu_trace(p, store)
#include "gemm_f32_3xtf32_parts.h"

using namespace gs_f32_3xtf32;

static const char *lay_name[4] = {"TN", "NN", "NT", "TT"};
static const float QNAN = __builtin_nanf("");

/* TMA 2-D tiled load, 128-byte swizzle: box {b0 (contiguous), b1} at tensor
 * coordinates (c0, c1) of a tensor of d0 x d1 elements, ld apart, into the
 * 1024-byte aligned shared tile at float offset dst. */
static void tma_model(const float *G, int64_t d0, int64_t d1, int64_t ld, int b0, int b1, int c0,
                      int c1, float *smem, int dst) {
  if (b0 * 4 != 128 || dst % 256) { fprintf(stderr, "bad box\n"); exit(2); }
  for (int y = 0; y < b1; ++y)
    for (int x = 0; x < b0; ++x) {
      const int byte = y * b0 * 4 + x * 4;
      const int swz = byte ^ (((byte >> 7) & 7) << 4);
      const int64_t gx = c0 + x, gy = c1 + y;
      smem[dst + swz / 4] = (gx < d0 && gy < d1) ? G[gx + gy * ld] : 0.f; /* OOB: zero fill */
    }
}
/* wgmma's read of element (n, kk) (kk < 8) of a K-major SW128 tile through
 * a descriptor advanced by adv bytes (32 per k8). */
static float desc_read(const float *tile, int adv, int n, int kk) {
  const int off = adv + n * 128 + kk * 4;
  return tile[(off ^ (((off >> 7) & 7) << 4)) / 4];
}
static double f(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

template <int LAY>
static void run_cta(const float *A, int64_t lda, const float *B, int64_t ldb, float *D, int64_t ldd,
                    int m, int n, int k, int m0, int n0) {
  std::vector<float> a(4096), b(4096), bs(4096), bc(4096);
  static double acc[2][128][64];
  memset(acc, 0, sizeof acc);
  const int KT = k / 32;
  for (int kt = 0; kt < KT; ++kt) {
    for (int i = 0; i < 4096; ++i) a[i] = b[i] = bs[i] = bc[i] = QNAN;
    /* ---- TMA (the kernel's load_stage; encode_kmajor / encode_mnmajor) */
    if (Lay<LAY>::A_MN) {
      for (int i = 0; i < 4; ++i) {
        int c0, c1, dst;
        mn_box(i, kt, m0, c0, c1, dst);
        tma_model(A, m, k, lda, MN_BOX, 32, c0, c1, a.data(), dst);
      }
    } else {
      tma_model(A, k, m, lda, 32, 128, kt * 32, m0, a.data(), 0);
    }
    if (Lay<LAY>::B_NM) {
      for (int i = 0; i < 4; ++i) {
        int c0, c1, dst;
        mn_box(i, kt, n0, c0, c1, dst);
        tma_model(B, n, k, ldb, MN_BOX, 32, c0, c1, b.data(), dst);
      }
    } else {
      tma_model(B, k, n, ldb, 32, 128, kt * 32, n0, b.data(), 0);
    }
    /* ---- split group */
    uint32_t wild = 0;
    if constexpr (LAY != LAY_TN) {
      for (int nn = 0; nn < 128; ++nn) {
        if constexpr (Lay<LAY>::SPLIT_NM)
          wild |= split_nm(b.data(), bc.data(), bs.data(), nn);
        else
          wild |= split_row_lay<LAY>(b.data(), bc.data(), bs.data(), nn);
      }
      if (wild)
        for (int nn = 0; nn < 128; ++nn) cross_row_lay(bc.data(), b.data(), nn);
    } else { /* the default's in-place split (exact words; mirror of its expressions) */
      for (int nn = 0; nn < 128; ++nn) {
        const int sw = nn & 7;
        float *brow = b.data() + nn * 32, *srow = bs.data() + nn * 32;
        for (int h = 0; h < 2; ++h) {
          float r[4][4];
          for (int e = 0; e < 4; ++e)
            for (int j = 0; j < 4; ++j) r[e][j] = brow[(((2 * e + h) ^ sw) << 2) + j];
          for (int j = 0; j < 4; ++j)
            for (int e = 0; e < 4; ++e) {
              const Words w = split_words(r[e][j]);
              const int off = (((2 * j + h) ^ sw) << 2) + e;
              memcpy(&brow[off], &w.big, 4);
              memcpy(&srow[off], &w.small, 4);
              if ((w.big & 0x7f800000u) == 0x7f800000u || (w.small & 0x7f800000u) == 0x7f800000u) wild = 1;
            }
        }
      }
      if (wild)
        for (int nn = 0; nn < 128; ++nn) {
          const float *brow = b.data() + nn * 32;
          float *crow = bc.data() + nn * 32;
          for (int c = 0; c < 32; ++c) {
            uint32_t u; memcpy(&u, &brow[c], 4);
            if ((u & 0x7f800000u) == 0x7f800000u) u = 0;
            memcpy(&crow[c], &u, 4);
          }
        }
    }
    /* ---- consumers: descriptors as the kernel picks them */
    const float *t_big = LAY == LAY_TN ? b.data() : bc.data();
    const float *t_sml = bs.data();
    const float *t_crs = wild ? (LAY == LAY_TN ? bc.data() : b.data()) : t_big;
    for (int cw = 0; cw < 2; ++cw) {
      float X[128][16];
      bool all_tame = true;
      for (int t = 0; t < 128; ++t) {
        const int warp = t >> 5, lane = t & 31, g = lane >> 2, tq = lane & 3;
        const int r0 = cw * 64 + warp * 16 + g;
        float *x = X[t];
        if (Lay<LAY>::A_MN) {
          load_a_mn(a.data(), r0, tq, *reinterpret_cast<float(*)[16]>(x));
        } else { /* the default's oa0, oa1, ob0, ob1 */
          const int oa0 = r0 * 32 + (((2 * tq) ^ g) << 2);
          const int oa1 = r0 * 32 + (((2 * tq + 1) ^ g) << 2);
          const int ob0 = oa0 + 8 * 32, ob1 = oa1 + 8 * 32;
          for (int i = 0; i < 4; ++i) {
            x[i] = a[oa0 + i]; x[4 + i] = a[oa1 + i]; x[8 + i] = a[ob0 + i]; x[12 + i] = a[ob1 + i];
          }
        }
        for (int i = 0; i < 16; ++i) all_tame = all_tame && max_abs_nan_hd(0.f, x[i]) < gs_tf32_float(kTameLimit);
      }
      static double chk[128][64];
      memset(chk, 0, sizeof chk);
      for (int j = 0; j < 4; ++j) {
        /* A fragments -> 64 x 8 matrices of big, small, cross (a0..a3 as
         * split_sub: x[j], x[8+j], x[4+j], x[12+j]) */
        double Ab[64][8], As[64][8], Ac[64][8];
        for (int t = 0; t < 128; ++t) {
          const int warp = t >> 5, lane = t & 31, g = lane >> 2, tq = lane & 3;
          const float v[4] = {X[t][j], X[t][8 + j], X[t][4 + j], X[t][12 + j]};
          const int rows[4] = {warp * 16 + g, warp * 16 + g + 8, warp * 16 + g, warp * 16 + g + 8};
          const int cols[4] = {tq, tq, tq + 4, tq + 4};
          for (int r = 0; r < 4; ++r) {
            const Words w = all_tame ? split_fast(v[r]) : split_words(v[r]);
            Ab[rows[r]][cols[r]] = f(w.big);
            As[rows[r]][cols[r]] = f(w.small);
            Ac[rows[r]][cols[r]] = all_tame ? f(w.big) : f(w.cross);
          }
        }
        for (int t = 0; t < 128; ++t) {
          const int warp = t >> 5, lane = t & 31, g = lane >> 2, tq = lane & 3;
          for (int v = 0; v < 64; ++v) {
            const int rr = warp * 16 + g + 8 * ((v >> 1) & 1), nn = (v >> 2) * 8 + tq * 2 + (v & 1);
            double s = 0;
            for (int kk = 0; kk < 8; ++kk)
              s += Ac[rr][kk] * desc_read(t_sml, 32 * j, nn, kk) +
                   As[rr][kk] * desc_read(t_crs, 32 * j, nn, kk) +
                   Ab[rr][kk] * desc_read(t_big, 32 * j, nn, kk);
            chk[t][v] += s;
          }
        }
      }
      for (int t = 0; t < 128; ++t)
        for (int v = 0; v < 64; ++v) acc[cw][t][v] += chk[t][v];
    }
  }
  /* ---- epilogue (alpha 1, beta 0), mirror of the kernel's staging */
  for (int cw = 0; cw < 2; ++cw) {
    std::vector<double> epi(128 * 68, NAN);
    for (int t = 0; t < 128; ++t) {
      const int warp = t >> 5, lane = t & 31, g = lane >> 2, tq = lane & 3;
      for (int v = 0; v < 64; ++v)
        epi[((v >> 2) * 8 + tq * 2 + (v & 1)) * 68 + warp * 16 + g + 8 * ((v >> 1) & 1)] = acc[cw][t][v];
    }
    for (int t = 0; t < 128; ++t) {
      const int run = t % 16;
      for (int ps = 0; ps < 16; ++ps) {
        const int col = ps * 8 + t / 16;
        for (int i = 0; i < 4; ++i)
          D[(int64_t)(n0 + col) * ldd + m0 + cw * 64 + run * 4 + i] = (float)epi[col * 68 + run * 4 + i];
      }
    }
  }
}

static uint64_t rng = 88172645463325252ull;
static double urand() { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (rng >> 11) * 0x1p-53; }
static float randn() { return (float)(sqrt(-2 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand())); }
static int cls(double x) { return isnan(x) ? 3 : isinf(x) ? (x > 0 ? 1 : 2) : 0; }

template <int LAY>
static int test(int nonfinite) {
  const int m = 256, n = 384, k = 160;  /* 2 x 3 tiles, 5 K-steps */
  const bool ta = !Lay<LAY>::A_MN, tb = Lay<LAY>::B_NM;
  const int64_t lda = (ta ? k : m) + 4, ldb = (tb ? n : k) + 8, ldd = m + 4;
  std::vector<float> A(lda * (ta ? m : k)), B(ldb * (tb ? k : n)), D(ldd * n, QNAN);
  for (auto &v : A) v = randn();
  for (auto &v : B) v = randn();
  auto Aat = [&](int i, int kk) -> float & { return ta ? A[kk + i * lda] : A[i + kk * lda]; };
  auto Bat = [&](int kk, int j) -> float & { return tb ? B[j + kk * ldb] : B[kk + j * ldb]; };
  if (nonfinite) {
    Bat(37, 5) = INFINITY;  Bat(40, 200) = -INFINITY; Bat(100, 131) = QNAN;
    Bat(12, 300) = 0.f;     Aat(70, 12) = INFINITY;       /* Inf * 0 at (70, 300) */
    Aat(3, 150) = 3.0e38f;  /* finite, not tame: the exact split */
    Bat(77, 255) = -3.3e38f;
  }
  for (int m0 = 0; m0 < m; m0 += 128)
    for (int n0 = 0; n0 < n; n0 += 128) run_cta<LAY>(A.data(), lda, B.data(), ldb, D.data(), ldd, m, n, k, m0, n0);
  double num = 0, den = 0;
  int64_t bad_class = 0, unwritten = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double ref = 0;
      for (int kk = 0; kk < k; ++kk) ref += (double)Aat(i, kk) * Bat(kk, j);
      const double d = D[(int64_t)j * ldd + i];
      if (cls((float)ref) != cls(d)) { /* D is FP32: beyond FLT_MAX is Inf */ if (isnan(d) && !nonfinite) ++unwritten; else ++bad_class; continue; }
      if (cls((float)ref)) continue;
      num += (d - ref) * (d - ref);
      den += ref * ref;
    }
  const double err = sqrt(num / den);
  const int ok = err < 1e-6 && bad_class == 0 && unwritten == 0;
  printf("%s %s: rel err vs float64 %.3e, class mismatches %lld, NaN/unwritten %lld: %s\n", lay_name[LAY],
         nonfinite ? "randn + Inf/NaN/near-FLT_MAX" : "randn", err, (long long)bad_class, (long long)unwritten,
         ok ? "ok" : "FAIL");
  return !ok;
}

/* Shared-memory bank conflicts of the B split's 16-byte loads and stores:
 * each quarter-warp (8 lanes) of one instruction must touch 8 different
 * 16-byte bank groups (or the same address). Tame data: every lane takes
 * the same path, so the i-th access of each lane is one instruction.
 * Returns the worst number of distinct addresses in one bank group. */
template <int LAY>
static int bank_ways() {
  std::vector<float> raw(4096), bgo(4096), smo(4096);
  for (auto &v : raw) v = randn();
  std::vector<std::vector<int64_t>> ld(128), st(128);
  trace_base = (const char *)raw.data();
  for (int t = 0; t < 128; ++t) {
    trace_ld.clear(); trace_st.clear(); tracing = true;
    if constexpr (Lay<LAY>::SPLIT_NM) split_nm(raw.data(), bgo.data(), smo.data(), t);
    else split_row_lay<LAY>(raw.data(), bgo.data(), smo.data(), t);
    tracing = false;
    ld[t] = trace_ld; st[t] = trace_st;
  }
  int worst = 0;
  for (auto *acc : {&ld, &st})
    for (int t0 = 0; t0 < 128; t0 += 8)
      for (size_t i = 0; i < (*acc)[t0].size(); ++i) {
        std::vector<int64_t> grp[8];
        for (int t = t0; t < t0 + 8; ++t) {
          if ((*acc)[t].size() != (*acc)[t0].size()) return 99;
          const int64_t a = (*acc)[t][i];
          const int g = (int)((a >> 4) & 7);
          bool seen = false;
          for (int64_t x : grp[g]) seen |= x == a;
          if (!seen) grp[g].push_back(a);
        }
        for (auto &g : grp) worst = g.size() > (size_t)worst ? (int)g.size() : worst;
      }
  if (st[0].empty() || (!Lay<LAY>::B_NM && ld[0].empty())) return 99; /* NT's raw loads are scalar */
  printf("%s B split: %zu LDS.128 + %zu STS.128 a thread, worst %d-way bank conflict: %s\n",
         lay_name[LAY], ld[0].size(), st[0].size(), worst, worst == 1 ? "ok" : "FAIL");
  return worst;
}

int main() {
  int bad = 0;
  bad += bank_ways<LAY_NN>() != 1;
  bad += bank_ways<LAY_NT>() != 1;
  bad += bank_ways<LAY_TT>() != 1;
  for (int nf = 0; nf < 2; ++nf) {
    bad += test<LAY_TN>(nf);
    bad += test<LAY_NN>(nf);
    bad += test<LAY_NT>(nf);
    bad += test<LAY_TT>(nf);
  }
  printf("%s\n", bad ? "EMULATION FAILED" : "all layouts ok");
  return bad != 0;
}
