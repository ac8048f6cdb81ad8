/* sgemm_simt_exp.cu: EXPERIMENTAL variants of kernels/sgemm_simt.cu.
 *
 * Not part of the library build. Built only by tools/build-bench.sh with
 * SIMT_SRC=kernels/sgemm_simt_exp.cu (it exports the same launcher API, so
 * it replaces sgemm_simt.cu in a bench binary). With no GS_X_* macros it
 * compiles to the same SASS as sgemm_simt.cu (checked: identical loop
 * statistics, see NOTES). The variants (sgemm_simt.NOTES.md, round 2):
 *   GS_X_BM / GS_X_BN = 128 or 256: block tile; warps = (BM/64) x (BN/64),
 *     each a 64 x 64 warp tile with the same 8 x 16 thread tile, so 256 x
 *     128 or 128 x 256 runs 256 threads (8 warps, 1 CTA/SM, up to 255
 *     registers), like cuBLAS's NN kernel (256x128x8, 3 stages).
 *     CAUTION: supports() then refuses m % BM or n % BN != 0, a narrower
 *     class than sgemm_simt.h documents (128): the bench selftest reports
 *     those cases as failures. Not for the library as is.
 *   GS_SIMT_LOOP = 2 with GS_X_BARK = kk: wait + barrier + next cp.async
 *     fetch together at k-step BARK (wait<STAGES-3>).
 *   GS_X_KSA / GS_X_KSB = 1 (round 4, "KS"): keep the k-contiguous operand
 *     (A in T layouts / B in N layouts) k-contiguous in shared memory:
 *     [mn][k] rows of 16 floats, 16-byte slots XOR-swizzled by
 *     (row >> 2) & 7 within each 128-byte line, filled by 16-byte cp.async
 *     (no 4-byte copies left), read as one LDS.128 along k per row per 4
 *     k-steps. Needs BK = 16. GS_X_KSORDER: FFMA order in that loop (0
 *     i-outer, 1 j-outer, 2 default: keep the KS operand in the reuse cache).
 *     GS_SIMT_UNROLL_KT there: 1 unless set > 1. MEASURED SLOWER (H200,
 *     2026-12-03): 3-11% below the same tile without it in NN/TN/TT
 *     (register-bank conflicts; sgemm_simt.NOTES.md round 4). Off by default.
 *   GS_SIMT_ORDER = 2 / 3 (round 5): serpentine FFMA order, i-outer / j-outer
 *     (classic loop only). 3 halves the dispatch (register-bank) stalls,
 *     but ptxas then clusters the next k-step's LDS: MEASURED 1-4% SLOWER
 *     than the same tile in most layouts (sgemm_simt.NOTES.md round 5).
 *   GS_X_VOLFRAG = 1 (round 7): fragment loads as ld.volatile.shared, which
 *     keeps them spread a k-step ahead; with ORDER 3 it measured +3-8%
 *     and is sgemm_simt.cu's default now.
 *   GS_SIMT_BK, GS_SIMT_STAGES, GS_SIMT_UNROLL_KT, GS_SIMT_ORDER 0/1,
 *   GS_SIMT_GROUP_M, GS_SIMT_LOOP = 0/1: as in sgemm_simt.cu. (The register-
 *   staged loader GS_SIMT_KREG is not carried over.)
 * Everything else (technique, constraints, epilogue) as sgemm_simt.cu:
 *
 * Technique (one per file):
 *   - Block tile 128 x 128 x BK, 128 threads (4 warps as 2 x 2), warp tile
 *     64 x 64, thread tile 8 (m) x 16 (n) = 128 FP32 accumulators per thread;
 *     a thread's rows are two float4 runs 32 apart, its columns four float4
 *     runs 16 apart, so every fragment read is a conflict-free LDS.128 and
 *     every output store a STG.128 covering whole 128-byte lines per warp.
 *   - Shared memory holds both operands k-major ("A transposed"): As[k][m],
 *     Bs[k][n], rows padded to 132 floats. A multi-stage cp.async pipeline
 *     (STAGES deep, one __syncthreads per k-tile) fills them:
 *       operand contiguous along m/n (A in N, B in T): 16-byte cp.async.cg;
 *       operand contiguous along k   (A in T, B in N): 4-byte cp.async.ca
 *       with lanes spread 8 (k) x 4 (m/n) so the transposing smem writes are
 *       bank-conflict free thanks to the 4-float row padding.
 *   - Register double buffer of the fragments across the k steps of a tile.
 *   - k-tile loop unrolled x2 for the A-transposed layouts (TN, TT), x1 for
 *     NN and NT (measured per layout; sgemm_simt.NOTES.md).
 *   - Grouped tile raster (GROUP_M tile rows) for L2 reuse.
 *   - Epilogue straight from registers: alpha*acc (+ bias[m]) (+ beta*C),
 *     C read only when beta != 0; alpha/beta read on the device when they are
 *     device pointers. No atomics, no split-K: deterministic bits.
 *
 * Constraints (checked by gs_sgemm_simt_supports, see sgemm_simt.h):
 *   m, n multiples of 128, k multiple of 16; A, B, C, D, bias 16-byte
 *   aligned; all leading dims multiples of 4. Index math is 64-bit.
 *
 * Target sm_90a (H200); plain CUDA C++ with cp.async, so sm_80+ compiles too.
 * 217-235 registers, no spills, 50.7 KB dynamic smem (2 CTAs/SM).
 *
 * Measured on the H200 (bench/results/sgemm_simt-h200-*.csv): 0.85-0.95x
 * cuBLAS at 2048-16384, far below on small grids (no split-K). It does NOT
 * beat cuBLAS anywhere yet: route nothing to it until a CSV says otherwise.
 *
 * The GS_SIMT_* macros below exist for tuning builds only (see NOTES); the
 * library builds the defaults.
 */
