/* gemm_f32_3xtf32.cu: FP32 GEMM on the Hopper tensor cores, 3xTF32 with
 * FP32 accumulation of per-K-chunk partials outside the tensor cores
 * (Ootomo and Yokota's error-corrected TF32 GEMM). Column-major as cuBLAS:
 * D[m,n] = alpha * op(A) op(B) + beta * C (+ bias[m]), FP32 in and out,
 * layouts TN, NN, NT and TT. Design, contract, numbers and what was tried:
 * kernels/gemm_f32_3xtf32.md.
 *
 * Numerics. Each operand value x = big + small (+ a residual below
 * 2^-22 |x|), big = TF32(x), small = TF32(x - big): kernels/tf32_split.h's
 * split (its CPU tests check it), here in a branch-free form bit-identical
 * to it over all 2^32 inputs (split_words; tests/test_3xtf32_split checks the
 * identity) and a 5-instruction form for "tame" values (|x| below
 * 0x7f7ff000: finite, no rounding to Inf; split_fast). A*B is taken as
 * big*big + (cross_a*small_b + small_a*cross_b), where cross = big for
 * finite x and 0 for Inf/NaN (a non-finite input reaches D through big*big
 * only: SGEMM's Inf/NaN pattern). The tensor cores accumulate one K-step
 * (a chunk of 32) into a chunk accumulator (scale-d = 0 starts each
 * chunk), the 8 correction products first, while it is small, the 4
 * big*big last; the chunk is added to the FP32 main accumulator with FADDs.
 *
 * Technique (one per file):
 *   - Block tile 128 (m) x 128 (n), K-step = K-chunk = 32; 384 threads =
 *     3 warpgroups, warp-specialized:
 *       warpgroup 0, the "split" group (setmaxnreg 56): issues the TMA
 *         loads; turns the FP32 B tile into TF32 parts in shared memory;
 *       warpgroups 1, 2, consumers (setmaxnreg 224): 64 rows of m each and
 *         all 128 columns; wgmma m64n128k8 .tf32 with A from registers:
 *         each thread loads its FP32 A fragment from the TMA tile, splits
 *         it in registers and feeds big/small/cross straight to wgmma (both
 *         operands in shared memory would write and re-read three split
 *         copies of A a step).
 *   - K permutation (free): a k8 instruction may take any 8 K indices as
 *     long as A and B agree. Instruction q (0..3) of a K-step uses raw k =
 *     8*(i%4) + 4*(i/4) + q for its K index i (0..7), so a thread's A values
 *     for the step are two 16-byte runs per row, and the split group writes
 *     B's parts with the matching permutation (a 4x4 register transpose of
 *     16-byte chunks, conflict-free in the 128-byte swizzle).
 *   - Tame tiles (the common case): B is split speculatively with
 *     split_fast and a half-row redone exactly when it held a value that is
 *     not tame; cross B is written only when some row of the tile was
 *     (bar.red.or over the split threads), else the consumers point the
 *     cross chain at big B. Consumers decide per warp and step (a vote)
 *     between split_fast and split_words for their A values.
 *   - Shared memory (224 KB): S = 4 TMA stages (A and B 128x32 FP32,
 *     128-byte swizzle) and P = 3 part sets (B small, B cross). B's big part
 *     is written in place over the raw B tile. S = P + 1: the split group's
 *     wait for a free part set is also the wait for the next TMA slot.
 *   - mbarriers: full[s] (TMA bytes), pfull[p] (split-thread arrivals, each
 *     after fence.proxy.async: generic-proxy writes read by wgmma),
 *     pempty[p] (consumer-warp arrivals once their wgmmas are done).
 *   - Consumer step: wait full, load the 16 A values, vote, wait pfull; per
 *     substep (4 a step) wait until at most Cfg::INFLIGHT wgmma groups are
 *     in flight, split its A values, issue cross*small and small*cross as
 *     one group; then the 4 big*big products as one group, drain, release
 *     the part set, 64 FADDs.
 *   - Epilogue through the drained TMA ring: accumulators staged
 *     column-major (pitch 68 floats: conflict-free), then runs of 4 rows per
 *     thread: alpha * acc (+ beta * C when beta != 0) (+ bias), 16-byte
 *     loads and stores. C is never read when beta == 0.
 *   - Grouped tile raster (Cfg::GROUP_M tile rows share B panels in L2).
 *     Non-persistent grid. No atomics, no split-K: deterministic bits.
 *   - Per layout, what was measured to help there and only there (masks
 *     kSpeculativeSplit, kTmaSpread, kConsumerTree, below).
 *
 * Constraints (gs_gemm_f32_3xtf32_supports, gemm_f32_3xtf32.h): m % 128,
 * n % 128, k % 32; 16-byte aligned pointers; leading dims multiples of 4
 * elements. Epilogue index math is 64-bit; TMA coordinates are 32-bit
 * element indices (m, n, k < 2^31).
 *
 * Target sm_90a only (wgmma, setmaxnreg). Debug build: -DGS_DEBUG_WAIT (or
 * -DGS_SM90_BOUNDED_WAIT=1) makes every mbarrier wait trap with a message
 * after 2 s of the global timer instead of hanging.
 */
#include "gemm_f32_3xtf32.h"

#include <cuda.h> /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>

#if defined(GS_DEBUG_WAIT) && !defined(GS_SM90_BOUNDED_WAIT)
#define GS_SM90_BOUNDED_WAIT 1
#endif
#include "gs_launch.h"
#include "sm90_host.h"
#include "sm90_ptx.cuh"
#include "tf32_split.h"
#include "gemm_f32_3xtf32_parts.h"

