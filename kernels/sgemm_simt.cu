/* sgemm_simt.cu: FP32 SGEMM on CUDA cores (FFMA), column-major as cuBLAS.
 *
 * Technique (one per file):
 *   - Block tile 128 x 128 x BK with 128 threads (4 warps as 2 x 2), or,
 *     where the layout's wide side divides, a wide tile of 256 threads
 *     (8 warps): 256 x 128 when B is stored k-contiguous (NN, TN), 128 x 256
 *     when B is stored n-contiguous (NT, TT). Warp tile 64 x 64, thread tile
 *     8 (m) x 16 (n) = 128 FP32 accumulators per thread; a thread's rows are
 *     two float4 runs 32 apart, its columns four float4 runs 16 apart, so
 *     every fragment read is a conflict-free LDS.128 and every output store
 *     a STG.128 covering whole 128-byte lines per warp.
 *   - Shared memory holds both operands k-major ("A transposed"): As[k][m],
 *     Bs[k][n], rows padded by 4 floats. A multi-stage cp.async pipeline
 *     (STAGES deep, one __syncthreads per k-tile) fills them:
 *       operand contiguous along m/n (A in N, B in T): 16-byte cp.async.cg;
 *       operand contiguous along k   (A in T, B in N): 4-byte cp.async.ca
 *       with lanes spread 8 (k) x 4 (m/n) so the transposing smem writes are
 *       bank-conflict free thanks to the 4-float row padding.
 *   - Register double buffer of the fragments across the k steps of a tile,
 *     loaded with volatile LDS.128 so ptxas keeps them a k-step ahead.
 *   - FFMAs in a serpentine j-outer order, which lets ptxas keep each FFMA's
 *     two register-file reads in different banks (half the dispatch stalls
 *     of the plain i-outer order).
 *   - k-tile loop unrolled x2 for the A-transposed layouts (TN, TT), x1 for
 *     NN and NT (measured per layout).
 *   - Grouped tile raster (GROUP_M tile rows) for L2 reuse.
 *   - Epilogue straight from registers: alpha*acc (+ bias[m]) (+ beta*C),
 *     C read only when beta != 0; alpha/beta read on the device when they are
 *     device pointers. No atomics, no split-K: deterministic bits (the tile
 *     shape does not change the per-element summation order).
 *
 * Constraints (checked by gs_sgemm_simt_supports, see sgemm_simt.h):
 *   m, n multiples of 128, k multiple of 16; A, B, C, D, bias 16-byte
 *   aligned; all leading dims multiples of 4. Index math is 64-bit.
 *
 * Target sm_90a (H200); plain CUDA C++ with cp.async, so sm_80+ compiles too.
 * 50.7 KB dynamic smem (128 x 128, 2 CTAs/SM) or 75.3 KB (wide, 1 CTA/SM).
 * Design, contract, numbers and what was tried: kernels/sgemm_simt.md.
 */
#include "sgemm_simt.h"

#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

#include "gs_launch.h"