#include "sgemm_simt.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace gs_sgemm_simt {

/* Tile configuration: constexpr data, not scattered literals. */
/* GS_SIMT_* macros exist only for tuning builds (tools/build-bench.sh
 * EXTRA_FLAGS); the library builds the defaults. */
#ifndef GS_SIMT_BK
#define GS_SIMT_BK 16
#endif
#ifndef GS_SIMT_STAGES
#define GS_SIMT_STAGES 3
#endif
#ifndef GS_SIMT_LANES_M
#define GS_SIMT_LANES_M 8
#endif
#ifndef GS_SIMT_UNROLL_KT
#define GS_SIMT_UNROLL_KT 0 /* 0: per layout, see the k loop */
#endif
#ifndef GS_SIMT_LOOP
#define GS_SIMT_LOOP 0
#endif
#ifndef GS_SIMT_ORDER
#define GS_SIMT_ORDER 0
#endif
#ifndef GS_X_VOLFRAG
#define GS_X_VOLFRAG 0
#endif
#ifndef GS_X_BARK
#define GS_X_BARK 8
#endif
#ifndef GS_SIMT_GROUP_M
#define GS_SIMT_GROUP_M 8
#endif
#ifndef GS_X_BM
#define GS_X_BM 128
#endif
#ifndef GS_X_BN
#define GS_X_BN 128
#endif
/* Round 4: k-contiguous operands kept k-contiguous in shared memory
 * ("KS": [mn][k] rows of BK = 16 floats, XOR-swizzled 16-byte chunks,
 * filled by 16-byte cp.async, read as LDS.128 along k: 4 k-steps a load).
 * GS_X_KSA: A in T layouts; GS_X_KSB: B in N layouts. GS_X_KSDB = 1
 * double-buffers the 4-k-step fragment groups (more registers). */
#ifndef GS_X_KSA
#define GS_X_KSA 0
#endif
#ifndef GS_X_KSB
#define GS_X_KSB 0
#endif
#ifndef GS_X_KSDB
#define GS_X_KSDB 0
#endif
#ifndef GS_X_KSORDER
#define GS_X_KSORDER 2 /* 0 i-outer, 1 j-outer, 2 reuse the KS operand */
#endif
struct Cfg {
  static constexpr int BM = GS_X_BM, BN = GS_X_BN, BK = GS_SIMT_BK;
  static constexpr int WARPS_M = BM / 64, WARPS_N = BN / 64; /* 64 x 64 warp tiles */
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int STAGES = GS_SIMT_STAGES;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* 64 x 64 */
  static constexpr int LANES_M = GS_SIMT_LANES_M, LANES_N = 32 / LANES_M; /* lanes in a warp */
  static constexpr int TM = WM / LANES_M, TN = WN / LANES_N; /* 8 x 16 */
  static constexpr int PAD = 4;
  static constexpr int ROW_A = BM + PAD, ROW_B = BN + PAD; /* floats per smem k-row */
  static constexpr int GROUP_M = GS_SIMT_GROUP_M;
  static constexpr int MIN_BLOCKS = THREADS <= 128 ? 2 : 1; /* CTAs per SM we size registers for */
};
static_assert(Cfg::WARPS_M * Cfg::WARPS_N * 32 == Cfg::THREADS, "warp grid");
static_assert(Cfg::LANES_M * Cfg::LANES_N == 32, "lane grid");
static_assert(Cfg::TM % 4 == 0 && Cfg::TN % 4 == 0, "fragments are float4 runs");
static_assert(Cfg::BK % 8 == 0, "k-contiguous loader spreads 8 lanes along k");
static_assert(Cfg::ROW_A % 4 == 0 && Cfg::ROW_B % 4 == 0, "smem rows keep float4 alignment");
static_assert((Cfg::PAD * 8) % 32 == 0 || Cfg::PAD == 4,
              "pad 4: 8 k rows x 4 mn columns hit 32 distinct banks");