namespace gs_f32_3xtf32 {

using namespace gs_sm90;

/* Tile configuration: constexpr data, not scattered literals. */
struct Cfg {
  static constexpr int BM = 128, BN = 128;
  static constexpr int BK = 32;                      /* K-step: one 128-byte FP32 swizzle row */
  static constexpr int CHUNK_STEPS = 1;              /* K-steps per tensor-core accumulation chunk */
  static constexpr int S = 4;                        /* TMA stages (raw A, raw B / big B) */
  static constexpr int P = 3;                        /* part sets (small B, cross B) */
  static constexpr int CONSUMERS = 2;                /* consumer warpgroups */
  static constexpr int THREADS = 128 * (CONSUMERS + 1);
  static constexpr int WG_M = BM / CONSUMERS;        /* 64: one wgmma m64 */
  static constexpr int WG_N = BN;                    /* wgmma n128 */
  static constexpr int ACC = WG_M * WG_N / 128;      /* 64 FP32 per thread, twice */
  static constexpr int KSUB = BK / 8;                /* k8 wgmma substeps per K-step: 4 */
  static constexpr int INFLIGHT = 2;                 /* wgmma groups left in flight per step */
  static constexpr int SPLIT_REGS = 56, CONSUMER_REGS = 224;  /* the setmaxnreg split */
  static constexpr int GROUP_M = 8;                  /* tile rows per raster group */
  static constexpr int EPI_LD = WG_M + 4;            /* floats per staged column */
  static constexpr uint32_t A_BYTES = BM * BK * 4, B_BYTES = BN * BK * 4;
  static constexpr uint32_t STAGE_TX = A_BYTES + B_BYTES;
  static constexpr int CONSUMER_WARPS = CONSUMERS * 4; /* arrivals that free a part set */
  static constexpr int SPLIT_THREADS = 128;            /* arrivals that fill a part set */
};
static_assert(Cfg::BK * 4 == 128, "a K-step row is exactly one 128-byte swizzle span");
static_assert(Cfg::KSUB == 4, "the K permutation maps 4 substeps onto 4-float chunks");
static_assert(Cfg::BN == Cfg::SPLIT_THREADS, "split thread n takes B row n");
static_assert(Cfg::WG_M == 64 && Cfg::WG_N == 128 && Cfg::ACC == 64, "wgmma m64n128k8");
static_assert(Cfg::BM <= 256 && Cfg::BN <= 256, "TMA box dims are at most 256");
static_assert(Cfg::S == Cfg::P + 1, "the part-set wait also frees the next TMA slot");
static_assert(Cfg::CHUNK_STEPS >= 1, "at least one K-step per chunk");
static_assert(Cfg::INFLIGHT >= 0 && Cfg::INFLIGHT < Cfg::KSUB,
              "substep j reuses register set j: its last group (one K-step back) must retire");
static_assert(Cfg::SPLIT_REGS * 128 + Cfg::CONSUMER_REGS * 128 * Cfg::CONSUMERS <= 65536,
              "setmaxnreg budgets fit the register file");
static_assert(Cfg::SPLIT_REGS * 128 + Cfg::CONSUMER_REGS * 128 * Cfg::CONSUMERS <=
                  168 * Cfg::THREADS,
              "the budgets fit in the 168 registers a 384-thread CTA starts with");
static_assert((Cfg::EPI_LD * 2) % 32 == 8, "staged column pitch: fragment writes conflict-free");
static_assert((Cfg::EPI_LD * 4) % 16 == 0, "staged columns keep float4 alignment");
static_assert(GS_GEMM_F32_3XTF32_ALIGN_M % Cfg::BM == 0, "documented m class");
static_assert(GS_GEMM_F32_3XTF32_ALIGN_N % Cfg::BN == 0, "documented n class");
static_assert(GS_GEMM_F32_3XTF32_ALIGN_K % Cfg::BK == 0, "documented k class");

/* The shared-memory layout; sizeof(Smem) + 1024 (alignment slack) is the
 * launch's dynamic shared memory. Every tile is 16 KB and 1024-byte aligned
 * (128B swizzle atom). The epilogue reuses a[] and b[] once the consumers
 * are past their last wgmma. */
struct Smem {
  alignas(1024) float a[Cfg::S][Cfg::BM * Cfg::BK];   /* raw A (TMA) */
  alignas(1024) float b[Cfg::S][Cfg::BN * Cfg::BK];   /* raw B (TMA), then big B in place */
  alignas(1024) float bs[Cfg::P][Cfg::BN * Cfg::BK];  /* small B */
  alignas(1024) float bc[Cfg::P][Cfg::BN * Cfg::BK];  /* cross B (big, 0 where non-finite) */
  uint64_t full[Cfg::S];
  uint64_t pfull[Cfg::P];
  uint64_t pempty[Cfg::P];
  uint32_t pwild[Cfg::P]; /* part set's cross tile written (B has a non-tame value) */
};
static_assert(sizeof(float) * Cfg::BM * Cfg::BK == Cfg::A_BYTES, "");
static_assert(Cfg::A_BYTES % 1024 == 0 && Cfg::B_BYTES % 1024 == 0,
              "every tile stays 1024-byte aligned");
static_assert((size_t)Cfg::CONSUMERS * Cfg::BN * Cfg::EPI_LD * 4 <=
                  (size_t)Cfg::S * (Cfg::A_BYTES + Cfg::B_BYTES),
              "the epilogue staging fits in the TMA ring");
constexpr size_t kSmemBytes = sizeof(Smem) + 1024;
static_assert(kSmemBytes <= 227 * 1024, "fits the sm_90 per-block shared memory limit");

struct Params {
  int m, n, k;
  const float *C;
  float *D;
  int64_t ldc, ldd;
  float alpha, beta;
  const float *alpha_dev, *beta_dev; /* non-NULL: read on the device */
  const float *bias;
};

/* Barrier tags for the bounded-wait debug message. */
enum { TAG_FULL_SPLIT = 1, TAG_FULL_CONS = 2, TAG_PFULL = 3, TAG_PEMPTY = 4 };

__device__ __forceinline__ float4 ld_shared_f4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}
__device__ __forceinline__ void st_shared_u4(float *p, uint4 v) {
  *reinterpret_cast<uint4 *>(p) = v;
}
__device__ __forceinline__ float f4_at(const float4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
__device__ __forceinline__ void u4_set(uint4 &v, int i, uint32_t x) {
  if (i == 0) v.x = x;
  else if (i == 1) v.y = x;
  else if (i == 2) v.z = x;
  else v.w = x;
}

__device__ __forceinline__ bool tame(float m) { return m < __uint_as_float(kTameLimit); }
/* max(|a|, |b|, |c|, |d|), NaN if any is NaN: a tree, not a chain. */
__device__ __forceinline__ float max_abs4(float a, float b, float c, float d) {
  return max_abs_nan(max_abs_nan(fabsf(a), b), max_abs_nan(fabsf(c), d));
}

/* Pin values in registers at this point of the program: the split of a
 * substep is not hoisted above the wgmma wait that frees its registers. */
__device__ __forceinline__ void reg_pin4(float &a, float &b, float &c, float &d) {
  asm volatile("" : "+f"(a), "+f"(b), "+f"(c), "+f"(d));
}

__device__ __forceinline__ void reg_pin4u(uint32_t (&a)[4]) {
  asm volatile("" : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3]));
}