namespace gs_sgemm_simt {

/* Tile configuration: constexpr data, not scattered literals. */
/* One block-tile shape: BM x BN x BK, 64 x 64 warp tiles. */
template <int BM_, int BN_>
struct CfgT {
  static constexpr int BM = BM_, BN = BN_, BK = 16;
  static constexpr int WARPS_M = BM / 64, WARPS_N = BN / 64;
  static constexpr int THREADS = WARPS_M * WARPS_N * 32;
  static constexpr int STAGES = 3;                           /* cp.async pipeline depth */
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* 64 x 64 */
  static constexpr int LANES_M = 8, LANES_N = 32 / LANES_M; /* lanes in a warp */
  static constexpr int TM = WM / LANES_M, TN = WN / LANES_N; /* 8 x 16 */
  static constexpr int PAD = 4;
  static constexpr int ROW_A = BM + PAD, ROW_B = BN + PAD; /* floats per smem k-row */
  static constexpr int GROUP_M = 8;                          /* tile rows per raster group */
  static constexpr int MIN_BLOCKS = THREADS <= 128 ? 2 : 1; /* CTAs per SM we size registers for */
  static_assert(WARPS_M * WARPS_N * 32 == THREADS, "warp grid");
  static_assert(LANES_M * LANES_N == 32, "lane grid");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are float4 runs");
  static_assert(BK % 8 == 0, "k-contiguous loader spreads 8 lanes along k");
  static_assert(ROW_A % 4 == 0 && ROW_B % 4 == 0, "smem rows keep float4 alignment");
  static_assert(PAD == 4, "pad 4: 8 k rows x 4 mn columns hit 32 distinct banks");
  static_assert(GS_SGEMM_SIMT_ALIGN_K % BK == 0, "documented k class");
  static_assert(GS_SGEMM_SIMT_ALIGN_MN % 128 == 0, "documented m/n class");
};
/* The base tile, for every problem in the class. */
using Cfg128 = CfgT<128, 128>;
/* The wide tile, per layout (measured: kernels/sgemm_simt.md): 256 rows
 * of m when B is stored k-contiguous (NN, TN), 256 columns of n when B is
 * stored n-contiguous (NT, TT). 256 threads, 1 CTA per SM. */
template <int TB>
using CfgWide = CfgT<TB == 0 ? 256 : 128, TB == 0 ? 128 : 256>;

template <class C>
struct Smem {
  float a[C::STAGES][C::BK][C::ROW_A];
  float b[C::STAGES][C::BK][C::ROW_B];
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
 * One operand tile is BK (k) x EXT (mn), stored s[k][mn] with rows of
 * EXT + PAD floats. */

/* Operand contiguous along mn: element (kk, mn) at g[kk * ld + mn]. */
template <class C, int EXT>
struct LoaderMN {
  /* A warp copies 512 contiguous bytes of one k row per pass (measured
   * faster than 4 rows x 128 B per warp with immediate offsets:
   * kernels/sgemm_simt.md). */
  static constexpr int ROW = EXT + C::PAD;
  static constexpr int CHUNKS_PER_ROW = EXT / 4;
  static constexpr int ROWS_PER_PASS = C::THREADS / CHUNKS_PER_ROW;
  static constexpr int PASSES = C::BK / ROWS_PER_PASS;
  static_assert(C::THREADS % CHUNKS_PER_ROW == 0 && C::BK % ROWS_PER_PASS == 0, "");
  const float *g;    /* this thread's first element of the current tile */
  int64_t row_step;  /* ROWS_PER_PASS * ld */
  int64_t tile_step; /* BK * ld */
  int soff;          /* this thread's first smem offset within a stage */

  __device__ __forceinline__ LoaderMN(const float *base, int64_t ld, int mn0, int tid) {
    const int kk = tid / CHUNKS_PER_ROW, c = tid % CHUNKS_PER_ROW;
    g = base + (int64_t)kk * ld + mn0 + c * 4;
    row_step = (int64_t)ROWS_PER_PASS * ld;
    tile_step = (int64_t)C::BK * ld;
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
 * Lanes: 8 along k x 4 along mn, so one warp's 4-byte smem writes land on
 * banks 4*kk + mn (row pad 4): conflict free; global reads are 32-byte
 * sectors of 4 columns. (Measured alternatives, all slower: register-staged
 * 4x4 transposes, k-contiguous smem tiles; kernels/sgemm_simt.md.) */
template <class C, int EXT>
struct LoaderK {
  static constexpr int ROW = EXT + C::PAD;
  static constexpr int KL = 8, ML = 4;
  static constexpr int MN_PER_PASS = (C::THREADS / 32) * ML;
  static constexpr int MPASSES = EXT / MN_PER_PASS;
  static constexpr int KPASSES = C::BK / KL;
  static_assert(EXT % MN_PER_PASS == 0, "");
  const float *g;
  int64_t col_step; /* MN_PER_PASS * ld */
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
    g += C::BK;
  }
};

template <class C, bool MN_CONTIG, int EXT>
struct LoaderSel { using T = LoaderMN<C, EXT>; };
template <class C, int EXT>
struct LoaderSel<C, false, EXT> { using T = LoaderK<C, EXT>; };

/* TA/TB: 1 = op is transpose (cuBLAS 'T'). op(A) is m x k: A stored m x k
 * (N, contiguous along m) or k x m (T, contiguous along k). op(B) is k x n:
 * B stored k x n (N, contiguous along k) or n x k (T, contiguous along n). */
template <class Cfg, int TA, int TB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    gemmshim_f32_simt_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Smem<Cfg> &sm = *reinterpret_cast<Smem<Cfg> *>(smem_raw);

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