static_assert(GS_SGEMM_SIMT_ALIGN_K % Cfg::BK == 0, "documented k class");

struct Smem {
  float a[Cfg::STAGES][Cfg::BK][Cfg::ROW_A];
  float b[Cfg::STAGES][Cfg::BK][Cfg::ROW_B];
};

struct Params {
  int m, n, k; /* m, n, k < 2^31 (checked by the launcher) */
  const float *A, *B;
  const float *C;
  float *D;
  int64_t lda, ldb, ldc, ldd;
  float alpha, beta;
  const float *alpha_dev, *beta_dev; /* non-NULL: read on the device */
  const float *bias;
};

/* --- PTX helpers, one instruction each --------------------------------- */
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(smem)),
               "l"(gmem));
}
__device__ __forceinline__ void cp_async_4(void *smem, const void *gmem) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_u32(smem)),
               "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* --- global -> shared tile loaders --------------------------------------
 * One operand tile is BK (k) x EXT (mn), stored s[k][mn].  */

/* Operand contiguous along mn: element (kk, mn) at g[kk * ld + mn].
 * EXT: the tile's mn extent; ROW its smem row length. */
template <int EXT>
struct LoaderMN {
  static constexpr int ROW = EXT + Cfg::PAD;
  static constexpr int CHUNKS_PER_ROW = EXT / 4;
  static constexpr int ROWS_PER_PASS = Cfg::THREADS / CHUNKS_PER_ROW;
  static constexpr int PASSES = Cfg::BK / ROWS_PER_PASS;
  static_assert(Cfg::THREADS % CHUNKS_PER_ROW == 0 && Cfg::BK % ROWS_PER_PASS == 0, "");
  const float *g;
  int64_t row_step;
  int64_t tile_step;
  int soff;
  __device__ __forceinline__ LoaderMN(const float *base, int64_t ld, int mn0, int tid) {
    const int kk = tid / CHUNKS_PER_ROW, c = tid % CHUNKS_PER_ROW;
    g = base + (int64_t)kk * ld + mn0 + c * 4;
    row_step = (int64_t)ROWS_PER_PASS * ld;
    tile_step = (int64_t)Cfg::BK * ld;
    soff = kk * ROW + c * 4;
  }
  __device__ __forceinline__ void fetch(float *s) {
    const float *p = g;
#pragma unroll
    for (int i = 0; i < PASSES; ++i) {
      cp_async_16(s + soff + i * ROWS_PER_PASS * ROW, p);
      p += row_step;
    }
    g += tile_step;
  }
};

/* Operand contiguous along k: element (kk, mn) at g[mn * ld + kk].
 * Lanes: 8 along k x 4 along mn (row pad 4: conflict-free 4-byte writes). */
template <int EXT>
struct LoaderK {
  static constexpr int ROW = EXT + Cfg::PAD;
  static constexpr int KL = 8, ML = 4;
  static constexpr int MN_PER_PASS = (Cfg::THREADS / 32) * ML;
  static constexpr int MPASSES = EXT / MN_PER_PASS;
  static constexpr int KPASSES = Cfg::BK / KL;
  static_assert(EXT % MN_PER_PASS == 0, "");
  const float *g;
  int64_t col_step;
  int soff;
  __device__ __forceinline__ LoaderK(const float *base, int64_t ld, int mn0, int tid) {
    const int lane = tid & 31, warp = tid >> 5;
    const int kk = lane % KL, mn = warp * ML + lane / KL;
    g = base + (int64_t)(mn0 + mn) * ld + kk;
    col_step = (int64_t)MN_PER_PASS * ld;
    soff = kk * ROW + mn;
  }
  __device__ __forceinline__ void fetch(float *s) {
    const float *p = g;
#pragma unroll
    for (int i = 0; i < MPASSES; ++i) {
#pragma unroll
      for (int j = 0; j < KPASSES; ++j)
        cp_async_4(s + soff + j * KL * ROW + i * MN_PER_PASS, p + j * KL);
      p += col_step;
    }
    g += Cfg::BK;
  }
};

/* KS layout of one stage: EXT rows (mn) of BK = 16 floats (64 bytes, no
 * pad). Two rows make one 128-byte line (8 bank groups of 16 bytes); the
 * 16-byte slot q = (row & 1) * 4 + chunk of a line is stored at
 * q ^ ((row >> 2) & 7). A warp's fragment read touches rows r0 + 4 t
 * (t = 0..7 for the 8 m-lanes, 0..3 for the 4 n-lanes), all of one parity:
 * (row >> 2) & 7 takes distinct values there, so the slots hit distinct bank
 * groups (one wavefront per LDS.128). A warp's cp.async writes cover whole
 * lines (conflict-free whatever the swizzle). */