/* Grouped raster: GROUP_M tile rows (of m) share the B panels in L2. Each
 * warpgroup computes this after its setmaxnreg (nothing computed before the
 * role split stays live across it). */
__device__ __forceinline__ void tile_origin(const Params &p, int &m0, int &n0) {
  const int tiles_m = p.m / Cfg::BM, tiles_n = p.n / Cfg::BN;
  const int bid = blockIdx.x;
  const int per_group = Cfg::GROUP_M * tiles_n;
  const int group = bid / per_group;
  const int first_m = group * Cfg::GROUP_M;
  const int gsize = min(tiles_m - first_m, Cfg::GROUP_M);
  const int in_group = bid - group * per_group;
  m0 = (first_m + in_group % gsize) * Cfg::BM;
  n0 = (in_group / gsize) * Cfg::BN;
}


/* Issue the TMA loads of K-step kt into stage s (one box per K-major
 * operand, four per MN-major one; the stage's byte count is the same). */
template <int LAY>
__device__ __forceinline__ void load_stage(Smem &sm, int s, int kt, int m0, int n0,
                                           const CUtensorMap *tmA, const CUtensorMap *tmB) {
  if constexpr (Lay<LAY>::A_MN) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int c0, c1, dst;
      mn_box(i, kt, m0, c0, c1, dst);
      tma_load_2d(sm.a[s] + dst, tmA, &sm.full[s], c0, c1);
    }
  } else {
    tma_load_2d(sm.a[s], tmA, &sm.full[s], kt * Cfg::BK, m0);
  }
  if constexpr (Lay<LAY>::B_NM) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int c0, c1, dst;
      mn_box(i, kt, n0, c0, c1, dst);
      tma_load_2d(sm.b[s] + dst, tmB, &sm.full[s], c0, c1);
    }
  } else {
    tma_load_2d(sm.b[s], tmB, &sm.full[s], kt * Cfg::BK, n0);
  }
}
static_assert(Cfg::BM == 4 * MN_BOX && Cfg::BN == 4 * MN_BOX && Cfg::BK == 32,
              "MN-major tiles are four 32 x 32 boxes");
static_assert(MN_BOX * 4 == 128, "an MN-major box row is one 128-byte swizzle span");
static_assert(Cfg::CHUNK_STEPS == 1, "layouts NN/NT/TT need chunks of one K-step");
/* Layouts in the kTmaSpread mask (NT): lane 0 of split
 * warp `part` (0..3) issues box `part` of each MN-major operand (a K-major
 * operand's one box: A by part 0, B by part 1) after an arrive.expect_tx
 * of just those bytes, so full[] counts four arrivals and no warp's split
 * waits behind all of a stage's issues (eight in NT, where both operands
 * are MN-major). TN always keeps thread 0 and one arrival. */