  using LA = typename LoaderSel<Cfg, TA == 0, Cfg::BM>::T;
  using LB = typename LoaderSel<Cfg, TB == 1, Cfg::BN>::T;
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

  float acc[Cfg::TM][Cfg::TN];
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::TN; ++j) acc[i][j] = 0.f;

  float fa[2][Cfg::TM], fb[2][Cfg::TN];
  /* Volatile shared loads: ptxas keeps them where the source puts them (a
   * k-step ahead, spread between FFMAs). As plain loads, with the serpentine
   * order below, ptxas pulled each k-step's six LDS.128 together and then
   * waited on them (kernels/sgemm_simt.md). */
  auto lds128 = [](float *d, const float *src) {
    asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(smem_u32(src)));
  };
  auto load_frag = [&](int buf, int stage, int kk) {
    const float *ra = &sm.a[stage][kk][a_off];
    const float *rb = &sm.b[stage][kk][b_off];
#pragma unroll
    for (int ii = 0; ii < Cfg::TM / 4; ++ii) lds128(&fa[buf][ii * 4], ra + ii * A_RUN);
#pragma unroll
    for (int jj = 0; jj < Cfg::TN / 4; ++jj) lds128(&fb[buf][jj * 4], rb + jj * B_RUN);
  };

  cp_async_wait<Cfg::STAGES - 2>();
  __syncthreads();
  load_frag(0, 0, 0);

  int read_stage = 0;
  int write_stage = Cfg::STAGES - 1;
  int next_tile = Cfg::STAGES - 1;

  /* Per-layout k-tile unroll (measured layout by layout, the kernel's doc):
   * a 2-tile body for the A-transposed layouts (4-byte transposing copies
   * of A), 1 for NN and NT. */
  constexpr int UNROLL_KT = TA == 1 ? 2 : 1;
#pragma unroll(UNROLL_KT)
  for (int kt = 0; kt < KT; ++kt) {
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; ++kk) {
      if (kk == Cfg::BK - 1) {
        /* Tile kt+1 has landed and everyone is done reading tile kt-1. */
        cp_async_wait<Cfg::STAGES - 2>();
        __syncthreads();
        read_stage = (read_stage + 1 == Cfg::STAGES) ? 0 : read_stage + 1;
      }
      load_frag((kk + 1) & 1, read_stage, (kk + 1) % Cfg::BK);
      if (kk == 0) {
        if (next_tile < KT) {
          la.fetch(&sm.a[write_stage][0][0]);
          lb.fetch(&sm.b[write_stage][0][0]);
        }
        cp_async_commit();
        write_stage = (write_stage + 1 == Cfg::STAGES) ? 0 : write_stage + 1;
        ++next_tile;
      }
      /* j-outer, i direction alternating per column: the first FFMA of a
       * column reuses the last one's a from the operand reuse cache, so
       * every FFMA reads one uncached fragment value and its accumulator,
       * which ptxas can put in opposite register banks (half the dispatch
       * stalls of the i-outer order: the kernel's doc). */
#pragma unroll
      for (int j = 0; j < Cfg::TN; ++j)
#pragma unroll
        for (int ii = 0; ii < Cfg::TM; ++ii) {
          const int i = (j & 1) ? Cfg::TM - 1 - ii : ii;
          acc[i][j] = fmaf(fa[kk & 1][i], fb[kk & 1][j], acc[i][j]);
        }
    }
  }
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
struct Variant {
  kernel_fn fn;
  int threads;
  size_t smem;
  int bm, bn; /* block tile */
};
template <class C, int TA, int TB>
constexpr Variant variant() {
  return Variant{gemmshim_f32_simt_kernel<C, TA, TB>, C::THREADS, sizeof(Smem<C>), C::BM, C::BN};
}
/* [wide][trans_a][trans_b] */
static const Variant variants[2][2][2] = {
    {{variant<Cfg128, 0, 0>(), variant<Cfg128, 0, 1>()},
     {variant<Cfg128, 1, 0>(), variant<Cfg128, 1, 1>()}},
    {{variant<CfgWide<0>, 0, 0>(), variant<CfgWide<1>, 0, 1>()},
     {variant<CfgWide<0>, 1, 0>(), variant<CfgWide<1>, 1, 1>()}},
};