__device__ __forceinline__ int ks_off(int row, int chunk) {
  return (row >> 1) * 32 + ((((row & 1) << 2) | chunk) ^ ((row >> 2) & 7)) * 4;
}
/* Operand contiguous along k, kept so: element (kk, mn) at g[mn * ld + kk],
 * 4 lanes per 64-byte row, 8 rows per warp instruction. */
template <int EXT>
struct LoaderKS {
  static constexpr int CPR = Cfg::BK / 4; /* 16-byte chunks per row */
  static constexpr int ROWS_PER_PASS = Cfg::THREADS / CPR;
  static constexpr int PASSES = EXT / ROWS_PER_PASS;
  static_assert(Cfg::BK == 16, "KS layout: 64-byte rows, two per 128-byte line");
  static_assert(EXT % ROWS_PER_PASS == 0 && ROWS_PER_PASS % 32 == 0,
                "passes keep the swizzle term (row >> 2) & 7");
  const float *g;
  int64_t col_step;
  int soff;
  __device__ __forceinline__ LoaderKS(const float *base, int64_t ld, int mn0, int tid) {
    const int row = tid / CPR, c = tid % CPR;
    g = base + (int64_t)(mn0 + row) * ld + c * 4;
    col_step = (int64_t)ROWS_PER_PASS * ld;
    soff = ks_off(row, c);
  }
  __device__ __forceinline__ void fetch(float *s) {
    const float *p = g;
#pragma unroll
    for (int i = 0; i < PASSES; ++i) {
      cp_async_16(s + soff + i * ROWS_PER_PASS * Cfg::BK, p);
      p += col_step;
    }
    g += Cfg::BK;
  }
};

template <bool MN_CONTIG, int EXT, bool KS = false>
struct LoaderSel { using T = LoaderMN<EXT>; };
template <int EXT>
struct LoaderSel<false, EXT, false> { using T = LoaderK<EXT>; };
template <int EXT>
struct LoaderSel<false, EXT, true> { using T = LoaderKS<EXT>; };

/* GS_SIMT_ORDER 2 / 3: serpentine FFMA order (rows i-outer with j
 * alternating direction, or columns j-outer with i alternating), so the
 * first FFMA of a row (column) reuses the previous one's b (a) from the
 * operand reuse cache: every FFMA then reads one uncached fragment value
 * and its accumulator, which ptxas can put in opposite register banks. */