template <int LAY>
struct TmaSpread {
  static constexpr bool ON = ((kTmaSpread >> LAY) & 1) && LAY != LAY_TN;
  static constexpr uint32_t ARRIVALS = ON ? 4 : 1;
};
template <int LAY>
__device__ __forceinline__ void load_stage_part(Smem &sm, int s, int kt, int m0, int n0,
                                                const CUtensorMap *tmA, const CUtensorMap *tmB,
                                                int part) {
  static_assert(Lay<LAY>::A_MN || Lay<LAY>::B_NM, "every part has a box to load");
  const uint32_t bytes = (Lay<LAY>::A_MN ? Cfg::A_BYTES / 4 : part == 0 ? Cfg::A_BYTES : 0) +
                         (Lay<LAY>::B_NM ? Cfg::B_BYTES / 4 : part == 1 ? Cfg::B_BYTES : 0);
  mbar_arrive_expect_tx(&sm.full[s], bytes);
  int c0, c1, dst;
  if constexpr (Lay<LAY>::A_MN) {
    mn_box(part, kt, m0, c0, c1, dst);
    tma_load_2d(sm.a[s] + dst, tmA, &sm.full[s], c0, c1);
  } else if (part == 0) {
    tma_load_2d(sm.a[s], tmA, &sm.full[s], kt * Cfg::BK, m0);
  }
  if constexpr (Lay<LAY>::B_NM) {
    mn_box(part, kt, n0, c0, c1, dst);
    tma_load_2d(sm.b[s] + dst, tmB, &sm.full[s], c0, c1);
  } else if (part == 1) {
    tma_load_2d(sm.b[s], tmB, &sm.full[s], kt * Cfg::BK, n0);
  }
}

template <int LAY>
__global__ void __launch_bounds__(Cfg::THREADS, 1)
    gemmshim_f32tc_3xtf32_kernel(const __grid_constant__ CUtensorMap tmA,
                           const __grid_constant__ CUtensorMap tmB, const Params p) {
  extern __shared__ unsigned char smem_raw[];
  /* Align the shared-space offset (not just the generic pointer) to 1024. */
  const uint32_t pad = (1024u - (smem_u32(smem_raw) & 1023u)) & 1023u;
  Smem &sm = *reinterpret_cast<Smem *>(smem_raw + pad);

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < Cfg::S; ++s) mbar_init(&sm.full[s], TmaSpread<LAY>::ARRIVALS);
#pragma unroll
    for (int q = 0; q < Cfg::P; ++q) {
      mbar_init(&sm.pfull[q], Cfg::SPLIT_THREADS);
      mbar_init(&sm.pempty[q], Cfg::CONSUMER_WARPS);
    }
    fence_mbarrier_init();
    fence_proxy_async_smem();
    prefetch_tensormap(&tmA);
    prefetch_tensormap(&tmB);
  }
  __syncthreads();

  const int wg = warpgroup_index();
  if (wg == 0) {
    /* ---- split warpgroup: TMA issue (thread 0) and the B split (all) ---- */
    setmaxnreg_dec<Cfg::SPLIT_REGS>();
    int m0, n0;
    tile_origin(p, m0, n0);
    const int KT = p.k / Cfg::BK; /* K-steps */
    const int n = (int)tid_x(); /* the B row this thread splits */
    const int sw = n & 7;      /* its 128-byte swizzle phase */
    if constexpr (TmaSpread<LAY>::ON) {
      if ((n & 31) == 0) load_stage_part<LAY>(sm, 0, 0, m0, n0, &tmA, &tmB, n >> 5);
    } else if (n == 0) {
      mbar_arrive_expect_tx(&sm.full[0], Cfg::STAGE_TX);
      load_stage<LAY>(sm, 0, 0, m0, n0, &tmA, &tmB);
    }
#pragma unroll 1
    for (int t = 0; t < KT; ++t) {
      const int s = t % Cfg::S, q = t % Cfg::P;
      /* Part set q was last used by step t - P; its release also frees TMA
       * slot (t + 1) % S (S == P + 1), whose last step was t - P too. */
      mbar_wait(&sm.pempty[q], ((t / Cfg::P) & 1u) ^ 1u, TAG_PEMPTY);
      if constexpr (TmaSpread<LAY>::ON) {
        if ((n & 31) == 0 && t + 1 < KT)
          load_stage_part<LAY>(sm, (t + 1) % Cfg::S, t + 1, m0, n0, &tmA, &tmB, n >> 5);
      } else if (n == 0 && t + 1 < KT) {
        const int s1 = (t + 1) % Cfg::S;
        mbar_arrive_expect_tx(&sm.full[s1], Cfg::STAGE_TX);
        load_stage<LAY>(sm, s1, t + 1, m0, n0, &tmA, &tmB);
      }
      mbar_wait(&sm.full[s], (t / Cfg::S) & 1u, TAG_FULL_SPLIT);

      if constexpr (LAY != LAY_TN) {
        /* Not in place: big -> bc[q], small -> bs[q]; after the reduction
         * (every split thread has read the raw tile) cross over b[s] when
         * the tile has a non-tame value. */
        uint32_t wild;
        if constexpr (Lay<LAY>::SPLIT_NM)
          wild = split_nm(sm.b[s], sm.bc[q], sm.bs[q], n);
        else
          wild = split_row_lay<LAY>(sm.b[s], sm.bc[q], sm.bs[q], n);
        wild = bar_red_or(4, Cfg::SPLIT_THREADS, wild);
        if (wild) cross_row_lay(sm.bc[q], sm.b[s], n);
        if (n == 0) sm.pwild[q] = wild;
      } else {
      float *brow = sm.b[s] + n * Cfg::BK; /* raw in, big out (in place) */
      float *srow = sm.bs[q] + n * Cfg::BK;
      float *crow = sm.bc[q] + n * Cfg::BK;
      uint32_t wild = 0; /* this row has a value that is not tame */
      /* Speculative: split every value with split_fast and store, while a
       * tree of max.NaN decides (off the critical path) whether the half-row
       * was tame; if not (rare), split it again exactly (split_words) and
       * overwrite the same addresses (same thread: program order). */
#pragma unroll 1
      for (int h = 0; h < 2; ++h) {
        float4 r[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) r[e] = ld_shared_f4(brow + (((2 * e + h) ^ sw) << 2));
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          uint4 vb, vs;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const Words w = split_fast(f4_at(r[e], j));
            u4_set(vb, e, w.big);
            u4_set(vs, e, w.small);
          }
          const int off = ((2 * j + h) ^ sw) << 2;
          st_shared_u4(brow + off, vb);
          st_shared_u4(srow + off, vs);
        }
        float m4[4];
#pragma unroll
        for (int e = 0; e < 4; ++e)
          m4[e] = max_abs_nan(max_abs_nan(fabsf(r[e].x), r[e].y),
                              max_abs_nan(fabsf(r[e].z), r[e].w));
        if (!tame(max_abs_nan(max_abs_nan(m4[0], m4[1]), max_abs_nan(m4[2], m4[3])))) {
          wild = 1;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            uint4 vb, vs;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const Words w = split_words(f4_at(r[e], j));
              u4_set(vb, e, w.big);
              u4_set(vs, e, w.small);
            }
            const int off = ((2 * j + h) ^ sw) << 2;
            st_shared_u4(brow + off, vb);
            st_shared_u4(srow + off, vs);
          }
        }
      }
      /* Cross B equals big B unless some value of the tile is non-finite:
       * the consumers then read big B in its place, and the cross tile is
       * written only for a tile with a value that is not tame (rare), from
       * big (cross = big where finite, 0 where Inf/NaN: big is non-finite
       * exactly for non-finite x). */
      wild = bar_red_or(4, Cfg::SPLIT_THREADS, wild);
      if (wild) {
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          uint4 v = *reinterpret_cast<const uint4 *>(brow + 4 * c);
          v.x = (v.x & 0x7f800000u) == 0x7f800000u ? 0u : v.x;
          v.y = (v.y & 0x7f800000u) == 0x7f800000u ? 0u : v.y;
          v.z = (v.z & 0x7f800000u) == 0x7f800000u ? 0u : v.z;
          v.w = (v.w & 0x7f800000u) == 0x7f800000u ? 0u : v.w;
          st_shared_u4(crow + 4 * c, v);
        }
      }
      if (n == 0) sm.pwild[q] = wild;
      }
      /* Generic-proxy writes, read next by wgmma (async proxy). */
      fence_proxy_async_smem();
      mbar_arrive(&sm.pfull[q]);
    }
    return;
  }

  /* ---- consumer warpgroups ---- */
  setmaxnreg_inc<Cfg::CONSUMER_REGS>();
  int m0, n0;
  tile_origin(p, m0, n0);
  const int KT = p.k / Cfg::BK; /* K-steps */
  const int tid = (int)tid_x();
  const int cw = (tid >> 7) - 1; /* which 64 rows of the block tile */
  const int t = tid & 127;       /* thread in the warpgroup */
  const int warp = t >> 5, lane = t & 31;
  const int g = lane >> 2, tq = lane & 3;
  /* A fragment rows r0 = cw*64 + warp*16 + g and r0 + 8 (both have
   * swizzle phase g); raw chunks 2tq and 2tq + 1 hold k = 8tq .. 8tq + 7. */
  const int r0 = cw * Cfg::WG_M + warp * 16 + g;
  const int oa0 = r0 * Cfg::BK + (((2 * tq) ^ g) << 2);
  const int oa1 = r0 * Cfg::BK + (((2 * tq + 1) ^ g) << 2);
  const int ob0 = oa0 + 8 * Cfg::BK, ob1 = oa1 + 8 * Cfg::BK;

  float acc[Cfg::ACC], chk[Cfg::ACC];