static inline int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* cudaFuncSetAttribute once per context: the context each device's
 * attributes were last set in (0: none yet). Not a stream operation, so
 * safe while a stream captures. */
static constexpr int kMaxDevices = 64;
static std::atomic<uint64_t> attr_ctx[kMaxDevices];

static cudaError_t ensure_attributes(int dev, uint64_t ctx_id) {
  const bool cacheable = ctx_id != 0 && dev >= 0 && dev < kMaxDevices;
  if (cacheable && attr_ctx[dev].load(std::memory_order_acquire) == ctx_id) return cudaSuccess;
  for (int w = 0; w < 2; ++w)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        const Variant &v = variants[w][ta][tb];
        if (v.smem <= 48 * 1024) continue;
        const cudaError_t e = cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int)v.smem);
        if (e != cudaSuccess) {
          (void)cudaGetLastError();
          return e;
        }
      }
  if (cacheable) attr_ctx[dev].store(ctx_id, std::memory_order_release);
  return cudaSuccess;
}

/* Wide tiles only on grids of at least this many: measured faster there,
 * slower on small grids, where 128 x 128 tiles spread over twice the SMs
 * (the kernel's doc). */
static constexpr int64_t kWideMinTiles = 128;

/* The wide tile when its sides divide m and n and the grid is big enough
 * for it. */
static int use_wide(int64_t m, int64_t n, int trans_a, int trans_b) {
  const Variant &w = variants[1][trans_a][trans_b];
  if (m % w.bm || n % w.bn) return 0;
  return (m / w.bm) * (n / w.bn) >= kWideMinTiles;
}

}  // namespace gs_sgemm_simt

using namespace gs_sgemm_simt;

extern "C" int gs_sgemm_simt_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                                      int trans_b, const void *A, int64_t lda,
                                      const void *B, int64_t ldb, const void *C,
                                      int64_t ldc, int check_c) {
  const int64_t lim = (int64_t)1 << 31;
  if (m <= 0 || n <= 0 || k <= 0 || m >= lim || n >= lim || k >= lim) return 0;
  if (m % GS_SGEMM_SIMT_ALIGN_MN || n % GS_SGEMM_SIMT_ALIGN_MN || k % GS_SGEMM_SIMT_ALIGN_K)
    return 0;
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1)) return 0;
  /* tile count must fit a 1-D grid */
  if ((m / Cfg128::BM) * (n / Cfg128::BN) >= lim) return 0;
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

  if (ensure_attributes(a->device, a->ctx_id) != cudaSuccess) return GS_K_LAUNCH_FAILED;

  const Variant &v = variants[gs_sgemm_simt_path(a)][a->trans_a][a->trans_b];
  const unsigned grid = (unsigned)((a->m / v.bm) * (a->n / v.bn));
  gs_launch_begin();
  v.fn<<<grid, v.threads, v.smem, a->stream>>>(p);
  return gs_launch_end(0);
}

extern "C" int gs_sgemm_simt_preload(void) {
  for (int w = 0; w < 2; ++w)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        cudaFuncAttributes fa;
        if (cudaFuncGetAttributes(&fa, variants[w][ta][tb].fn) != cudaSuccess) {
          (void)cudaGetLastError();
          return -1;
        }
      }
  return 0;
}

extern "C" int gs_sgemm_simt_path(const gs_kernel_args *a) {
  return use_wide(a->m, a->n, a->trans_a, a->trans_b);
}