__device__ __forceinline__ void ffma_serpentine(float (&acc)[Cfg::TM][Cfg::TN],
                                                const float (&a)[Cfg::TM],
                                                const float (&b)[Cfg::TN]) {
#if GS_SIMT_ORDER == 2
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
    for (int jj = 0; jj < Cfg::TN; ++jj) {
      const int j = (i & 1) ? Cfg::TN - 1 - jj : jj;
      acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
#else
#pragma unroll
  for (int j = 0; j < Cfg::TN; ++j)
#pragma unroll
    for (int ii = 0; ii < Cfg::TM; ++ii) {
      const int i = (j & 1) ? Cfg::TM - 1 - ii : ii;
      acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
#endif
}

/* TA/TB: 1 = op is transpose (cuBLAS 'T'). op(A) is m x k: A stored m x k
 * (N, contiguous along m) or k x m (T, contiguous along k). op(B) is k x n:
 * B stored k x n (N, contiguous along k) or n x k (T, contiguous along n). */
template <int TA, int TB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    sgemm_simt_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Smem &sm = *reinterpret_cast<Smem *>(smem_raw);

  const int tid = threadIdx.x;

  /* Grouped raster: GROUP_M tile rows share the B panels in L2. */
  const int tiles_m = p.m / Cfg::BM, tiles_n = p.n / Cfg::BN;
  const int bid = blockIdx.x;
  const int per_group = Cfg::GROUP_M * tiles_n;
  const int group = bid / per_group;
  const int first_m = group * Cfg::GROUP_M;
  const int gsize = min(tiles_m - first_m, Cfg::GROUP_M);
  const int in_group = bid - group * per_group;
  const int tile_m = first_m + in_group % gsize;
  const int tile_n = in_group / gsize;
  const int m0 = tile_m * Cfg::BM, n0 = tile_n * Cfg::BN;

  constexpr bool KSA = GS_X_KSA && TA == 1; /* A kept [m][k] in smem */
  constexpr bool KSB = GS_X_KSB && TB == 0; /* B kept [n][k] in smem */
  using LA = typename LoaderSel<TA == 0, Cfg::BM, KSA>::T;
  using LB = typename LoaderSel<TB == 1, Cfg::BN, KSB>::T;
  LA la(p.A, p.lda, m0, tid);
  LB lb(p.B, p.ldb, n0, tid);

  const int KT = p.k / Cfg::BK;

  /* Prologue: STAGES-1 tiles in flight. */
#pragma unroll
  for (int s = 0; s < Cfg::STAGES - 1; ++s) {
    if (s < KT) {
      la.fetch(&sm.a[s][0][0]);
      lb.fetch(&sm.b[s][0][0]);
    }
    cp_async_commit();
  }

  const int lane = tid & 31, warp = tid >> 5;
  const int wm = warp % Cfg::WARPS_M, wn = warp / Cfg::WARPS_M;
  const int tm = lane % Cfg::LANES_M, tn = lane / Cfg::LANES_M;
  const int a_off = wm * Cfg::WM + tm * 4; /* + 32 * ii */
  const int b_off = wn * Cfg::WN + tn * 4; /* + 16 * jj */
  constexpr int A_RUN = Cfg::WM / (Cfg::TM / 4); /* 32 */
  constexpr int B_RUN = Cfg::WN / (Cfg::TN / 4); /* 16 */
  constexpr bool a_off_is_x4 = Cfg::WM % 4 == 0 && Cfg::WN % 4 == 0;

  float acc[Cfg::TM][Cfg::TN];
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::TN; ++j) acc[i][j] = 0.f;

  float fa[2][Cfg::TM], fb[2][Cfg::TN];
  /* GS_X_VOLFRAG: fragment loads as ld.volatile.shared (round 7, now the
   * default of sgemm_simt.cu: ptxas then keeps them a k-step ahead). */
  auto lds4 = [](float *d, const float *src) {
    if (GS_X_VOLFRAG)
      asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(smem_u32(src)));
    else
      *reinterpret_cast<float4 *>(d) = *reinterpret_cast<const float4 *>(src);
  };
  auto load_frag = [&](int buf, int stage, int kk) {
    const float *ra = &sm.a[stage][kk][a_off];
    const float *rb = &sm.b[stage][kk][b_off];
#pragma unroll
    for (int ii = 0; ii < Cfg::TM / 4; ++ii) lds4(&fa[buf][ii * 4], ra + ii * A_RUN);
#pragma unroll
    for (int jj = 0; jj < Cfg::TN / 4; ++jj) lds4(&fb[buf][jj * 4], rb + jj * B_RUN);
  };

  if constexpr (KSA || KSB) {
    /* Round 4 main loop: the KS operand(s) are read 4 k-steps at a time
     * (one LDS.128 along k per row), the k-major one(s) a k-step at a time
     * as before. Group registers single-buffered: group g+1 is loaded after
     * group g's last k-step in program order (ptxas hoists what registers
     * allow). */
    constexpr int G = 4, NG = Cfg::BK / G;
    /* FFMA order. A KS fragment value for k-step s sits in register 4r + s:
     * all of one register-bank parity within a k-step, so it is the operand
     * to keep in the reuse cache (auto: j-outer when only B is KS), letting
     * ptxas give each accumulator the parity opposite its k-major operand. */
    constexpr bool KS_JOUTER = GS_X_KSORDER == 1 || (GS_X_KSORDER == 2 && KSB && !KSA);
    static_assert(Cfg::BK % G == 0, "");
    static_assert(A_RUN % 16 == 0 && B_RUN % 16 == 0 && a_off_is_x4,
                  "fragment rows r0 + ro with r0 % 4 == 0, ro & 12 == 0: swizzle term is r0's");
    float4 qa[KSA ? Cfg::TM : 1], qb[KSB ? Cfg::TN : 1];
    /* (row >> 2) & 7 of the thread's first fragment row, times 4 floats */
    const int ya = ((a_off >> 2) & 7) * 4, yb = ((b_off >> 2) & 7) * 4;
    const int basea = (a_off >> 1) * 32, baseb = (b_off >> 1) * 32;
    auto ks_frag = [&](const float *st, int base, int y4, int ro, int g) -> float4 {
      /* ks_off(r0 + ro, g) with r0 % 4 == 0 and ro & 12 == 0 */
      const int x = ((((ro & 1) << 2) | g) ^ ((ro >> 2) & 7)) * 4;
      return *reinterpret_cast<const float4 *>(st + base + (ro >> 1) * 32 + (x ^ y4));
    };
    auto load_step = [&](int buf, int stage, int kk) {
      if constexpr (!KSA) {
        const float *ra = &sm.a[stage][kk][a_off];
#pragma unroll
        for (int ii = 0; ii < Cfg::TM / 4; ++ii)
          *reinterpret_cast<float4 *>(&fa[buf][ii * 4]) =
              *reinterpret_cast<const float4 *>(ra + ii * A_RUN);
      }
      if constexpr (!KSB) {
        const float *rb = &sm.b[stage][kk][b_off];
#pragma unroll
        for (int jj = 0; jj < Cfg::TN / 4; ++jj)
          *reinterpret_cast<float4 *>(&fb[buf][jj * 4]) =
              *reinterpret_cast<const float4 *>(rb + jj * B_RUN);
      }
    };
    auto load_group = [&](int stage, int g) {
      if constexpr (KSA) {
        const float *st = &sm.a[stage][0][0];
#pragma unroll
        for (int i = 0; i < Cfg::TM; ++i)
          qa[i] = ks_frag(st, basea, ya, (i / 4) * A_RUN + i % 4, g);
      }
      if constexpr (KSB) {
        const float *st = &sm.b[stage][0][0];
#pragma unroll
        for (int j = 0; j < Cfg::TN; ++j)
          qb[j] = ks_frag(st, baseb, yb, (j / 4) * B_RUN + j % 4, g);
      }
    };
    auto comp = [](const float4 &v, int s) -> float {
      return s == 0 ? v.x : s == 1 ? v.y : s == 2 ? v.z : v.w;
    };

    cp_async_wait<Cfg::STAGES - 2>();
    __syncthreads();
    load_step(0, 0, 0);
    load_group(0, 0);

    int read_stage = 0;
    int write_stage = Cfg::STAGES - 1;
    int next_tile = Cfg::STAGES - 1;
#if GS_SIMT_UNROLL_KT > 1
    constexpr int UNROLL_KS = GS_SIMT_UNROLL_KT;
#pragma unroll(UNROLL_KS)
#else
#pragma unroll 1
#endif
    for (int kt = 0; kt < KT; ++kt) {
      /* The 16 k-steps written out as calls with constant (g, s): LLVM left
       * both a 16-step loop and a 4 x 4 nest rolled (the comp() selects put
       * it over the full-unroll threshold), which makes g a runtime value. */
      auto kstep = [&](const int g, const int s) {
        const int kk = g * G + s;
        if (kk == Cfg::BK - 1) {
          cp_async_wait<Cfg::STAGES - 2>();
          __syncthreads();
          read_stage = (read_stage + 1 == Cfg::STAGES) ? 0 : read_stage + 1;
        }
        load_step((kk + 1) & 1, read_stage, (kk + 1) % Cfg::BK);
        if (kk == 0) {
          if (next_tile < KT) {
            la.fetch(&sm.a[write_stage][0][0]);
            lb.fetch(&sm.b[write_stage][0][0]);
          }
          cp_async_commit();
          write_stage = (write_stage + 1 == Cfg::STAGES) ? 0 : write_stage + 1;
          ++next_tile;
        }
        if constexpr (KS_JOUTER) {
#pragma unroll
          for (int j = 0; j < Cfg::TN; ++j)
#pragma unroll
            for (int i = 0; i < Cfg::TM; ++i) {
              const float av = KSA ? comp(qa[KSA ? i : 0], s) : fa[kk & 1][i];
              const float bv = KSB ? comp(qb[KSB ? j : 0], s) : fb[kk & 1][j];
              acc[i][j] = fmaf(av, bv, acc[i][j]);
            }
        } else {
#pragma unroll
          for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
            for (int j = 0; j < Cfg::TN; ++j) {
              const float av = KSA ? comp(qa[KSA ? i : 0], s) : fa[kk & 1][i];
              const float bv = KSB ? comp(qb[KSB ? j : 0], s) : fb[kk & 1][j];
              acc[i][j] = fmaf(av, bv, acc[i][j]);
            }
        }
        if (s == G - 1) load_group(read_stage, (g + 1) % NG);
      };
      static_assert(Cfg::BK == 16, "KS loop body is written for 4 groups of 4 k-steps");
      kstep(0, 0); kstep(0, 1); kstep(0, 2); kstep(0, 3);
      kstep(1, 0); kstep(1, 1); kstep(1, 2); kstep(1, 3);
      kstep(2, 0); kstep(2, 1); kstep(2, 2); kstep(2, 3);
      kstep(3, 0); kstep(3, 1); kstep(3, 2); kstep(3, 3);
    }
    (void)NG;
  } else {
  cp_async_wait<Cfg::STAGES - 2>();
  __syncthreads();
  load_frag(0, 0, 0);

  int read_stage = 0;
  int write_stage = Cfg::STAGES - 1;
  int next_tile = Cfg::STAGES - 1;
  int staged = Cfg::STAGES - 1; /* stage the register-staged loaders fill */
  bool staged_valid = false;

  /* Per-layout k-tile unroll (measured, see NOTES): the A-transposed
   * layouts (4-byte transposing copies of A) gain 2-8% from a 2-tile body,
   * NN and NT lose 4%. */
  constexpr int UNROLL_KT = GS_SIMT_UNROLL_KT ? GS_SIMT_UNROLL_KT : (TA == 1 ? 2 : 1);
#if GS_SIMT_LOOP == 2
  /* Experimental: wait + barrier + next fetch together at kk == BARK
   * (one group fewer in flight: wait<STAGES-3>), so the next tile's first
   * fragment loads at kk == BK-1 are ordinary LDS with no barrier near. */
  (void)staged; (void)staged_valid;
#pragma unroll(UNROLL_KT)
  for (int kt = 0; kt < KT; ++kt) {
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; ++kk) {
      if (kk == GS_X_BARK) {
        cp_async_wait<Cfg::STAGES - 3>();
        __syncthreads();
        if (next_tile < KT) {
          la.fetch(&sm.a[write_stage][0][0]);
          lb.fetch(&sm.b[write_stage][0][0]);
        }
        cp_async_commit();
        write_stage = (write_stage + 1 == Cfg::STAGES) ? 0 : write_stage + 1;
        ++next_tile;
      }
      const int next_stage = (read_stage + 1 == Cfg::STAGES) ? 0 : read_stage + 1;
      load_frag((kk + 1) & 1, kk + 1 < Cfg::BK ? read_stage : next_stage, (kk + 1) % Cfg::BK);
      if (kk == Cfg::BK - 1) read_stage = next_stage;
#if GS_SIMT_ORDER == 2 || GS_SIMT_ORDER == 3
      ffma_serpentine(acc, fa[kk & 1], fb[kk & 1]);
#elif GS_SIMT_ORDER == 0
#pragma unroll
      for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::TN; ++j)
          acc[i][j] = fmaf(fa[kk & 1][i], fb[kk & 1][j], acc[i][j]);
#else
#pragma unroll
      for (int j = 0; j < Cfg::TN; ++j)
#pragma unroll
        for (int i = 0; i < Cfg::TM; ++i)
          acc[i][j] = fmaf(fa[kk & 1][i], fb[kk & 1][j], acc[i][j]);
#endif
    }
  }