#pragma unroll
  for (int i = 0; i < Cfg::ACC; ++i) {
    acc[i] = 0.f;
    chk[i] = 0.f;
  }

  /* Outer loop over K-chunks, inner (unrolled) over the chunk's K-steps:
   * the loop's back edge always follows a chunk drain (wgmma_wait<0>), so
   * no wgmma is in flight across it. */
  const int n_chunks = (KT + Cfg::CHUNK_STEPS - 1) / Cfg::CHUNK_STEPS;
  int s = 0, q = 0, prev_q = 0;   /* ring slots of this step and the last one */
  uint32_t s_ph = 0, q_ph = 0;    /* their barrier phases */
#pragma unroll 1
  for (int ch = 0; ch < n_chunks; ++ch) {
#pragma unroll
    for (int cs = 0; cs < Cfg::CHUNK_STEPS; ++cs) {
      if (cs > 0 && ch * Cfg::CHUNK_STEPS + cs >= KT) break; /* last, shorter chunk */

      mbar_wait(&sm.full[s], s_ph, TAG_FULL_CONS);
      /* x[0..3]: row r0, k = 8tq + j; x[4..7]: row r0, k = 8tq + 4 + j;
       * x[8..11], x[12..15]: the same for row r0 + 8. */
      float x[16];
      if constexpr (Lay<LAY>::A_MN)
        load_a_mn(sm.a[s], r0, tq, x);
      else
      {
        const float *at = sm.a[s];
        const float4 v0 = ld_shared_f4(at + oa0), v1 = ld_shared_f4(at + oa1);
        const float4 v2 = ld_shared_f4(at + ob0), v3 = ld_shared_f4(at + ob1);
        x[0] = v0.x; x[1] = v0.y; x[2] = v0.z; x[3] = v0.w;
        x[4] = v1.x; x[5] = v1.y; x[6] = v1.z; x[7] = v1.w;
        x[8] = v2.x; x[9] = v2.y; x[10] = v2.z; x[11] = v2.w;
        x[12] = v3.x; x[13] = v3.y; x[14] = v3.z; x[15] = v3.w;
      }
      /* The whole warp takes the fast split when all its A values of this
       * step are tame (warp-uniform: no divergence inside the substeps). */
      constexpr int lay_bit = LAY;
      float mx = 0.f;
      if constexpr ((kConsumerTree >> lay_bit) & 1) {
        float m4[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          m4[i] = max_abs4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        mx = max_abs4(m4[0], m4[1], m4[2], m4[3]);
      } else {
#pragma unroll
        for (int i = 0; i < 16; ++i) mx = max_abs_nan(mx, x[i]);
      }
      const bool fast = __all_sync(0xffffffffu, tame(mx));
      mbar_wait(&sm.pfull[q], q_ph, TAG_PFULL);
      /* The three B descriptors (kept inline: a helper returning them
       * changed the generated code). */
      const uint64_t d_big = smem_desc_sw128_kmajor(LAY == LAY_TN ? sm.b[s] : sm.bc[q]);
      const uint64_t d_sml = smem_desc_sw128_kmajor(sm.bs[q]);
      const uint64_t d_crs =
          sm.pwild[q] ? smem_desc_sw128_kmajor(LAY == LAY_TN ? sm.bc[q] : sm.b[s]) : d_big;

      uint32_t big_keep[Cfg::KSUB][4];
#pragma unroll
      for (int j = 0; j < Cfg::KSUB; ++j) {
        /* Bound the A-part registers in flight: at most INFLIGHT (2) groups
         * stay pending, so at most INFLIGHT + 1 register sets (12 words
         * each) are live; the group of substep j one step back is older
         * than those and has retired (ptxas keeps in-flight A registers
         * allocated until their group retires: no reuse hazard). */
        wgmma_wait<Cfg::INFLIGHT>();
        /* At the last substep that wait also completed the previous step
         * (INFLIGHT < KSUB);
         * inside a chunk nothing else released it: release its part set
         * (and so its TMA stage) now. */
        if (j == Cfg::KSUB - 1 && cs > 0 && lane == 0)
          mbar_arrive(&sm.pempty[prev_q]);
        reg_pin4(x[j], x[4 + j], x[8 + j], x[12 + j]);
        /* wgmma A fragment of substep j: a0 (g, tq), a1 (g+8, tq), a2 (g, tq+4),
         * a3 (g+8, tq+4) in the substep's K order, i.e. raw k 8tq + j (a0,
         * a1) and 8tq + 4 + j (a2, a3). */
        Words w0, w1, w2, w3;
        if (fast) {
          w0 = split_fast(x[j]);
          w1 = split_fast(x[8 + j]);
          w2 = split_fast(x[4 + j]);
          w3 = split_fast(x[12 + j]);
        } else {
          w0 = split_words(x[j]);
          w1 = split_words(x[8 + j]);
          w2 = split_words(x[4 + j]);
          w3 = split_words(x[12 + j]);
        }
        uint32_t a_big[4] = {w0.big, w1.big, w2.big, w3.big};
        uint32_t a_sml[4] = {w0.small, w1.small, w2.small, w3.small};
        uint32_t a_crs[4] = {w0.cross, w1.cross, w2.cross, w3.cross};
        /* All 12 words exist before the fence (else the compiler sinks some
         * of them between the wgmmas and ptxas must inject more fences). */
        reg_pin4u(a_big);
        reg_pin4u(a_sml);
        reg_pin4u(a_crs);
        wgmma_fence();
        /* cross_a x small_b, small_a x cross_b, big_a x big_b; the chunk's
         * first wgmma overwrites the chunk accumulator (scale-d 0). */
        wgmma_m64n128k8_tf32_rs(chk, a_crs, smem_desc_advance(d_sml, 32 * j),
                                (cs == 0 && j == 0) ? 0 : 1);
        wgmma_m64n128k8_tf32_rs(chk, a_sml, smem_desc_advance(d_crs, 32 * j), 1);
        /* big_a x big_b of every substep after all the corrections (the
         * kernel's doc says why): keep the big words until then. */
#pragma unroll
        for (int r = 0; r < 4; ++r) big_keep[j][r] = a_big[r];
        wgmma_commit();
      }
#pragma unroll
      for (int j = 0; j < Cfg::KSUB; ++j)
        wgmma_m64n128k8_tf32_rs(chk, big_keep[j], smem_desc_advance(d_big, 32 * j), 1);
      wgmma_commit();
      prev_q = q;
      if (++s == Cfg::S) {
        s = 0;
        s_ph ^= 1u;
      }
      if (++q == Cfg::P) {
        q = 0;
        q_ph ^= 1u;
      }
    }
    /* Chunk end: drain, release the last step's part set (and TMA stage),
     * add the chunk to the main accumulator (FP32, round to nearest). */
    wgmma_wait<0>();
    wgmma_reg_fence(chk);
    if (lane == 0) mbar_arrive(&sm.pempty[prev_q]);
#pragma unroll
    for (int i = 0; i < Cfg::ACC; ++i) acc[i] += chk[i];
  }


  /* ---- epilogue ---- */
  /* Both consumers are past their last wgmma (the last step ends a chunk:
   * waited), every TMA load issued was waited for, and the split group's
   * last writes were consumed: the TMA ring may be overwritten. */
  named_barrier_sync(1, 128 * Cfg::CONSUMERS);
  float *epi = reinterpret_cast<float *>(&sm) + (size_t)cw * Cfg::BN * Cfg::EPI_LD;
  {
    /* wgmma D fragment: value v of warp w, lane l is row w*16 + l/4 + 8*((v/2)%2),
     * column (v/4)*8 + (l%4)*2 + v%2. Stored column-major, pitch EPI_LD. */
    const int rr = warp * 16 + g;
    const int c0 = tq * 2;
#pragma unroll
    for (int v = 0; v < Cfg::ACC; ++v) {
      const int row = rr + 8 * ((v >> 1) & 1);
      const int col = (v >> 2) * 8 + c0 + (v & 1);
      epi[col * Cfg::EPI_LD + row] = acc[v];
    }
  }
  named_barrier_sync(2 + cw, 128);

  const float alpha = p.alpha_dev ? *p.alpha_dev : p.alpha;
  const float beta = p.beta_dev ? *p.beta_dev : p.beta;
  constexpr int RUNS = Cfg::WG_M / 4;       /* runs of 4 rows per column: 16 */
  constexpr int COLS_PER_PASS = 128 / RUNS; /* 8 */
  const int run = t % RUNS;
  const int64_t row_g = (int64_t)m0 + cw * Cfg::WG_M + run * 4;
  float4 bias4 = make_float4(0.f, 0.f, 0.f, 0.f);
  if (p.bias) bias4 = *reinterpret_cast<const float4 *>(p.bias + row_g);
#pragma unroll 4
  for (int pass = 0; pass < Cfg::BN / COLS_PER_PASS; ++pass) {
    const int col = pass * COLS_PER_PASS + t / RUNS;
    const float4 a4 = ld_shared_f4(epi + col * Cfg::EPI_LD + run * 4);
    float4 v = make_float4(alpha * a4.x, alpha * a4.y, alpha * a4.z, alpha * a4.w);
    const int64_t col_g = (int64_t)n0 + col;
    if (beta != 0.f) {
      const float4 c = *reinterpret_cast<const float4 *>(p.C + col_g * p.ldc + row_g);
      v.x = fmaf(beta, c.x, v.x);
      v.y = fmaf(beta, c.y, v.y);
      v.z = fmaf(beta, c.z, v.z);
      v.w = fmaf(beta, c.w, v.w);
    }
    v.x += bias4.x;
    v.y += bias4.y;
    v.z += bias4.z;
    v.w += bias4.w;
    *reinterpret_cast<float4 *>(p.D + col_g * p.ldd + row_g) = v;
  }
}

/* ------------------------------------------------------------------ host */

/* aligned16() and get_encode(): kernels/sm90_host.h */

/* A K-major FP32 operand: `rows` rows of `k` elements, `ld` elements apart,
 * loaded as (BK x box_rows) boxes with the 128-byte swizzle (a box row of
 * 32 floats is exactly one swizzle span). */
static int encode_kmajor(PFN_cuTensorMapEncodeTiled_v12000 enc, CUtensorMap *map, const void *ptr,
                         int64_t k, int64_t rows, int64_t ld, uint32_t box_rows) {
  const cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(float)};
  const cuuint32_t box[2] = {(cuuint32_t)Cfg::BK, box_rows};
  const cuuint32_t estrides[2] = {1, 1};
  const CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<void *>(ptr), dims,
                         strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

/* An MN-major FP32 operand (A stored m x k, B stored n x k): `rows`
 * contiguous elements (m or n) per stored column, k columns `ld` elements
 * apart, loaded as (32 x 32) boxes with the 128-byte swizzle (a box row of
 * 32 floats is one swizzle span), four per block tile (mn_box). */
static int encode_mnmajor(PFN_cuTensorMapEncodeTiled_v12000 enc, CUtensorMap *map,
                          const void *ptr, int64_t rows, int64_t k, int64_t ld) {
  const cuuint64_t dims[2] = {(cuuint64_t)rows, (cuuint64_t)k};
  const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(float)};
  const cuuint32_t box[2] = {(cuuint32_t)MN_BOX, (cuuint32_t)Cfg::BK};
  const cuuint32_t estrides[2] = {1, 1};
  const CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<void *>(ptr), dims,
                         strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