#else
#pragma unroll(UNROLL_KT)
  for (int kt = 0; kt < KT; ++kt) {
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; ++kk) {
      if (GS_SIMT_LOOP == 0 && kk == Cfg::BK - 1) {
        /* Tile kt+1 has landed and everyone is done reading tile kt-1. */
        cp_async_wait<Cfg::STAGES - 2>();
        __syncthreads();
        read_stage = (read_stage + 1 == Cfg::STAGES) ? 0 : read_stage + 1;
      }
      if (GS_SIMT_LOOP == 0 || kk + 1 < Cfg::BK)
        load_frag((kk + 1) & 1, read_stage, (kk + 1) % Cfg::BK);
      if (kk == 0) {
        staged = write_stage;
        staged_valid = next_tile < KT;
        if (staged_valid) {
          la.fetch(&sm.a[write_stage][0][0]);
          lb.fetch(&sm.b[write_stage][0][0]);
        }
        cp_async_commit();
        write_stage = (write_stage + 1 == Cfg::STAGES) ? 0 : write_stage + 1;
        ++next_tile;
      }
#if GS_SIMT_ORDER == 2 || GS_SIMT_ORDER == 3
      ffma_serpentine(acc, fa[kk & 1], fb[kk & 1]);
#elif GS_SIMT_ORDER == 0
#pragma unroll
      for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::TN; ++j)
          acc[i][j] = fmaf(fa[kk & 1][i], fb[kk & 1][j], acc[i][j]);
#else
#pragma unroll
      for (int j = 0; j < Cfg::TN; ++j)
#pragma unroll
        for (int i = 0; i < Cfg::TM; ++i)
          acc[i][j] = fmaf(fa[kk & 1][i], fb[kk & 1][j], acc[i][j]);
#endif
    }
    if (GS_SIMT_LOOP == 1) {
      cp_async_wait<Cfg::STAGES - 2>();
      __syncthreads();
      read_stage = (read_stage + 1 == Cfg::STAGES) ? 0 : read_stage + 1;
      load_frag(0, read_stage, 0);
    }
  }
#endif
  } /* KS / classic main loop */
  cp_async_wait<0>();

  /* Epilogue. */
  const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
  const float beta = p.beta_dev ? *p.beta_dev : p.beta;
  const int64_t row0 = (int64_t)m0 + a_off;
  const int64_t col0 = (int64_t)n0 + b_off;

  float4 bias4[Cfg::TM / 4];
#pragma unroll
  for (int ii = 0; ii < Cfg::TM / 4; ++ii)
    bias4[ii] = p.bias ? *reinterpret_cast<const float4 *>(p.bias + row0 + ii * A_RUN)
                       : make_float4(0.f, 0.f, 0.f, 0.f);

#pragma unroll
  for (int jj = 0; jj < Cfg::TN / 4; ++jj) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t col = col0 + jj * B_RUN + j;
      float *dcol = p.D + col * p.ldd + row0;
#pragma unroll
      for (int ii = 0; ii < Cfg::TM / 4; ++ii) {
        float4 v;
        v.x = fmaf(alpha, acc[ii * 4 + 0][jj * 4 + j], bias4[ii].x);
        v.y = fmaf(alpha, acc[ii * 4 + 1][jj * 4 + j], bias4[ii].y);
        v.z = fmaf(alpha, acc[ii * 4 + 2][jj * 4 + j], bias4[ii].z);
        v.w = fmaf(alpha, acc[ii * 4 + 3][jj * 4 + j], bias4[ii].w);
        if (beta != 0.f) {
          const float4 c =
              *reinterpret_cast<const float4 *>(p.C + col * p.ldc + row0 + ii * A_RUN);
          v.x = fmaf(beta, c.x, v.x);
          v.y = fmaf(beta, c.y, v.y);
          v.z = fmaf(beta, c.z, v.z);
          v.w = fmaf(beta, c.w, v.w);
        }
        *reinterpret_cast<float4 *>(dcol + ii * A_RUN) = v;
      }
    }
  }
}