/* cudaFuncSetAttribute once per context: the context each device's
 * attributes were last set in (0: none yet). Not a stream operation, so
 * safe while a stream captures. */
static constexpr int kMaxDevices = 64;
static std::atomic<uint64_t> attr_ctx[kMaxDevices];

static cudaError_t set_smem_attr(void (*kernel)(CUtensorMap, CUtensorMap, Params)) {
  const cudaError_t e =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes);
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e;
}

static cudaError_t ensure_attributes(int dev, uint64_t ctx_id) {
  const bool cacheable = ctx_id != 0 && dev >= 0 && dev < kMaxDevices;
  if (cacheable && attr_ctx[dev].load(std::memory_order_acquire) == ctx_id) return cudaSuccess;
  void (*const kernels[4])(CUtensorMap, CUtensorMap, Params) = {
      gemmshim_f32tc_3xtf32_kernel<LAY_TN>, gemmshim_f32tc_3xtf32_kernel<LAY_NN>,
      gemmshim_f32tc_3xtf32_kernel<LAY_NT>, gemmshim_f32tc_3xtf32_kernel<LAY_TT>};
  for (int i = 0; i < 4; ++i) {
    const cudaError_t e = set_smem_attr(kernels[i]);
    if (e != cudaSuccess) return e;
  }
  if (cacheable) attr_ctx[dev].store(ctx_id, std::memory_order_release);
  return cudaSuccess;
}

}  // namespace gs_f32_3xtf32

using namespace gs_f32_3xtf32;