typedef void (*kernel_fn)(const Params);
static const kernel_fn kernels[2][2] = {
    {sgemm_simt_kernel<0, 0>, sgemm_simt_kernel<0, 1>},
    {sgemm_simt_kernel<1, 0>, sgemm_simt_kernel<1, 1>},
};

static inline int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* cudaFuncSetAttribute once per device (a benign race: every caller sets the
 * same value). Not a stream operation, so safe while a stream captures. */
static constexpr int kMaxDevices = 64;
static volatile int attr_done[kMaxDevices];

static cudaError_t ensure_attributes() {
  constexpr size_t smem = sizeof(Smem);
  if (smem <= 48 * 1024) return cudaSuccess;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev >= 0 && dev < kMaxDevices && attr_done[dev]) return cudaSuccess;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      e = cudaFuncSetAttribute(kernels[ta][tb], cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)smem);
      if (e != cudaSuccess) return e;
    }
  if (dev >= 0 && dev < kMaxDevices) attr_done[dev] = 1;
  return cudaSuccess;
}

}  // namespace gs_sgemm_simt

using namespace gs_sgemm_simt;

extern "C" int gs_sgemm_simt_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                                      int trans_b, const void *A, int64_t lda,
                                      const void *B, int64_t ldb, const void *C,
                                      int64_t ldc, int check_c) {
  const int64_t lim = (int64_t)1 << 31;
  if (m <= 0 || n <= 0 || k <= 0 || m >= lim || n >= lim || k >= lim) return 0;
  if (m % Cfg::BM || n % Cfg::BN || k % GS_SGEMM_SIMT_ALIGN_K)
    return 0;
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1)) return 0;
  /* tile count must fit a 1-D grid */
  if ((m / Cfg::BM) * (n / Cfg::BN) >= lim) return 0;
  if (!A || !B || !aligned16(A) || !aligned16(B)) return 0;
  if (lda % 4 || ldb % 4) return 0;
  if (lda < (trans_a ? k : m) || ldb < (trans_b ? n : k)) return 0;
  if (check_c) {
    if (!C || !aligned16(C) || ldc % 4 || ldc < m) return 0;
  }
  return 1;
}

extern "C" gs_kstatus gs_sgemm_simt_launch(const gs_kernel_args *a) {
  if (!a) return GS_K_UNSUPPORTED;
  const int check_c = a->scalars_on_device ? 1 : (a->beta != 0.f);
  if (!gs_sgemm_simt_supports(a->m, a->n, a->k, a->trans_a, a->trans_b, a->A, a->lda, a->B,
                              a->ldb, a->C, a->ldc, check_c))
    return GS_K_UNSUPPORTED;
  if (!a->D || !aligned16(a->D) || a->ldd % 4 || a->ldd < a->m) return GS_K_UNSUPPORTED;
  if (a->bias && !aligned16(a->bias)) return GS_K_UNSUPPORTED;
  if (a->scalars_on_device && (!a->alpha_dev || !a->beta_dev)) return GS_K_UNSUPPORTED;
  /* D may alias C only exactly (same start, same ld). */
  if (check_c && a->C == a->D && a->ldc != a->ldd) return GS_K_UNSUPPORTED;

  Params p;
  p.m = (int)a->m;
  p.n = (int)a->n;
  p.k = (int)a->k;
  p.A = static_cast<const float *>(a->A);
  p.B = static_cast<const float *>(a->B);
  p.C = static_cast<const float *>(a->C);
  p.D = static_cast<float *>(a->D);
  p.lda = a->lda;
  p.ldb = a->ldb;
  p.ldc = a->ldc;
  p.ldd = a->ldd;
  p.alpha = a->alpha;
  p.beta = a->beta;
  p.alpha_dev = a->scalars_on_device ? a->alpha_dev : nullptr;
  p.beta_dev = a->scalars_on_device ? a->beta_dev : nullptr;
  p.bias = static_cast<const float *>(a->bias);

  if (ensure_attributes() != cudaSuccess) return GS_K_LAUNCH_FAILED;

  const unsigned grid = (unsigned)((a->m / Cfg::BM) * (a->n / Cfg::BN));
  kernels[a->trans_a][a->trans_b]<<<grid, Cfg::THREADS, sizeof(Smem), a->stream>>>(p);
  return cudaGetLastError() == cudaSuccess ? GS_K_OK : GS_K_LAUNCH_FAILED;
}