extern "C" int gs_gemm_f32_3xtf32_preload(void) {
  void (*const kernels[4])(CUtensorMap, CUtensorMap, Params) = {
      gemmshim_f32tc_3xtf32_kernel<LAY_TN>, gemmshim_f32tc_3xtf32_kernel<LAY_NN>,
      gemmshim_f32tc_3xtf32_kernel<LAY_NT>, gemmshim_f32tc_3xtf32_kernel<LAY_TT>};
  for (auto k : kernels) {
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, k) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
  }
  return 0;
}

extern "C" int gs_gemm_f32_3xtf32_supports(int64_t m, int64_t n, int64_t k, int trans_a,
                                           int trans_b, const void *A, int64_t lda,
                                           const void *B, int64_t ldb, const void *C,
                                           int64_t ldc, int check_c) {
  const int64_t lim = (int64_t)1 << 31;
  const int64_t ldal = GS_GEMM_F32_3XTF32_ALIGN_LD;
  if (m <= 0 || n <= 0 || k <= 0 || m >= lim || n >= lim || k >= lim) return 0;
  if (m % GS_GEMM_F32_3XTF32_ALIGN_M || n % GS_GEMM_F32_3XTF32_ALIGN_N ||
      k % GS_GEMM_F32_3XTF32_ALIGN_K)
    return 0;
  /* TN, NN, NT, TT: A stored k x m (trans_a 1) or m x k (0), B stored
   * k x n (trans_b 0) or n x k (1); the stored rows bound the leading dims. */
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1)) return 0;
  if ((m / Cfg::BM) * (n / Cfg::BN) >= lim) return 0; /* 1-D grid */
  if (!A || !B || !aligned16(A) || !aligned16(B)) return 0;
  if (lda % ldal || ldb % ldal || lda < (trans_a ? k : m) || ldb < (trans_b ? n : k)) return 0;
  if (lda >= ((int64_t)1 << 38) || ldb >= ((int64_t)1 << 38)) return 0; /* TMA stride < 2^40 B */
  if (check_c) {
    if (!C || !aligned16(C) || ldc % ldal || ldc < m) return 0;
  }
  return 1;
}

extern "C" gs_kstatus gs_gemm_f32_3xtf32_launch(const gs_kernel_args *a) {
  if (!a) return GS_K_UNSUPPORTED;
  const int check_c = a->scalars_on_device ? 1 : (a->beta != 0.f);
  if (!gs_gemm_f32_3xtf32_supports(a->m, a->n, a->k, a->trans_a, a->trans_b, a->A, a->lda, a->B,
                                   a->ldb, a->C, a->ldc, check_c))
    return GS_K_UNSUPPORTED;
  if (!a->D || !aligned16(a->D) || a->ldd % GS_GEMM_F32_3XTF32_ALIGN_LD || a->ldd < a->m)
    return GS_K_UNSUPPORTED;
  if (a->bias && !aligned16(a->bias)) return GS_K_UNSUPPORTED;
  if (a->scalars_on_device && (!a->alpha_dev || !a->beta_dev)) return GS_K_UNSUPPORTED;
  /* D may alias C only exactly (same start, same ld). */
  if (check_c && a->C == a->D && a->ldc != a->ldd) return GS_K_UNSUPPORTED;

  PFN_cuTensorMapEncodeTiled_v12000 enc = get_encode();
  if (!enc) return GS_K_LAUNCH_FAILED;
  CUtensorMap tmA, tmB;
  /* supports() checked: trans_a, trans_b are 0 or 1 */
  const int lay = a->trans_a ? (a->trans_b ? LAY_TT : LAY_TN) : (a->trans_b ? LAY_NT : LAY_NN);
  if (!(a->trans_a ? encode_kmajor(enc, &tmA, a->A, a->k, a->m, a->lda, Cfg::BM)
                   : encode_mnmajor(enc, &tmA, a->A, a->m, a->k, a->lda)) ||
      !(a->trans_b ? encode_mnmajor(enc, &tmB, a->B, a->n, a->k, a->ldb)
                   : encode_kmajor(enc, &tmB, a->B, a->k, a->n, a->ldb, Cfg::BN)))
    return GS_K_LAUNCH_FAILED;

  Params p;
  p.m = (int)a->m;
  p.n = (int)a->n;
  p.k = (int)a->k;
  p.C = static_cast<const float *>(a->C);
  p.D = static_cast<float *>(a->D);
  p.ldc = a->ldc;
  p.ldd = a->ldd;
  p.alpha = a->alpha;
  p.beta = a->beta;
  p.alpha_dev = a->scalars_on_device ? a->alpha_dev : nullptr;
  p.beta_dev = a->scalars_on_device ? a->beta_dev : nullptr;
  p.bias = static_cast<const float *>(a->bias);

  if (ensure_attributes(a->device, a->ctx_id) != cudaSuccess) return GS_K_LAUNCH_FAILED;

  const unsigned grid = (unsigned)((a->m / Cfg::BM) * (a->n / Cfg::BN));
  gs_launch_begin();
  if (lay == LAY_TN)
    gemmshim_f32tc_3xtf32_kernel<LAY_TN><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
  else if (lay == LAY_NN)
    gemmshim_f32tc_3xtf32_kernel<LAY_NN><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
  else if (lay == LAY_NT)
    gemmshim_f32tc_3xtf32_kernel<LAY_NT><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
  else
    gemmshim_f32tc_3xtf32_kernel<LAY_TT><<<grid, Cfg::THREADS, kSmemBytes, a->stream>>>(tmA, tmB, p);
  return gs_launch_end(0);
}
